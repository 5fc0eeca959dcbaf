#include "edm_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/error.h"
#include "common/knobs.h"
#include "driver/paths.h"
#include "host_cpu.h"
#include "transport/edm/edm_builder.h"

namespace weft {
namespace {

// As many bytes as the raw link measurement moves, so start-up costs weigh alike.
constexpr uint64_t kBytesPerDirection = 64ull << 20;
constexpr uint32_t kEast = 1, kWest = 3;

struct Cell {
    double gbps = 0;
    uint32_t slots = 0;
    std::string error;
};

// Largest slot count whose buffers fit both ends' ERISC L1 and, for a push
// receiver, the receiving worker's L1 (one worker takes every channel of a direction).
uint32_t slots_that_fit(const BoardInfo& b, uint32_t channels, bool both, uint32_t size, bool push) {
    const uint64_t erisc = b.l1_free(b.ports[kEast].core).size - 4096;  // configuration and link words
    const uint64_t worker = b.l1_free(5).size - 64 * 1024;              // the workers' semaphores and connections
    for (uint32_t slots = abi::kEdmMaxSlots; slots >= 1; --slots) {
        const bool fits_erisc = uint64_t(channels) * (both ? 2 : 1) * slots * (size + 64) <= erisc;
        const bool fits_worker = !push || uint64_t(channels) * slots * size <= worker;
        if (fits_erisc && fits_worker) return slots;
    }
    return 0;
}

Cell measure(Cluster& c, uint32_t size, uint32_t channels, bool both, abi::EdmReceiveMode mode = abi::kEdmPull) {
    const BoardInfo& b = c.board();
    Cell cell;
    cell.slots = slots_that_fit(b, channels, both, size, mode == abi::kEdmPush);
    if (cell.slots == 0) {
        cell.error = "no fit";
        return cell;
    }
    transport::EdmOptions opt;
    opt.slots = cell.slots;
    opt.slot_size = size;
    opt.receive_mode = mode;
    transport::L1Allocator mem(b);
    transport::EdmLinkBuilder link(mem, b, {0, kEast}, {1, kWest}, opt);
    const uint64_t per_channel = kBytesPerDirection / channels / size * size;
    const uint32_t messages = static_cast<uint32_t>(per_channel / size);
    std::vector<transport::EdmLinkBuilder::WorkerJob> send[2], recv[2];
    for (int dir = 0; dir < (both ? 2 : 1); ++dir) {
        for (uint32_t k = 0; k < channels; ++k) {
            auto ch = link.add_sender_channel(dir, {dir == 0 ? 4u : 6u}, messages);
            link.add_receiver_channel(ch.id, {dir == 0 ? 5u : 7u});
            const uint64_t src = b.dram.base + dir * kBytesPerDirection + k * per_channel;
            const uint64_t dst = b.dram.base + 2 * kBytesPerDirection + dir * kBytesPerDirection + k * per_channel;
            send[dir].push_back({ch.id, 0, src, size, size, messages, 0});
            recv[dir].push_back({ch.id, 0, dst, size, size, messages, 0});
        }
    }
    link.write(c);
    std::vector<Launch> launches = {link.edm_launch(0), link.edm_launch(1)};
    for (int dir = 0; dir < (both ? 2 : 1); ++dir) {
        launches.push_back(link.sender_worker(send[dir]));
        launches.push_back(link.receiver_worker(recv[dir]));
    }
    auto results = c.run(launches, std::chrono::seconds(120));
    const double seconds = double(std::max(results[0].ticks, results[1].ticks)) / b.timebase_hz;
    cell.gbps = double(per_channel) * channels * (both ? 2 : 1) / seconds / 1e9;
    return cell;
}

// The same link shaped to a fixed rate (docs/architecture.md, "Links"), as silicon's
// links are: the wire, not the host's copy speed, is then the bottleneck, and
// the fraction measures what the EDM's protocol costs. One way against the raw
// link one way; both ways against twice it (each direction has its own wire).
void shaped_table(Cluster& c, const std::function<double(uint32_t)>& raw_link_gbps, std::ostringstream& t) {
    const std::vector<double> rates = {0.5, 1, 2, 4};
    const std::vector<uint32_t> channel_counts = {1, 2, 4, 8};
    constexpr double kLatencyUs = 1;
    t << "\nThe same link shaped (bandwidth_gbps, latency_us " << kLatencyUs
      << "): 16 KiB packets, GB/s and fraction of the shaped raw link measured in the same run\n"
         "(both directions: against twice the one-way raw rate, each direction being its own wire).\n\n"
         "| link GB/s | raw GB/s | dir | ch 1 | ch 2 | ch 4 | ch 8 |\n|---|---|---|---|---|---|---|\n";
    int done = 0;
    const int total = static_cast<int>(rates.size() * channel_counts.size() * 2);
    for (double rate : rates) {
        c.set_fault(0, kEast, {{"bandwidth_gbps", rate}, {"latency_us", kLatencyUs}});
        const double raw = raw_link_gbps(16384);
        for (bool both : {false, true}) {
            t.precision(2);
            t << "| " << rate << " | " << raw << " | " << (both ? "bi" : "uni") << " |";
            for (uint32_t ch : channel_counts) {
                std::fprintf(stderr, "\r  EDM bench, shaped %g GB/s: %d/%d ...   ", rate, ++done, total);
                Cell cell = measure(c, 16384, ch, both);
                if (!cell.error.empty()) {
                    t << " " << cell.error << " |";
                    continue;
                }
                const double of = cell.gbps / (raw * (both ? 2 : 1));
                t << " " << cell.gbps << " (" << int(100 * of + 0.5) << "%) |";
            }
            t << "\n";
        }
    }
    c.set_fault(0, kEast, {{"bandwidth_gbps", 0.0}, {"latency_us", 0.0}});
    std::fprintf(stderr, "\r%70s\r", "");
}

}  // namespace

double measure_edm_cell(Cluster& c, uint32_t size, uint32_t channels, bool both, bool push) {
    Cell cell = measure(c, size, channels, both, push ? abi::kEdmPush : abi::kEdmPull);
    if (!cell.error.empty()) throw Error("EDM cell: " + cell.error);
    return cell.gbps;
}

void run_edm_bench(Cluster& c, const std::function<double(uint32_t)>& raw_link_gbps) {
    std::vector<uint32_t> sizes = {1024, 2048, 4096, 8192, 16384};
    const std::vector<uint32_t> channel_counts = {1, 2, 4, 8};
    if (knobs::flag(knobs::knob("WEFT_BENCH_QUICK"))) sizes = {16384};
    std::vector<double> raw;
    for (uint32_t s : sizes) raw.push_back(raw_link_gbps(s));
    measure(c, 16384, 8, true);  // warm: first touch of every buffer the cells use, as the raw link's own warm-up did
    std::ostringstream t;
    t << "EDM over one link of `pair`: " << (kBytesPerDirection >> 20)
      << " MiB per direction, GB/s per link (both directions added up), and as a fraction of the bridge's raw link\n"
         "copy at the same transfer size measured in the same run. Slots per channel: as many (<= "
      << abi::kEdmMaxSlots << ") as fit the ERISC L1\n(and a push receiver's worker L1).\n\n";
    t << "| packet | raw GB/s | dir | ch 1 | ch 2 | ch 4 | ch 8 |\n|---|---|---|---|---|---|---|\n";
    const int total = static_cast<int>(sizes.size() * channel_counts.size() * 2);
    int done = 0;
    for (size_t si = 0; si < sizes.size(); ++si) {
        for (bool both : {false, true}) {
            t << "| " << sizes[si] / 1024 << " KiB | " << std::fixed;
            t.precision(2);
            t << raw[si] << " | " << (both ? "bi" : "uni") << " |";
            for (uint32_t ch : channel_counts) {
                std::fprintf(stderr, "\r  EDM bench %d/%d: %u KiB, %u channel(s), %s ...   ", ++done, total,
                             sizes[si] / 1024, ch, both ? "bidirectional" : "one way");
                Cell cell = measure(c, sizes[si], ch, both);
                if (!cell.error.empty()) {
                    t << " " << cell.error << " |";
                    continue;
                }
                t.precision(2);
                t << " " << cell.gbps << " (" << int(100 * cell.gbps / raw[si] + 0.5) << "%, " << cell.slots << "s) |";
            }
            t << "\n";
        }
    }
    // The receiver's push mode (future work in tt-metal's CCL developer guide) beside pull, 16 KiB packets.
    for (bool both : {false, true}) {
        t << "| 16 KiB push | " << raw.back() << " | " << (both ? "bi" : "uni") << " |";
        for (uint32_t ch : channel_counts) {
            std::fprintf(stderr, "\r  EDM bench: push mode, %u channel(s), %s ...   ", ch,
                         both ? "bidirectional" : "one way");
            Cell cell = measure(c, 16384, ch, both, abi::kEdmPush);
            if (!cell.error.empty()) {
                t << " " << cell.error << " |";
                continue;
            }
            t << " " << cell.gbps << " (" << int(100 * cell.gbps / raw.back() + 0.5) << "%, " << cell.slots << "s) |";
        }
        t << "\n";
    }
    std::fprintf(stderr, "\r%70s\r", "");
    // Where the time goes: how busy the host is while an EDM runs.
    {
        const double cpu0 = bench::cpu_seconds(bench::cluster_pids(c));
        const auto t0 = std::chrono::steady_clock::now();
        Cell cell = measure(c, 16384, 4, false);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double cpu = bench::cpu_seconds(bench::cluster_pids(c)) - cpu0;
        t << "\nHost CPU while 16 KiB x 4 channels ran one way (" << cell.gbps
          << " GB/s): " << int(100 * cpu / wall + 0.5) << "% of one core (bridge + both QEMUs), over "
          << sysconf(_SC_NPROCESSORS_ONLN) << " cores.\n";
    }
    shaped_table(c, raw_link_gbps, t);
    std::printf("\n%s", t.str().c_str());
    // A quick run is a smoke test: its numbers never replace the recorded ones.
    const std::string out = knobs::flag(knobs::knob("WEFT_BENCH_QUICK"))
                                ? "/tmp/weft-bench-quick-edm_link.md"
                                : paths::bench_out() + "/bench/results/edm_link.md";
    std::filesystem::create_directories(std::filesystem::path(out).parent_path());
    std::ofstream f(out);
    f << "# EDM link benchmark\n\n" << t.str();
    if (f) std::printf("(recorded in %s)\n", out.c_str());
}

}  // namespace weft
