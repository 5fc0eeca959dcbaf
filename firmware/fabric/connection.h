// The worker's side of the fabric (the TT-Fabric spec's TT-session): a
// connection to one lane of the router of the port toward a destination,
// from the host fabric builder (abi::FabricWorkerConnection in the worker's
// L1). Sends are asynchronous: a send returns once the packet is in the
// router's lane; completion is seen at the destination, through the atomic
// increments the packets carry. A write larger than a slot is cut into
// packets; only the last carries the increment, and since one lane's packets
// take one path and are executed in order, it lands after all the bytes.
#pragma once
#include <stdint.h>

#include "rt/address.h"

#include "weft/abi/fabric_router.h"

namespace weft::fabric {

// Where a packet goes: `hops` cables away, the first on this connection's
// side (2D: the later ones in `route`, see route_to); a multicast is
// delivered by `count` chips in a row from there.
struct Route {
    abi::FabricNodeId dst;
    uint8_t hops = 1;
    uint8_t count = 1;  // > 1: multicast
    uint8_t ttl = abi::kFabricDefaultTtl;
    uint8_t core = 0xff;  // the destination core, for reports (0xff: DRAM)
    uint32_t route = 0;   // 2D: the directions after the first cable
};

class Connection {
public:
    Connection() = default;
    explicit Connection(const abi::FabricWorkerConnection& c) : c_(&c) {}

    // 2D: the route to `chip` of this mesh from the chip's L0 table (the
    // router's copy, read over the NoC). It leaves through the router facing
    // `*first` (abi::FabricCompass): send it on that router's connection.
    // hops 0: `chip` is this one.
    Route route_to(uint16_t chip, uint8_t* first) const;

    // The largest payload one packet carries.
    uint32_t max_payload() const { return c_->slot_size - abi::kFabricHeaderBytes; }
    // Packets that go without waiting for the router (for workers written
    // as poll() state machines, which must not block).
    uint32_t room();
    // Slots of its lane: room() is this once every packet sent was freed.
    uint32_t slots() const { return c_->lane.slots; }
    // One packet: `h` as the sender wants it (payload_bytes <= max_payload()),
    // its payload read from local `payload`. Waits for a free slot.
    void send(abi::FabricPacketHeader h, uint64_t payload);

    // `bytes` from local `src` to `dst` at the route's chips; then, if `sem`,
    // `inc` added to it there.
    void write(const Route& to, uint64_t dst, uint64_t src, uint32_t bytes, uint64_t sem = 0, uint32_t inc = 0);
    void atomic_inc(const Route& to, uint64_t sem, uint32_t inc);
    void inline_write(const Route& to, uint64_t dst, uint32_t value);
    // `parts` (1-3) runs of part_bytes from `src`, one to each of dst[]: one packet.
    void scatter_write(const Route& to, const uint64_t* dst, uint32_t parts, uint64_t src, uint32_t part_bytes);

    // Joins the lane where its counters stand (send opens it if this was not
    // called); the previous connection on the lane must have closed.
    void open();
    // Waits until the router has sent every packet of this connection, so its
    // slots and staged headers are free and the worker may end.
    void close();
    uint32_t packets() const { return sent_; }

private:
    abi::FabricPacketHeader header(const Route& to, uint8_t command) const;

    const abi::FabricWorkerConnection* c_ = nullptr;
    uint32_t sent_ = 0;
    bool open_ = false;
};

// A kernel's connections every way out of its chip, from the addresses the
// host's FabricBuilder::connect_every_way gave it (0: no router that way).
class Connections {
public:
    explicit Connections(const uint64_t (&addresses)[4]) : addresses_(addresses) {
        for (uint32_t d = 0; d < 4; ++d)
            if (addresses[d]) ways_[d] = Connection(*pointer_to<const abi::FabricWorkerConnection>(addresses[d]));
    }
    bool has(uint32_t way) const { return way < 4 && addresses_[way] != 0; }
    Connection& operator[](uint32_t way) { return ways_[way]; }
    // Closes every connection there is.
    void close() {
        for (uint32_t d = 0; d < 4; ++d)
            if (addresses_[d]) ways_[d].close();
    }

private:
    const uint64_t (&addresses_)[4];
    Connection ways_[4];
};

}  // namespace weft::fabric
