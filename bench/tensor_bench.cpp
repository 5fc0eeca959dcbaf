// weft-bench-tensor: the tensor all-gather (host/tensor, over the fabric) in
// each layout beside the flat-vector all-gather over the same fabric, and the
// tensor all-reduce and reduce-scatter (through the flat ones) beside the
// flat ops, on ring8 with every cable shaped (the cables, not the host, the
// bottleneck), in one run: busbw as a fraction of a cable's rate, as a
// fraction of the flat op's, and the time at half the rate (2.0: link-bound).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ccl/op_case.h"
#include "common/error.h"
#include "driver/paths.h"
#include "shaping.h"
#include "start.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"
#include "timing.h"
#include "transport/fabric/fabric.h"

using namespace weft;

namespace {

constexpr double kRate = 0.005;  // GB/s a cable: link-bound for both ops here
constexpr uint32_t kReps = 3;

struct Layout {
    const char* name;
    abi::TensorLayout pages;
    abi::TensorMemory memory;
};

// The flat `op` of `bytes` (its ring algorithm, on `run`): checked once,
// then the median time.
double flat_seconds(Cluster& c, ccl::CollectiveRunner& run, ccl::Collective op, uint64_t bytes) {
    ccl::OpRequest r;
    r.op = op;
    r.algo = "ring";
    r.bytes = bytes;
    if (ccl::run_case(run, c, r, 1, true).check.wrong)
        throw Error("the flat " + ccl::collective_name(op) + " gave wrong results");
    return bench::medians_in_turns({[&] { return ccl::run_case(run, c, r, 1, false).timing.seconds; }}, kReps)[0];
}

// The part (each rank's: bytes / ranks of f32, 512 rows) in `l`, sharded
// over three workers where it is sharded; gathered along its rows into the
// DRAM banks. Checked once, then timed.
double tensor_seconds(Cluster& c, transport::Fabric& fabric, uint64_t bytes, const Layout& l) {
    const uint32_t n = uint32_t(c.size());
    const uint32_t cols = uint32_t(bytes / n / 4 / 512);
    abi::TensorSpec part = tensor::matrix(512, cols, abi::kF32, l.pages);
    part.memory = l.memory;
    part.grid_x = 3, part.grid_y = 1, part.shard_cols = (cols / 3 + 31) / 32 * 32;
    const abi::TensorAt in = l.memory == abi::kInterleaved ? tensor::interleaved_at(c.board(), part, 0)
                                                           : tensor::sharded_at(c.board(), part, 0);
    abi::TensorSpec banks{};
    const abi::TensorAt out = tensor::interleaved_at(c.board(), tensor::gathered(part, 2, n, banks), 16 << 20);
    std::vector<std::vector<uint8_t>> parts(n);
    std::vector<uint32_t> chips(n);
    for (uint32_t chip = 0; chip < n; ++chip) {
        chips[chip] = chip;
        parts[chip].resize(tensor::elements(part) * 4);
        for (size_t i = 0; i < parts[chip].size(); ++i) parts[chip][i] = uint8_t(i * 7 + chip * 13 + (i >> 12));
        tensor::write_tensor(c.chip(chip), in, parts[chip].data());
    }
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    const auto once = [&] {
        const auto t0 = std::chrono::steady_clock::now();
        tensor::all_gather(c, fabric, chips, in, out, 2, core, std::chrono::milliseconds(600000));
        return bench::seconds_since(t0);
    };
    once();
    const std::vector<uint8_t> want = tensor::concatenate(part, 2, parts);
    for (uint32_t chip = 0; chip < n; ++chip)
        if (tensor::read_tensor(c.chip(chip), out) != want)
            throw Error(std::string("the tensor all_gather (") + l.name + ") gave wrong results on chip " +
                        std::to_string(chip));
    return bench::medians_in_turns({once}, kReps)[0];
}

// The tensor (bytes of f32, 512 rows) in `l` on every chip, all-reduced in
// place, or reduce-scattered by rows into parts in the same memory, through
// the flat op (tensor_flat.h). Checked once, then timed.
double tensor_reduce_seconds(Cluster& c, ccl::CollectiveRunner& run, uint64_t bytes, const Layout& l,
                             ccl::Collective op) {
    const uint32_t n = uint32_t(c.size()), cols = uint32_t(bytes / 4 / 512);
    const bool scatter = op == ccl::Collective::kReduceScatter;
    const abi::TensorSpec t = tensor::in_memory(tensor::matrix(512, cols, abi::kF32, l.pages), l.memory, {3, 1});
    const abi::TensorSpec part =
        tensor::in_memory(tensor::matrix(scatter ? 512 / n : 512, cols, abi::kF32, l.pages), l.memory, {3, 1});
    // Named, not bound: the lambdas below take them (clang refuses a captured binding).
    const tensor::PlacedPair placed = scatter ? tensor::place_both(c.board(), t, part)
                                              : tensor::PlacedPair{tensor::placed(c.board(), t, 0), {}};
    const abi::TensorAt &at = placed.in, &out = placed.out;
    std::vector<float> want(tensor::elements(t), 0.0f), mine(want.size());
    const auto put = [&] {
        for (uint32_t chip = 0; chip < n; ++chip) {
            for (size_t i = 0; i < mine.size(); ++i) mine[i] = float((i + chip) % 7);  // sums stay exact
            tensor::write_tensor(c.chip(chip), at, mine.data());
        }
    };
    for (uint32_t chip = 0; chip < n; ++chip)
        for (size_t i = 0; i < want.size(); ++i) want[i] += float((i + chip) % 7);
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    const auto once = [&] {
        const auto t0 = std::chrono::steady_clock::now();
        if (scatter)
            tensor::reduce_scatter(c, run, at, out, 2, abi::kMathSum, core, std::chrono::milliseconds(600000), "ring");
        else
            tensor::all_reduce(c, run, at, abi::kMathSum, core, std::chrono::milliseconds(600000), "ring");
        return bench::seconds_since(t0);
    };
    put();
    once();
    const size_t each = tensor::elements(part);
    for (uint32_t chip = 0; chip < n; ++chip) {
        const std::vector<uint8_t> got = tensor::read_tensor(c.chip(chip), scatter ? out : at);
        const float* expect = want.data() + (scatter ? chip * each : 0);
        if (got.size() != each * 4 || std::memcmp(got.data(), expect, got.size()) != 0)
            throw Error("the tensor " + ccl::collective_name(op) + " (" + l.name + ") gave wrong results on chip " +
                        std::to_string(chip));
    }
    return bench::medians_in_turns({once}, kReps)[0];
}

// A reduction's table: the flat ring op, then the tensor's in each layout.
void reduce_table(Cluster& c, uint64_t bytes, ccl::Collective op) {
    const uint32_t n = uint32_t(c.size());
    const bool scatter = op == ccl::Collective::kReduceScatter;
    const double bus = ccl::bus_factor(op, n);
    const auto fraction = [&](double s) { return double(bytes) / s / 1e9 * bus / kRate; };
    ccl::CollectiveRunner run(c);
    const std::string name = ccl::collective_name(op);
    std::printf("\n%s of %llu MiB on ring8 over %s, the same cables: the tensor op (%s, by the flat ring %s) "
                "beside the flat ring %s\n\n| op | busbw / cable | / flat | time at half rate |\n"
                "|---|---|---|---|\n",
                name.c_str(), (unsigned long long)(bytes >> 20), run.transport_name().c_str(),
                scatter ? "each chip's tensor cut by rows into runs of DRAM by tensor_split, reduced there, each "
                          "chip's part moved into its memory"
                        : "its pages moved into one run of DRAM by the reshard kernel, reduced there, moved back",
                name.c_str(), name.c_str());
    double flat[2];
    for (int half = 0; half < 2; ++half) {
        bench::shape_every_cable(c, half ? kRate / 2 : kRate);
        std::fprintf(stderr, "\r  tensor bench: the flat %s%s ...          ", name.c_str(),
                     half ? " at half rate" : "");
        flat[half] = flat_seconds(c, run, op, bytes);
    }
    std::printf("| flat vector (ring) | %.3f | 1.00 | %.2fx%s |\n", fraction(flat[0]), flat[1] / flat[0],
                flat[1] / flat[0] < 1.8 ? " (host-bound)" : "");
    const std::vector<Layout> layouts = {{"tiles, interleaved", abi::kTilePages, abi::kInterleaved},
                                         {"tiles, width-sharded on 3 cores", abi::kTilePages, abi::kWidthSharded},
                                         {"row-major, height-sharded on 3 cores", abi::kRowMajorPages,
                                          abi::kHeightSharded},
                                         {"row-major, width-sharded on 3 cores", abi::kRowMajorPages,
                                          abi::kWidthSharded}};
    for (const Layout& l : layouts) {
        double s[2];
        for (int half = 0; half < 2; ++half) {
            bench::shape_every_cable(c, half ? kRate / 2 : kRate);
            std::fprintf(stderr, "\r  tensor bench: %s, %s%s ...          ", name.c_str(), l.name,
                         half ? " at half rate" : "");
            s[half] = tensor_reduce_seconds(c, run, bytes, l, op);
        }
        std::printf("| tensor: %s | %.3f | %.2f | %.2fx%s |\n", l.name, fraction(s[0]), flat[0] / s[0], s[1] / s[0],
                    s[1] / s[0] < 1.8 ? " (host-bound)" : "");
        std::fflush(stdout);
    }
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-tensor [--quick]\n"
    "Tensor layouts: the all-gather resharding in flight, and the all-reduce and\n"
    "reduce-scatter through the flat ones, each beside the flat-vector op on shaped ring8.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage, {"--quick"});
    try {
        const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
        const uint64_t bytes = quick ? (4ull << 20) : (16ull << 20);
        auto c = Cluster::start(paths::cluster_file("ring8"), "/tmp/weft-bench-tensor-" + std::to_string(getpid()));
        const uint32_t n = uint32_t(c->size());
        const double bus = double(n - 1) / n;
        const std::vector<Layout> layouts = {{"row-major, interleaved", abi::kRowMajorPages, abi::kInterleaved},
                                             {"tiles, interleaved", abi::kTilePages, abi::kInterleaved},
                                             {"tiles, width-sharded on 3 cores", abi::kTilePages, abi::kWidthSharded}};
        std::printf("All-gather of %llu MiB on ring8 over the fabric, every cable shaped to %.3f GB/s: busbw as a "
                    "fraction of a cable's rate, the tensor op (round the ring, half the pages each way, each page "
                    "to its place in the result, in DRAM banks) beside the flat-vector ring all-gather, and the time at half the rate "
                    "(2.0: the cables are the bottleneck)\n\n| op | busbw / cable | / flat | time at half rate |\n"
                    "|---|---|---|---|\n",
                    (unsigned long long)(bytes >> 20), kRate);
        const auto fraction = [&](double s) { return double(bytes) / s / 1e9 * bus / kRate; };
        double flat[2];
        ccl::RunnerOptions over_fabric;
        over_fabric.transport = "fabric";
        for (int half = 0; half < 2; ++half) {
            bench::shape_every_cable(*c, half ? kRate / 2 : kRate);
            std::fprintf(stderr, "\r  tensor bench: the flat all_gather%s ...          ", half ? " at half rate" : "");
            ccl::CollectiveRunner run(*c, over_fabric);  // gone, its fabric stopped, before the tensor ops' starts
            flat[half] = flat_seconds(*c, run, ccl::Collective::kAllGather, bytes);
        }
        std::printf("| flat vector (ring) | %.3f | 1.00 | %.2fx%s |\n", fraction(flat[0]), flat[1] / flat[0],
                    flat[1] / flat[0] < 1.8 ? " (host-bound)" : "");
        auto fabric = transport::Fabric::start(*c, transport::cluster_fabric(c->board(), c->topology(), FabricSpec{}),
                                               std::chrono::milliseconds(10000));
        for (const Layout& l : layouts) {
            double s[2];
            for (int half = 0; half < 2; ++half) {
                bench::shape_every_cable(*c, half ? kRate / 2 : kRate);
                std::fprintf(stderr, "\r  tensor bench: %s%s ...          ", l.name, half ? " at half rate" : "");
                s[half] = tensor_seconds(*c, *fabric, bytes, l);
            }
            std::printf("| tensor: %s | %.3f | %.2f | %.2fx%s |\n", l.name, fraction(s[0]), flat[0] / s[0],
                        s[1] / s[0], s[1] / s[0] < 1.8 ? " (host-bound)" : "");
            std::fflush(stdout);
        }
        fabric->stop();
        // Each chip holds the whole tensor: sharded over 3 workers' L1 (under 1 MiB
        // free each), 2 MiB is about what fits.
        reduce_table(*c, quick ? (1ull << 20) : (2ull << 20), ccl::Collective::kAllReduce);
        reduce_table(*c, quick ? (1ull << 20) : (2ull << 20), ccl::Collective::kReduceScatter);
        std::fprintf(stderr, "\r%60s\r", "");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weft-bench-tensor: %s\n", e.what());
        return 1;
    }
}
