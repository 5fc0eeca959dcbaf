// weft-bench-boards: the second chip beside the first. Ring all-reduce and
// all-gather on ring8 (board qemu-virt, RV64) and ring8-rv32 (qemu-virt32,
// RV32), one cluster after the other in one run:
//   - every cable shaped alike, at a rate and at half of it: busbw as a
//     fraction of the link rate, the RV32 board's over the RV64 board's (a
//     port must not lose bandwidth: >= 0.95), and how much longer each took
//     at half the rate (2.0: the link is the bottleneck, so the ratio is the
//     firmware's, not the host's);
//   - unshaped: the same ratio, which shows what the 32-bit guest costs the
//     emulator.
// WEFT_BENCH_QUICK=1: smaller sizes.
#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "busbw.h"
#include "common/knobs.h"
#include "driver/cluster.h"
#include "driver/paths.h"
#include "start.h"

using namespace weft;

namespace {

// Where the link is the bottleneck on ring8 with every cable busy, and half
// of it (at 0.05 GB/s this host was still part of the time: 1.7x at half rate).
constexpr double kRates[2] = {0.02, 0.01};

struct Op {
    std::string name;
    ccl::Collective op;
};
const std::vector<Op> kOps = {{"all_reduce ring", ccl::Collective::kAllReduce},
                              {"all_gather ring", ccl::Collective::kAllGather}};

struct Measured {
    double unshaped = 0;
    double shaped[2] = {};
};

void shape_ring(Cluster& c, double gbps) {
    const int east = c.board().port_for(abi::kFabricEast, 0);
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        c.set_fault(chip, static_cast<uint32_t>(east), {{"bandwidth_gbps", gbps}, {"latency_us", 0}});
}

// Every op of kOps on one cluster: unshaped at `unshaped_bytes`, shaped at `shaped_bytes`.
std::vector<Measured> measure(const std::string& cluster, uint64_t unshaped_bytes, uint64_t shaped_bytes) {
    auto c = Cluster::start(paths::cluster_file(cluster), "/tmp/weft-bench-boards-" + std::to_string(getpid()));
    ccl::CollectiveRunner run(*c);
    std::vector<Measured> out(kOps.size());
    for (size_t k = 0; k < kOps.size(); ++k) {
        std::fprintf(stderr, "\r  boards bench: %s, %s unshaped ...          ", cluster.c_str(), kOps[k].name.c_str());
        out[k].unshaped = bench::best_busbw(run, *c, unshaped_bytes, "ring", kOps[k].op);
    }
    for (int r = 0; r < 2; ++r) {
        shape_ring(*c, kRates[r]);
        for (size_t k = 0; k < kOps.size(); ++k) {
            std::fprintf(stderr, "\r  boards bench: %s, %s at %.3f GB/s ...          ", cluster.c_str(),
                         kOps[k].name.c_str(), kRates[r]);
            out[k].shaped[r] = bench::best_busbw(run, *c, shaped_bytes, "ring", kOps[k].op);
        }
    }
    shape_ring(*c, 0);
    return out;
}

std::string half_rate(const Measured& m) {
    char s[48];
    const double slower = m.shaped[0] / m.shaped[1];
    std::snprintf(s, sizeof s, "%.2fx%s", slower, slower < 1.8 ? " (host-bound)" : "");
    return s;
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-boards\n"
    "The same ops on ring8 (qemu-virt, RV64) and ring8-rv32 (qemu-virt32, RV32),\n"
    "unshaped and shaped, side by side. WEFT_BENCH_QUICK=1: smaller sizes.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage);
    try {
        const bool quick = knobs::flag(knobs::knob("WEFT_BENCH_QUICK"));
        const uint64_t unshaped_bytes = quick ? (4ull << 20) : (16ull << 20), shaped_bytes = 4ull << 20;
        std::printf(
            "weft boards bench: ring8 (qemu-virt, RV64) beside ring8-rv32 (qemu-virt32, RV32), host: %ld cores\n",
            sysconf(_SC_NPROCESSORS_ONLN));
        const std::vector<Measured> rv64 = measure("ring8", unshaped_bytes, shaped_bytes);
        const std::vector<Measured> rv32 = measure("ring8-rv32", unshaped_bytes, shaped_bytes);
        std::fprintf(stderr, "\r%70s\r", "");
        std::ostringstream t;
        t.setf(std::ios::fixed);
        t.precision(3);
        t << "\nEvery ring cable shaped alike, " << (shaped_bytes >> 20)
          << " MiB: busbw as a fraction of the link rate (the all-reduce uses both directions of each cable: its bus"
             " limit is 2x), RV32 over RV64, and how much longer each took at half the rate (2.0: the link is the"
             " bottleneck)\n\n| op | rate GB/s | ring8 | ring8-rv32 | rv32 / rv64 | ring8 at half rate | ring8-rv32 at "
             "half rate |\n|---|---|---|---|---|---|---|\n";
        for (size_t k = 0; k < kOps.size(); ++k)
            for (int r = 0; r < 2; ++r)
                t << "| " << kOps[k].name << " | " << kRates[r] << " | " << rv64[k].shaped[r] / kRates[r] << " | "
                  << rv32[k].shaped[r] / kRates[r] << " | " << rv32[k].shaped[r] / rv64[k].shaped[r] << " | "
                  << (r == 0 ? half_rate(rv64[k]) : "") << " | " << (r == 0 ? half_rate(rv32[k]) : "") << " |\n";
        const BoardInfo b64 = load_board(paths::board_dtb("qemu-virt")),
                        b32 = load_board(paths::board_dtb("qemu-virt32"));
        t << "\nUnshaped, " << (unshaped_bytes >> 20)
          << " MiB: busbw GB/s; here the host is the bottleneck, so the ratio is what the 32-bit chip costs the "
             "emulator: its RV32 guest code, its "
          << b32.cores.size() << " harts a chip (against " << b64.cores.size() << ") and its EDM slots of "
          << (ccl::fits_board_slot_size(b32, ccl::RunnerOptions().slots) >> 10) << " KiB (against "
          << (ccl::fits_board_slot_size(b64, ccl::RunnerOptions().slots) >> 10)
          << " KiB: twice the messages, each a few wake-ups)\n\n| op | ring8 | ring8-rv32 | rv32 / rv64 "
             "|\n|---|---|---|---|\n";
        for (size_t k = 0; k < kOps.size(); ++k)
            t << "| " << kOps[k].name << " | " << rv64[k].unshaped << " | " << rv32[k].unshaped << " | "
              << rv32[k].unshaped / rv64[k].unshaped << " |\n";
        std::printf("%s", t.str().c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\nweft-bench-boards: %s\n", e.what());
        return 1;
    }
}
