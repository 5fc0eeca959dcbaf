// Goodput of one TT-link cable against its frame drop rate: what Go-Back-N
// leaves of the raw link rate when the wire loses frames, measured in the same
// run as the raw rate it is a ratio of.
#pragma once
#include "driver/cluster.h"

namespace weft {

// On `pair`'s link chip 0.E -> chip 1.W; leaves the link without faults.
void run_link_goodput_bench(Cluster& pair);

}  // namespace weft
