// The EDM link benchmark (issue: ERISC data mover): packet sizes 1-16 KiB x
// channels 1, 2, 4, 8, one and both directions, on one link of a pair, each
// beside the bridge's raw link copy at the same transfer size, measured in
// the same run. Prints the table and records it in bench/results/.
#pragma once
#include <functional>

#include "driver/cluster.h"

namespace weft {

// One cell of the table: GB/s of `channels` channels of `size`-byte packets.
double measure_edm_cell(Cluster& pair, uint32_t size, uint32_t channels, bool both, bool push);

void run_edm_bench(Cluster& pair, const std::function<double(uint32_t)>& raw_link_gbps);

}  // namespace weft
