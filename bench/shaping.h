// Every cable of a cluster shaped alike, each direction at `gbps` with no
// added latency (0: unshaped): where the benches make the wires, not the
// host, the bottleneck.
#pragma once
#include "driver/cluster.h"

namespace weft::bench {

inline void shape_every_cable(Cluster& c, double gbps) {
    for (const LinkInfo& l : c.links()) c.set_fault(l.chip_a, l.port_a, {{"bandwidth_gbps", gbps}, {"latency_us", 0}});
}

}  // namespace weft::bench
