// What a fabric router does with a packet its receiver channel took off the
// cable: execute it on this chip, pass it on (1D: to the router of the
// opposite port; 2D: to the router of the direction its route names next),
// both (a multicast in its range), or drop it (its TTL ran out). The same decision the router firmware takes on RISC-V,
// that the host tests check, and that a host model of many chips runs: pure functions of the header, which they update
// for the next hop.
#pragma once
#include <stdint.h>

#include "weft/abi/fabric.h"

namespace weft::fabric {

struct Decision {
    bool deliver = false;  // execute the packet's NoC command on this chip
    bool forward = false;  // into the opposite router's pass-through sender channel
    bool expired = false;  // dropped: its TTL was 0 (post a dropped-packet event)
    uint8_t next = 0;      // forwarding: 1D 0; 2D the abi::FabricCompass of the router it goes to
};

// Where the receiving router stands: 1D, or 2D with its cable leaving the
// chip toward `compass` (so packets it receives travel the opposite way).
struct Hop {
    uint32_t dims = 1;
    uint32_t compass = 0;
};

// Called once per reception, with the header as it came off the cable; on
// return the header is what the next router must see. A 2D multicast runs
// on along a row or column: straight on, chip after chip.
inline Decision on_receive(abi::FabricPacketHeader& h, Hop at = {}) {
    Decision d;
    if (h.ttl == 0) {
        d.expired = true;
        return d;
    }
    --h.ttl;
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

}  // namespace weft::fabric
