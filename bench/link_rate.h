// The bridge's raw link throughput: `bytes` from a chip's DRAM to its E
// neighbour's over one cable, one Ethernet command per `transfer` bytes, timed
// on the chip clock by the sending kernel. The yardstick every bench ratio uses.
#pragma once
#include <algorithm>
#include <numeric>
#include <vector>

#include "common/error.h"
#include "driver/cluster.h"
#include "driver/platform_kernels.h"

namespace weft::bench {

// GB/s per link with `senders` all sending `bytes` at once on their E port:
// each link's bytes over the time until the last of them is done, so links
// the emulator serves one after another are not counted as parallel.
inline double links_gbps(Cluster& c, const std::vector<uint32_t>& senders, uint32_t transfer, uint64_t bytes) {
    const BoardInfo& b = c.board();
    const uint32_t port = 1;  // E: the next chip's W in pair and ring8
    std::vector<Launch> ls;
    for (uint32_t chip : senders)
        ls.push_back(kernels::eth_send(b, chip, b.ports[port].core, port, b.dram.base, b.dram.base + bytes,
                                       static_cast<uint32_t>(bytes), transfer, 1, 0, 0));
    uint64_t slowest = 0;
    for (const KernelResult& r : c.run(ls, std::chrono::seconds(senders.size() > 1 ? 300 : 120))) {
        if (r.return_code != 0) throw Error("eth_send failed (is every sending chip's E port cabled?)");
        slowest = std::max(slowest, r.ticks);
    }
    return double(bytes) / (double(slowest) / b.timebase_hz) / 1e9;
}

// One link alone: chip 0 to chip 1.
inline double link_gbps(Cluster& c, uint32_t transfer, uint64_t bytes = 64ull << 20) {
    return links_gbps(c, {0}, transfer, bytes);
}

// Every chip's E port at once (a ring's links all busy, as in a ring
// collective, all sharing the host's cores).
inline double all_links_gbps(Cluster& c, uint32_t transfer, uint64_t bytes = 64ull << 20) {
    std::vector<uint32_t> all(c.size());
    std::iota(all.begin(), all.end(), 0u);
    return links_gbps(c, all, transfer, bytes);
}

}  // namespace weft::bench
