// What a fabric router does with a packet its receiver channel took off the
// cable: execute it on this chip, pass it on (1D: to the router of the
// opposite port; 2D: to the router of the direction its route names next),
// both (a multicast in its range), or drop it (its TTL ran out). The same decision the router firmware takes on RISC-V,
// that the host tests check, and that a host model of many chips runs: pure functions of the header, which they update
// for the next hop.
#pragma once
#include <stdint.h>

#include "weft/abi/fabric.h"
#include "weft/abi/fabric_router.h"

namespace weft::fabric {

struct Decision {
    bool deliver = false;  // execute the packet's NoC command on this chip
    bool forward = false;  // into the opposite router's pass-through sender channel
    bool expired = false;  // dropped: its TTL was 0 (post a dropped-packet event)
    bool lost = false;     // dropped: its route ended short of its destination and no table routes it on
    uint8_t next = 0;      // forwarding: 1D 0; 2D the abi::FabricCompass of the router it goes to
};

// Where the receiving router stands: 1D, or 2D with its cable leaving the
// chip toward `compass` (so packets it receives travel the opposite way).
// With `table` (a fabric of many meshes) the chip's routing tables: a packet
// whose route ends here but whose destination is another chip is routed on.
struct Hop {
    uint32_t dims = 1;
    uint32_t compass = 0;
    abi::FabricNodeId self{};
    const abi::FabricRouteTable* table = nullptr;
};

// Many meshes: the packet's source route ended at `at.self`, short of its
// destination (it entered a mesh at an exit node): the next route, from this
// chip's L0 table (its destination is in this mesh) or L1 table (the exit
// toward its destination's mesh), as a sender would write it.
inline Decision route_on(abi::FabricPacketHeader& h, const Hop& at) {
    Decision d;
    if (h.ttl == 0) {
        d.expired = true;
        return d;
    }
    --h.ttl;
    const abi::FabricRouteEntry e = abi::fabric_route_entry(*at.table, at.self.mesh, h.dst);
    if (e.hops == 0) {
        d.lost = true;
        return d;
    }
    h.hops = e.hops;
    h.route = e.route;
    d.forward = true;
    d.next = e.first;
    return d;
}

// Called once per reception, with the header as it came off the cable; on
// return the header is what the next router must see. A 2D multicast runs
// on along a row or column: straight on, chip after chip.
//
// The TTL counts receptions, except with tables (many meshes), where it
// counts the routes a router gives the packet (route_on): a source route is
// finite, so only a new route can send a packet round a loop, and a packet
// crossing a grid of hundreds of meshes crosses more cables than 8 bits count.
inline Decision on_receive(abi::FabricPacketHeader& h, Hop at = {}) {
    Decision d;
    if (!at.table) {
        if (h.ttl == 0) {
            d.expired = true;
            return d;
        }
        --h.ttl;
    }
    const uint8_t straight = at.dims == 2 ? static_cast<uint8_t>(at.compass ^ 2) : 0;  // N<->S, E<->W
    if (h.hops > 1) {  // not there yet: everything passes on
        --h.hops;
        d.forward = true;
        d.next = straight;
        if (at.dims == 2) {
            d.next = h.route & 3;
            h.route >>= 2;
        }
        return d;
    }
    const bool here = h.dst.mesh == at.self.mesh && h.dst.chip == at.self.chip;
    if (at.table && h.send_type == abi::kFabricUnicast && !here) return route_on(h, at);
    d.deliver = true;
    if (h.send_type == abi::kFabricMulticast && h.mcast_count > 1) {
        --h.mcast_count;  // the next chip is the next in the range: hops stays 1
        d.forward = true;
        d.next = straight;
    }
    return d;
}

// On a ring, a packet that crosses the dateline (the cable from the last
// chip of the ring order back to the first, in either direction) moves to the
// second virtual channel for the rest of its way: then no cycle of full
// buffers can close around the ring, so traffic in both directions cannot
// deadlock (the TT-Fabric spec's dateline; Dally and Seitz's argument).
inline void cross_cable(abi::FabricPacketHeader& h, bool dateline) {
    if (dateline) h.vc = 1;
}

// The VC a 2D packet on `vc` goes on in the router of direction `next`, from
// the router of `compass` (FabricRouterConfig::flags `flags`). A packet that
// turns starts the new dimension on VC 0: each dimension's rings have their
// own dateline. Between meshes VC 1 is instead the class of packets that
// entered from another mesh, kept to the end (the spec's hierarchical VCs);
// an inter-mesh cable is such a fabric's "dateline". The escape class
// (VC 1 on one mesh, VC 2 between meshes or on a torus) is kept to the end too.
constexpr uint32_t vc_after_turn(uint32_t vc, uint32_t next, uint32_t compass, uint32_t flags) {
    if (flags & abi::kFabricMeshClasses) return vc;
    if ((flags & abi::kFabricEscapeVc) && vc == abi::fabric_escape_vc(flags)) return vc;
    return abi::fabric_same_dimension(next, compass) ? vc : 0;
}

// The VC a packet on `vc` takes when the router of a dead cable gives it a
// new route round it: the escape class, if the fabric has one (it keeps it
// to the end of its mesh, and into the next meshes if its router was told
// to: FabricPacketHeader::keeps_escape);
// else between meshes its class's (a packet never leaves it for a lower
// one); else VC 0, as a fresh packet.
constexpr uint32_t vc_round_dead_cable(uint32_t vc, uint32_t flags) {
    if (flags & abi::kFabricEscapeVc) return abi::fabric_escape_vc(flags);
    return (flags & abi::kFabricMeshClasses) ? vc : 0;
}

}  // namespace weft::fabric
