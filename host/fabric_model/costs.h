// What things cost in the fabric model's virtual time: a silicon-like chip
// and cable, so the model reports what the router firmware would reach on
// hardware rather than what the host running it can do. Every number is a
// parameter (weft-fabric-model --cable-gbps and the like); the defaults are
// Wormhole-like, from tt-metal's published measurements:
//  - a 100 Gb/s Ethernet cable moves 12.5 GB/s each way;
//  - a router moves at most ~2.12 M packets/s one way: it is busy 472 ns per
//    packet it sends or handles (router_packet_ns);
//  - one hop of a 1-flit packet takes ~0.76 us: the receiving router's delay
//    before the packet moves on (router_latency_ns), NoC commands into the
//    next router, the sending router's delay, and the cable (serialization
//    plus flight). A router's delay is shorter than its busy time: it
//    forwards a packet before it has finished the bookkeeping (credits,
//    counters) that occupies it.
#pragma once
#include <stdint.h>

namespace weft::fabric_model {

struct Costs {
    double cable_gbps = 12.5;          // bytes per ns, each direction of a cable
    uint64_t cable_latency_ns = 100;   // PHY, MAC and wire, one way, after the last byte leaves
    double noc_gbps = 32.0;            // one core's NoC DMA: 32 B per cycle at 1 GHz
    uint64_t noc_latency_ns = 60;      // a NoC command's flight, issue to landing
    uint64_t router_packet_ns = 472;   // a router's busy time per packet it sends or handles
    uint64_t router_latency_ns = 266;  // from a router's poll to its packet's commands starting
    uint64_t router_poll_ns = 20;      // a poll that moved only credits or freed slots
    uint64_t worker_packet_ns = 100;   // a worker's API call that writes one packet
    double math_gbps = 32.0;           // the math engine: result bytes per ns (as fast as the NoC copies them)

    uint64_t cable_ns(uint64_t bytes) const { return uint64_t(double(bytes) / cable_gbps + 0.5); }
    uint64_t noc_ns(uint64_t bytes) const { return noc_latency_ns + uint64_t(double(bytes) / noc_gbps + 0.5); }
    uint64_t math_ns(uint64_t bytes) const { return noc_latency_ns + uint64_t(double(bytes) / math_gbps + 0.5); }
};

}  // namespace weft::fabric_model
