#include "planes_bench.h"

#include <unistd.h>

#include <cstdio>
#include <vector>

#include "ccl/op_case.h"
#include "driver/paths.h"
#include "timing.h"

namespace weft::bench {

nlohmann::json planes_runs(bool quick) {
    constexpr double kRateGBps = 0.25, kLatencyUs = 1;
    const std::vector<uint64_t> sizes = quick ? std::vector<uint64_t>{1u << 20}
                                              : std::vector<uint64_t>{1u << 20, 4u << 20, 16u << 20, 64u << 20};
    std::printf("\nstarting ring8x2 (two cables between neighbours) ...\n");
    std::fflush(stdout);
    auto c = Cluster::start(paths::cluster_file("ring8x2"), "/tmp/weft-bench-planes-" + std::to_string(getpid()));
    const uint32_t n = static_cast<uint32_t>(c->size());
    for (uint32_t chip = 0; chip < n; ++chip)
        for (uint32_t port : {0u, 1u})  // both E ports (planes 1 and 0): every cable once
            c->set_fault(chip, port, {{"bandwidth_gbps", kRateGBps}, {"latency_us", kLatencyUs}});
    ccl::RunnerOptions one_plane;
    one_plane.planes = 1;
    ccl::CollectiveRunner on_one(*c, one_plane), on_both(*c, ccl::RunnerOptions{});
    const bool tty = isatty(STDERR_FILENO);
    // One way (a worker per cable), whole blocks half way each way and CTRING
    // (both: one worker serving both cables to its neighbour).
    const std::pair<ccl::Collective, const char*> ops[] = {{ccl::Collective::kAllGather, "ring"},
                                                           {ccl::Collective::kAllGather, "ring_halfway"},
                                                           {ccl::Collective::kAllReduce, "ring"}};
    std::printf("ring8x2, every cable shaped to %g GB/s (latency %g us): busbw GB/s over one plane and over both\n",
                kRateGBps, kLatencyUs);
    std::printf("%-24s %8s %12s %12s %8s\n", "op", "size", "1 plane", "2 planes", "ratio");
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [collective, algo] : ops)
        for (uint64_t bytes : sizes) {
            double busbw[2] = {0, 0};
            uint64_t wrong = 0;
            ccl::CollectiveRunner* runners[2] = {&on_one, &on_both};
            ccl::OpRequest r;
            r.op = collective;
            r.algo = algo;
            r.bytes = bytes;
            const std::string name = ccl::collective_name(collective) + "/" + algo;
            for (int p = 0; p < 2; ++p) wrong += ccl::run_case(*runners[p], *c, r, 1, true).check.wrong;
            const auto on_planes = [&](int p) {
                return [&, p] {
                    if (tty)
                        std::fprintf(stderr, "\r  planes: %s, %d plane(s), %s ...   ", name.c_str(), p + 1,
                                     human_size(bytes).c_str());
                    return ccl::run_case(*runners[p], *c, r, 1, false).timing.seconds;
                };
            };
            // Taking turns, three times each; the median of each (as the sweep does).
            const std::vector<double> seconds = medians_in_turns({on_planes(0), on_planes(1)}, 3);
            for (int p = 0; p < 2; ++p) busbw[p] = double(bytes) / seconds[p] / 1e9 * ccl::bus_factor(r.op, n);
            if (tty) std::fprintf(stderr, "\r%80s\r", "");
            std::printf("%-24s %8s %12.4f %12.4f %8.2f%s\n", name.c_str(), human_size(bytes).c_str(), busbw[0],
                        busbw[1], busbw[1] / busbw[0], wrong ? "  WRONG RESULTS" : "");
            std::fflush(stdout);
            rows.push_back({{"op", name},
                            {"bytes", bytes},
                            {"busbw_one_plane_gbs", busbw[0]},
                            {"busbw_two_planes_gbs", busbw[1]},
                            {"link_gbps", kRateGBps},
                            {"wrong", wrong}});
        }
    return rows;
}

}  // namespace weft::bench
