// The transport: how the collectives move a stream of messages from a worker
// core on one chip to a worker core on another, in the manner of NCCL's
// struct ncclTransport. The collectives (host/ccl) plan and lower an op
// against this interface alone; a transport decides which cores and cables a
// message crosses, places and writes its own configuration in the chips' L1,
// and names the kernels it needs running. The EDM (transport/edm/) is the
// first implementation, TT-Fabric's routers the next.
//
// Two halves, as an op uses them:
//  - Routing, asked while lowering: which hops between workers a message
//    makes (does a worker on an intermediate chip forward it, or does the
//    transport?), and the parallel ways across each hop (planes).
//  - Transport, asked while placing one op: can it connect these two ends,
//    add a stream, write its configuration, launch its kernels. A Transport
//    object serves one op; a stuck wait of its kernels is described by the
//    decoder it registers for its wait kind (driver/wait_decoders.h).
//  - Capabilities: what a transport does beyond streams, as an op of its own
//    (the fabric's multicast). An algorithm that needs one (its row in
//    host/ccl/algorithm_table.h) runs only over a transport that offers it,
//    which places that op through the capability's interface.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "driver/chip_writer.h"
#include "driver/cluster.h"
#include "transport/hop.h"
#include "transport/l1_allocator.h"
#include "weft/abi/channel.h"

namespace weft::transport {

class Routing {
public:
    virtual ~Routing() = default;
    virtual uint32_t chips() const = 0;
    // The hops a message from chip `from` to chip `to` makes between workers,
    // in order: each ends on a chip whose worker receives the message (and
    // sends it on, unless it is the last). Throws weft::Error naming both
    // chips when `to` cannot be reached.
    virtual const std::vector<Hop>& worker_hops(uint32_t from, uint32_t to) const = 0;
    // Every parallel way to make a hop between these two chips, by port (a
    // board's planes); empty when no single hop joins them.
    virtual const std::vector<Hop>& parallel(uint32_t from, uint32_t to) const = 0;
    // The hop that leaves `chip` at `port`.
    virtual const Hop& hop_at(uint32_t chip, uint32_t port) const = 0;
    // The most parallel ways any hop has.
    virtual uint32_t max_parallel() const = 0;
    // Which worker serves `port` of `chip`, as a port key: where many ports
    // share one way out (the fabric's virtual ports, one per peer, behind one
    // router), one sender and one receiver worker serve them all.
    virtual uint32_t worker_port(uint32_t chip, uint32_t port) const {
        (void)chip;
        return port;
    }
    // Cables a message crosses making `hop` (the fabric's routers may take it over several).
    virtual uint32_t cables_crossed(const Hop& hop) const {
        (void)hop;
        return 1;
    }
};

// A stream of messages across one hop: a sender worker on (chip, port) feeds
// it, a receiver worker on (peer_chip, peer_port) drains it.
struct StreamSpec {
    uint32_t chip = 0, port = 0, peer_chip = 0, peer_port = 0;
    uint32_t lane = 0;      // the lowering's lane on that hop (lanes.h)
    uint32_t messages = 0;  // each at most Transport::message_bytes()
    uint32_t sender_core = 0, receiver_core = 0;
};

// Where the two workers find their ends of a stream (their channel tables).
struct StreamEnds {
    abi::ChannelRef sender{}, receiver{};
};

// What a transport offers beyond streams (bits).
enum Capability : uint32_t {
    kCanMulticast = 1u << 0,  // Transport::multicast()
};
// The words for them in messages: "multicast".
std::string capability_names(uint32_t capabilities);

// The kinds of transport, by the name --transport takes, and what each
// offers: for naming the kind an algorithm needs before one is made.
struct TransportKind {
    const char* name;
    uint32_t capabilities;
};
const std::vector<TransportKind>& transport_kinds();

// One chip's part of a multicast: its block, if it sends one, lands at `dst`
// on every other chip of the transport (and on its own, a local copy); then
// the chip waits until `expect` blocks have landed on it.
struct MulticastPart {
    bool sends = false;
    uint64_t src = 0, dst = 0;
    uint32_t bytes = 0;
    uint32_t expect = 0;
};

// The transport delivers a block to every chip itself, no worker forwarding
// and no stream (the fabric's routers copy a multicast packet off at every
// chip of a run: tt-metal's fabric all-gather).
class Multicast {
public:
    // Part c is chip c's, one for every chip. Places the op (write() writes
    // it, launches() names its kernels); throws weft::Error naming what it
    // cannot do here.
    virtual void add_multicast(const std::vector<MulticastPart>& parts) = 0;

protected:
    ~Multicast() = default;  // owned by its transport
};

class Transport : public Routing {
public:
    virtual std::string name() const = 0;
    // The largest message; a stream of B bytes is ceil(B / message_bytes()) messages.
    virtual uint32_t message_bytes() const = 0;
    // "" if the stream can be carried, else why not (naming its ends).
    virtual std::string cannot_connect(const StreamSpec& s) const = 0;
    // Places the stream's buffers and connection descriptors (in the L1 the
    // transport was given) and returns its ends. Throws weft::Error naming
    // what did not fit.
    virtual StreamEnds add_stream(const StreamSpec& s) = 0;
    // Writes every configuration and clears every semaphore it placed.
    virtual void write(ChipWriter& memory) const = 0;
    // The kernels that must run beside the workers for the op (none for a
    // transport whose engines are resident).
    virtual std::vector<Launch> launches() const = 0;
    // Its multicast if it offers one (kCanMulticast), else nullptr.
    virtual Multicast* multicast() { return nullptr; }
    // Capability bits, from the interfaces it offers.
    uint32_t capabilities() { return multicast() ? uint32_t(kCanMulticast) : 0u; }
};

}  // namespace weft::transport
