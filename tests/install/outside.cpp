// A program outside weft's tree, linked against the installed library: starts
// a pair cluster from the install's clusters and runs an all-reduce on
// buffers of its own choosing, out of place and then in place, overlapping
// the first with its own check of the inputs; checks every element.
// `outside model`: an all-reduce over the fabric on the installed host-model
// machine (weft::model) instead: ring8's eight chips in this process running
// weft's own kernels, through the same runner, every element checked.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "model/host_cluster.h"
#include "weft.h"

namespace {

constexpr uint64_t kCount = 16 << 10;  // floats

// Small integers: their float sums are exact in any order.
float input(uint32_t chip, uint64_t i) { return float((i * 7 + chip * 3) % 101); }

int wrong_elements(weft::Cluster& cluster, uint64_t addr) {
    int wrong = 0;
    std::vector<float> got(kCount);
    for (uint32_t c = 0; c < cluster.size(); ++c) {
        cluster.chip(c).read(addr, got.data(), kCount * sizeof(float));
        for (uint64_t i = 0; i < kCount; ++i) {
            float want = 0;
            for (uint32_t k = 0; k < cluster.size(); ++k) want += input(k, i);
            wrong += got[i] != want;
        }
    }
    return wrong;
}

// An out-of-place op reads its send buffer and never writes it.
bool inputs_intact(weft::Cluster& cluster, uint64_t addr) {
    std::vector<float> got(kCount);
    for (uint32_t c = 0; c < cluster.size(); ++c) {
        cluster.chip(c).read(addr, got.data(), kCount * sizeof(float));
        for (uint64_t i = 0; i < kCount; ++i)
            if (got[i] != input(c, i)) return false;
    }
    return true;
}

void write_inputs(weft::Cluster& cluster, uint64_t addr) {
    std::vector<float> v(kCount);
    for (uint32_t c = 0; c < cluster.size(); ++c) {
        for (uint64_t i = 0; i < kCount; ++i) v[i] = input(c, i);
        cluster.chip(c).write(addr, v.data(), kCount * sizeof(float));
    }
}

int model() {
    using namespace weft;
    const ClusterSpec spec = load_cluster(paths::cluster_file("ring8"), paths::load_built_board);
    model::HostCluster machine(spec);
    ccl::RunnerOptions options;
    options.transport = "fabric";
    ccl::CollectiveRunner runner(machine, options);
    ccl::OpRequest r;
    r.bytes = 64 << 10;
    const ccl::OpLayout l = runner.layout(r);
    const uint64_t count = r.bytes / sizeof(float);
    for (uint32_t c = 0; c < spec.num_chips; ++c) {
        std::vector<float> v(count);
        for (uint64_t i = 0; i < count; ++i) v[i] = input(c, i);
        machine.write(c, l.input_of(c).base, v.data(), r.bytes);
    }
    runner.run(r);
    int wrong = 0;
    for (uint32_t c = 0; c < spec.num_chips; ++c) {
        std::vector<float> got(count);
        machine.read(c, l.output_of(c).base, got.data(), r.bytes);
        for (uint64_t i = 0; i < count; ++i) {
            float want = 0;
            for (uint32_t k = 0; k < spec.num_chips; ++k) want += input(k, i);
            wrong += got[i] != want;
        }
    }
    std::printf("model all-reduce over the fabric on %u chips: %d wrong of %llu\n", spec.num_chips, wrong,
                (unsigned long long)(count * spec.num_chips));
    return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "model") {
        try {
            return model();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "outside model: %s\n", e.what());
            return 1;
        }
    }
    try {
        auto cluster =
            weft::Cluster::start(weft::paths::cluster_file("pair"), "/tmp/weft-outside-" + std::to_string(getpid()));
        weft::ccl::CollectiveRunner run(*cluster);
        // Buffers where this program wants them: 1 MiB into DRAM, and 3 MiB in.
        const uint64_t send = cluster->board().dram.base + (1 << 20), recv = send + (2 << 20);
        write_inputs(*cluster, send);
        weft::ccl::PendingOp op = weft::ccl::all_reduce(run, send, recv, kCount, weft::abi::kF32, weft::abi::kMathSum);
        const bool intact = inputs_intact(*cluster, send);  // host work while the op runs
        const weft::ccl::OpTiming t = run.wait(op);
        const int out_of_place = wrong_elements(*cluster, recv);
        write_inputs(*cluster, recv);
        run.wait(weft::ccl::all_reduce(run, recv, recv, kCount, weft::abi::kF32, weft::abi::kMathSum));
        const int in_place = wrong_elements(*cluster, recv);
        std::printf("outside: all_reduce of %llu floats at 0x%llx -> 0x%llx with %s: %d wrong; in place: %d wrong; "
                    "send buffer %s; firmware from %s\n",
                    (unsigned long long)kCount, (unsigned long long)send, (unsigned long long)recv, t.algo.c_str(),
                    out_of_place, in_place, intact ? "intact" : "CHANGED",
                    weft::paths::firmware_dir(cluster->board().name).c_str());
        return out_of_place || in_place || !intact || !inputs_intact(*cluster, send) ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "outside: %s\n", e.what());
        return 1;
    }
}
