// A program outside weft's tree on the installed host-model machine
// (weft::model): the install's ring8, eight chips in this process's memory
// running weft's own kernels, an all-reduce over the fabric through the same
// runner a QEMU cluster takes, every element checked.
#include <cstdio>
#include <vector>

#include "model/host_cluster.h"
#include "weft.h"  // the runner, the cluster files; and it finds the install

int main() {
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
        for (uint64_t i = 0; i < count; ++i) v[i] = float((i + c) % 13);
        machine.write(c, l.input_of(c).base, v.data(), r.bytes);
    }
    runner.run(r);
    int wrong = 0;
    for (uint32_t c = 0; c < spec.num_chips; ++c) {
        std::vector<float> got(count);
        machine.read(c, l.output_of(c).base, got.data(), r.bytes);
        for (uint64_t i = 0; i < count; ++i) {
            float want = 0;
            for (uint32_t k = 0; k < spec.num_chips; ++k) want += float((i + k) % 13);
            wrong += got[i] != want;
        }
    }
    std::printf("model all-reduce over the fabric on %u chips: %d wrong of %llu\n", spec.num_chips, wrong,
                (unsigned long long)(count * spec.num_chips));
    return wrong ? 1 : 0;
}
