// make bench: the platform's own numbers, all measured in this one run.
//   - raw Ethernet copy throughput of the bridge over one link (4 KiB, 16 KiB,
//     1 MiB transfers) beside host memcpy of the same sizes
//   - one-word ping-pong round trip between two chips
//   - ring8 start-up time and the host CPU an idle ring8 costs
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/knobs.h"
#include "common/sizes.h"
#include "driver/cluster.h"
#include "driver/paths.h"
#include "driver/platform_kernels.h"
#include "edm_bench.h"
#include "host_cpu.h"
#include "link_goodput.h"
#include "link_rate.h"
#include "start.h"

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

// memcpy between buffers as large as the link test's total, so both move the
// same bytes through the same caches; best of five, the machine being shared.
double host_memcpy_gbps(size_t size, uint64_t total) {
    const size_t reps = static_cast<size_t>(std::max<uint64_t>(1, total / size));
    std::vector<uint8_t> a(total, 1), b(total, 2);
    double best = 0;
    for (int trial = 0; trial < 5; ++trial) {
        auto t0 = Clock::now();
        for (size_t i = 0; i < reps; ++i) memcpy(b.data() + i * size, a.data() + i * size, size);
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        best = std::max(best, double(size) * reps / s / 1e9);
        a[trial] = b[trial * 7 % total];  // keep the copies from being folded away
    }
    return best;
}

constexpr uint64_t kLinkBytes = 64ull << 20;
using bench::link_gbps;

double ping_pong_us(Cluster& c, uint32_t n) {
    const BoardInfo& b = c.board();
    const uint64_t flag0 = b.l1_free(b.ports[1].core).base, flag1 = b.l1_free(b.ports[3].core).base;
    c.chip(0).write32(flag0, 0);
    c.chip(1).write32(flag1, 0);
    Launch a = kernels::ping_pong(b, 0, b.ports[1].core, 1, true, n, flag0, flag1);
    Launch z = kernels::ping_pong(b, 1, b.ports[3].core, 3, false, n, flag1, flag0);
    auto r = c.run({z, a}, std::chrono::seconds(120));
    return double(r[1].ticks) / b.timebase_hz * 1e6 / n;
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-platform [--edm SIZE CHANNELS uni|bi [pull|push] [REPS]]\n"
    "The platform under the EDM: raw link rate, doorbells and the EDM's\n"
    "channels; --edm: one cell of the EDM table.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage, {"--edm"});
    try {
        if (argc >= 2 && std::string(argv[1]) == "--edm") {
            // One EDM cell, repeated: weft-bench-platform --edm SIZE CHANNELS uni|bi [pull|push] [REPS]
            // (WEFT_BENCH_LINK_GBPS=R: on a link shaped to R GB/s)
            if (argc < 5) throw Error("usage: weft-bench-platform --edm SIZE CHANNELS uni|bi [pull|push] [REPS]");
            const uint32_t size = static_cast<uint32_t>(parse_size(argv[2])), channels = std::stoul(argv[3]);
            const bool both = std::string(argv[4]) == "bi", push = argc > 5 && std::string(argv[5]) == "push";
            const int reps = argc > 6 ? std::stoi(argv[6]) : 5;
            auto pair =
                Cluster::start(paths::cluster_file("pair"), "/tmp/weft-bench-" + std::to_string(getpid()) + "-pair");
            pair->apply_wake_override();
            if (const auto& shaped = knobs::knob("WEFT_BENCH_LINK_GBPS"); knobs::is_set(shaped))
                pair->set_fault(0, 1, {{"bandwidth_gbps", knobs::real(shaped)}, {"latency_us", 1.0}});
            link_gbps(*pair, 1u << 20);  // warm: first touch of the DRAM pages
            std::printf("raw link at %u bytes: %.2f GB/s\n", size, link_gbps(*pair, size));
            for (int i = 0; i < reps; ++i)
                std::printf("EDM %u B x %u ch %s %s: %.2f GB/s\n", size, channels, both ? "bi" : "uni",
                            push ? "push" : "pull", measure_edm_cell(*pair, size, channels, both, push));
            ping_pong_us(*pair, 20);
            std::printf("ping-pong round trip: %.1f us\n", ping_pong_us(*pair, 2000));
            return 0;
        }
        const std::string base = "/tmp/weft-bench-" + std::to_string(getpid());
        std::printf("weft platform bench (host: %ld cores)\n\n", sysconf(_SC_NPROCESSORS_ONLN));
        std::vector<double> memcpy_gbps;
        for (uint32_t size : {4u << 10, 16u << 10, 1u << 20}) memcpy_gbps.push_back(host_memcpy_gbps(size, kLinkBytes));
        {
            std::printf("starting pair ...\n");
            auto pair = Cluster::start(paths::cluster_file("pair"), base + "-pair");
            pair->apply_wake_override();
            std::printf("\nraw Ethernet copy over one link, 64 MiB in transfers of:\n");
            std::printf("%-10s %16s %16s %10s\n", "transfer", "link GB/s", "memcpy GB/s", "link/memcpy");
            link_gbps(*pair, 1u << 20);  // warm: first touch of the DRAM pages
            size_t i = 0;
            for (uint32_t size : {4u << 10, 16u << 10, 1u << 20}) {
                double link = link_gbps(*pair, size);
                double mem = memcpy_gbps[i++];
                char label[16];
                snprintf(label, sizeof label, size >= (1u << 20) ? "%u MiB" : "%u KiB",
                         size >= (1u << 20) ? size >> 20 : size >> 10);
                std::printf("%-10s %16.2f %16.2f %10.3f\n", label, link, mem, link / mem);
            }
            if (!knobs::flag(knobs::knob("WEFT_BENCH_SKIP_EDM")))
                run_edm_bench(*pair, [&](uint32_t size) { return link_gbps(*pair, size); });
            run_link_goodput_bench(*pair);
            ping_pong_us(*pair, 20);  // warm: the cores leave deep idle
            std::printf("\none-word ping-pong round trip over one link: %.1f us (mean of 2000)\n",
                        ping_pong_us(*pair, 2000));
        }
        {
            auto t0 = Clock::now();
            auto ring = Cluster::start(paths::cluster_file("ring8"), base + "-ring8");
            const double up = std::chrono::duration<double>(Clock::now() - t0).count();
            std::printf("\nring8 start-up (8 QEMU chips x %zu harts, all READY): %.2f s (target < 3 s)\n",
                        ring->board().cores.size(), up);
            const std::vector<int> pids = bench::cluster_pids(*ring);
            std::this_thread::sleep_for(std::chrono::seconds(3));  // past the post-boot responsive window
            const double cpu0 = bench::cpu_seconds(pids);
            const double window = 10.0;
            std::this_thread::sleep_for(std::chrono::duration<double>(window));
            const double cpu1 = bench::cpu_seconds(pids);
            std::printf("idle ring8 host CPU: %.1f%% of one core over %.0f s (bridge + 8 QEMUs; target < 10%%)\n",
                        100.0 * (cpu1 - cpu0) / window, window);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
