#include "link_goodput.h"

#include <cstdio>
#include <functional>
#include <vector>

#include "link_rate.h"
#include "timing.h"

namespace weft {
namespace {

constexpr uint32_t kChip = 0, kPort = 1;   // E of chip 0: the pair's only cable
constexpr uint32_t kTransfer = 16u << 10;  // one command per default-mtu frame
constexpr uint64_t kBytes = 32ull << 20;

// The cable's counters in the sending direction (a_to_b or b_to_a).
nlohmann::json sending_counters(Cluster& pair) {
    const nlohmann::json counters = pair.counters();  // kept: the loop must not outlive it
    for (const auto& l : counters["links"]) {
        if (l["a"]["chip"] == kChip && l["a"]["port"] == kPort) return l["a_to_b"];
        if (l["b"]["chip"] == kChip && l["b"]["port"] == kPort) return l["b_to_a"];
    }
    throw Error("goodput bench: no link at chip 0 port 1");
}

}  // namespace

void run_link_goodput_bench(Cluster& pair) {
    const std::vector<double> drops = {0.0, 0.001, 0.01, 0.05};
    constexpr int kRounds = 5;
    std::printf("\nTT-link goodput of one link against frame drop rate, %llu MiB in %u KiB commands\n"
                "(median of %d rounds, each round running every rate in turn, so a busy host slows all alike):\n",
                (unsigned long long)(kBytes >> 20), kTransfer >> 10, kRounds);
    std::printf("%-10s %12s %14s %16s %14s\n", "drop", "GB/s", "vs drop 0", "retransmits", "per MiB");
    std::vector<double> retransmits(drops.size(), 0), gbps;
    std::vector<std::function<double()>> runs;
    for (size_t i = 0; i < drops.size(); ++i)
        runs.push_back([&, i] {
            pair.set_fault(kChip, kPort, {{"drop_rate", drops[i]}});
            const double before = sending_counters(pair)["retransmits"].get<double>();
            const double g = bench::link_gbps(pair, kTransfer, kBytes);
            retransmits[i] += sending_counters(pair)["retransmits"].get<double>() - before;
            return g;
        });
    try {
        gbps = bench::medians_in_turns(runs, kRounds);
    } catch (...) {
        pair.set_fault(kChip, kPort, {{"clear", true}});
        throw;
    }
    pair.set_fault(kChip, kPort, {{"clear", true}});
    const double raw = gbps[0];  // the same cable, the same run: the yardstick
    for (size_t i = 0; i < drops.size(); ++i) {
        const double g = gbps[i];
        std::printf("%-10g %12.2f %14.3f %16.0f %14.2f\n", drops[i], g, raw > 0 ? g / raw : 0.0, retransmits[i],
                    retransmits[i] / (kRounds * double(kBytes >> 20)));
    }
}

}  // namespace weft
