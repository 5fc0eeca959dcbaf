// The bridge's raw link throughput: `bytes` from chip 0's DRAM to its E
// neighbour's over one cable, one Ethernet command per `transfer` bytes, timed
// on the chip clock by the sending kernel. The yardstick every bench ratio uses.
#pragma once
#include <vector>

#include "common/error.h"
#include "driver/cluster.h"
#include "driver/platform_kernels.h"

namespace weft::bench {

inline double link_gbps(Cluster& c, uint32_t transfer, uint64_t bytes = 64ull << 20) {
    const BoardInfo& b = c.board();
    const uint32_t port = 1;  // E: chip 1's W in pair and ring8
    Launch l = kernels::eth_send(0, b.ports[port].core, port, b.dram.base, b.dram.base + bytes,
                                 static_cast<uint32_t>(bytes), transfer, 1, 0, 0);
    KernelResult r = c.run({l}, std::chrono::seconds(120))[0];
    if (r.return_code != 0) throw Error("eth_send failed");
    return double(bytes) / (double(r.ticks) / b.timebase_hz) / 1e9;
}

// The same on every chip's E port at once (a ring's links all busy, as in a
// ring collective, all sharing the host's cores): the mean per-link GB/s.
inline double all_links_gbps(Cluster& c, uint32_t transfer, uint64_t bytes = 64ull << 20) {
    const BoardInfo& b = c.board();
    const uint32_t port = 1;
    std::vector<Launch> ls;
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        ls.push_back(kernels::eth_send(chip, b.ports[port].core, port, b.dram.base, b.dram.base + bytes,
                                       static_cast<uint32_t>(bytes), transfer, 1, 0, 0));
    double sum = 0;
    for (const KernelResult& r : c.run(ls, std::chrono::seconds(300))) {
        if (r.return_code != 0) throw Error("eth_send failed (is every chip's E port cabled?)");
        sum += double(bytes) / (double(r.ticks) / b.timebase_hz) / 1e9;
    }
    return sum / double(ls.size());
}

}  // namespace weft::bench
