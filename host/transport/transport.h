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
};

}  // namespace weft::transport
