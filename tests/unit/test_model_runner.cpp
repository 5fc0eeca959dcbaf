// The collective runner on the host-model machine (host/model): the same
// runner, transports, builders and kernels as on QEMU, the firmware's own
// ccl_worker, EDM and fabric router built for the host board, one core at a
// time on host memory. Each op's outputs are checked against the host
// reference, byte for byte.
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "../common/ccl_matrix.h"
#include "ccl/algorithm_table.h"
#include "ccl/op_case.h"
#include "ccl/runner.h"
#include "common/error.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "driver/kernel_args.h"
#include "driver/paths.h"
#include "model/host_cluster.h"
#include "transport/fabric/fabric.h"
#include "weft/abi/ccl.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

ClusterSpec spec_of(const std::string& name) {
    return load_cluster(paths::cluster_file(name), paths::load_built_board);
}

ccl::RunnerOptions over(const std::string& transport) {
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = transport;
    o.timeout = std::chrono::milliseconds(3000);
    return o;
}

void expect_right(const std::string& cluster, const std::string& transport, ccl::Collective op, const std::string& algo,
                  uint64_t bytes) {
    const ClusterSpec spec = spec_of(cluster);
    model::HostCluster machine(spec);
    ccl::CollectiveRunner runner(machine, over(transport));
    ccl::OpRequest r;
    r.op = op;
    r.algo = algo;
    r.bytes = bytes;
    const ccl::CaseResult res = ccl::run_case(runner, machine, r, 7);
    printf("%s %s over the %s on %s: algorithm %s, %llu elements checked, %llu wrong\n",
           ccl::collective_name(op).c_str(), algo.c_str(), res.timing.transport.c_str(), cluster.c_str(),
           res.timing.algo.c_str(), (unsigned long long)res.check.checked, (unsigned long long)res.check.wrong);
    if (res.check.wrong) fail_msg("%s", res.check.first_wrong.c_str());
    assert_true(res.check.checked > 0);
    assert_string_equal(res.timing.transport.c_str(), transport.c_str());
}

void test_ring8_all_reduce_over_the_fabric(void**) {
    expect_right("ring8", "fabric", ccl::Collective::kAllReduce, "ring", 64 << 10);
}

void test_mesh_all_gather_over_the_fabric(void**) {
    expect_right("mesh3x3", "fabric", ccl::Collective::kAllGather, "auto", 36 << 10);
}

void test_ring8_all_reduce_over_the_edm(void**) {
    expect_right("ring8", "edm", ccl::Collective::kAllReduce, "ring", 64 << 10);
}

// Every op, every algorithm the cluster's shape runs, every type, at one
// element a rank and at a size no rank count divides, each reduction's sum
// and another reduction: over `transport` ("auto": the EDM where it can,
// the fabric where only it can). The QEMU suite samples the types per
// algorithm; the model runs them all, on more clusters.
void expect_every_case_right(const std::string& cluster, const std::string& transport) {
    const auto started = std::chrono::steady_clock::now();
    const ClusterSpec spec = spec_of(cluster);
    model::HostCluster machine(spec);
    ccl::CollectiveRunner runner(machine, over(transport));
    const uint32_t n = spec.num_chips;
    // What the cluster's shape runs (a grid's, a cluster of systems'), and
    // over a 1D fabric its multicast's (a 2D fabric multicasts along one row
    // only: no algorithm of the ops uses it).
    const bool multicast =
        transport != "edm" &&
        transport::cluster_fabric(machine.board(), machine.topology(), machine.fabric_spec()).dims() == 1;
    const uint32_t capabilities = multicast ? uint32_t(transport::kCanMulticast) : 0u;
    std::vector<std::string> failures;
    size_t cases = 0;
    uint32_t seed = 1;
    // Past 16 chips the types take turns (f32 and one other per algorithm):
    // what a type changes is the math, which the smaller clusters cover.
    uint32_t turn = 0;
    for (ccl::Collective op : ccl::all_collectives())
        for (const std::string& algo : ccl::algorithms_on(op, machine.topology(), capabilities)) {
            std::vector<abi::DataType> types(std::begin(test::kMatrixTypes), std::end(test::kMatrixTypes));
            if (n > 16) types = {abi::kF32, test::kMatrixTypes[1 + turn++ % 3]};
            for (abi::DataType t : types)
                for (uint64_t elements : {uint64_t(n), uint64_t(300 * n + n / 2 + 1)}) {
                    for (const ccl::OpRequest& r : test::matrix_cell(op, algo, t, elements, n, seed)) {
                        ++cases;
                        const std::string what = ccl::collective_name(op) + "/" + algo + "/" + ccl::dtype_name(t) +
                                                 "/" + ccl::redop_name(r.redop) + " " + std::to_string(r.bytes) + " B";
                        try {
                            const ccl::CaseResult res = ccl::run_case(runner, machine, r, seed++);
                            if (!res.check.checked) failures.push_back(what + ": nothing checked");
                            if (res.check.wrong) failures.push_back(what + ": " + res.check.first_wrong);
                        } catch (const std::exception& e) {
                            failures.push_back(what + ": " + e.what());
                        }
                    }
                }
        }
    for (const std::string& f : failures) fprintf(stderr, "FAIL %s\n", f.c_str());
    printf("%zu cases on %s over %s, %zu failed, in %.1f s\n", cases, cluster.c_str(), transport.c_str(),
           failures.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    assert_int_equal(failures.size(), 0);
}

void test_every_case_on_pair(void**) { expect_every_case_right("pair", "auto"); }
void test_every_case_on_mesh2x2_over_the_edm(void**) { expect_every_case_right("mesh2x2", "edm"); }
void test_every_case_on_ring8(void**) { expect_every_case_right("ring8", "auto"); }
void test_every_case_on_ring8_over_the_fabric(void**) { expect_every_case_right("ring8", "fabric"); }
void test_every_case_on_line4_over_the_fabric(void**) { expect_every_case_right("line4", "fabric"); }
void test_every_case_on_mesh3x3(void**) { expect_every_case_right("mesh3x3", "auto"); }
void test_every_case_on_torus4x4_over_the_fabric(void**) { expect_every_case_right("torus4x4", "fabric"); }
void test_every_case_on_ring8x2_over_the_fabric(void**) { expect_every_case_right("ring8x2", "fabric"); }
// Clusters of systems (seed 003): the hierarchical all-reduce among the others.
void test_every_case_on_systems_torus2x2x2x2(void**) { expect_every_case_right("systems-torus2x2x2x2", "auto"); }
void test_every_case_on_systems_mesh3x2(void**) { expect_every_case_right("systems-mesh3x2", "auto"); }
// Over auto the EDM carries what it can between meshes, and the fabric the rest.
void test_big_cluster_every_case_on_4mesh3x3(void**) { expect_every_case_right("4mesh3x3", "auto"); }
void test_big_cluster_every_case_on_galaxy(void**) { expect_every_case_right("galaxy", "auto"); }

// One worker whose program waits for a signal nobody sends.
std::vector<Launch> stuck_worker(model::HostCluster& machine, uint32_t chip, uint32_t core) {
    const Region free = machine.board().l1_free(core);
    abi::CclInstr wait{};
    wait.opcode = abi::kCclWait;
    wait.count = 1;
    const uint64_t program = free.base, signals = free.base + 256;
    machine.write(chip, program, &wait, sizeof wait);
    machine.clear(chip, signals, 4 * abi::kCclMaxProducers);
    abi::CclWorkerArgs args{program, signals, 0, 1, 0};
    return {{chip, core, &kernel_named(machine.board(), "ccl_worker"), KernelArgWords::of(args)}};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Then the next op runs, right.
void expect_usable(model::HostCluster& machine) {
    ccl::CollectiveRunner runner(machine, over("fabric"));
    ccl::OpRequest r;
    r.bytes = 8 << 10;
    const ccl::CaseResult res = ccl::run_case(runner, machine, r, 3);
    assert_true(res.check.checked > 0);
    assert_int_equal(res.check.wrong, 0);
}

void test_a_stuck_kernel_times_out_with_the_hang_report(void**) {
    const ClusterSpec spec = spec_of("ring8");
    model::HostCluster machine(spec);
    const uint32_t worker = machine.board().cores_with_role(CoreRole::kWorker).front();
    const auto launched = machine.launch_all(stuck_worker(machine, 5, worker));
    try {
        machine.wait_all(launched, std::chrono::milliseconds(300), {});
        fail_msg("a kernel waiting forever finished");
    } catch (const TimeoutError& e) {
        const std::string what = e.what();
        printf("%s\n", what.substr(0, what.find("chip 0 ")).c_str());
        assert_true(contains(what, "weft hang report"));
        assert_true(contains(what, "kernel 'ccl_worker' launch 1 (finished 0)"));
        assert_true(contains(what, "<-- not finished"));
        assert_true(contains(what, "waiting on semaphore"));
    }
    assert_true(finished(machine, 5, worker, launched.front().second));
    expect_usable(machine);
}

void test_a_faulting_kernel_is_named_and_the_machine_stays_usable(void**) {
    const ClusterSpec spec = spec_of("pair");
    model::HostCluster machine(spec);
    const uint32_t worker = machine.board().cores_with_role(CoreRole::kWorker).front();
    std::vector<Launch> bad = stuck_worker(machine, 1, worker);
    bad.front().args.resize(2);  // fewer words than CclWorkerArgs
    try {
        machine.wait_all(machine.launch_all(bad), std::chrono::milliseconds(3000), {});
        fail_msg("a kernel launched with too few arguments ran");
    } catch (const FaultError& e) {
        printf("%.200s\n", e.what());
        assert_true(
            contains(e.what(), "chip 1 core " + std::to_string(worker) + " (worker) kernel 'ccl_worker' FAULT"));
    }
    expect_usable(machine);
}

void test_a_kernel_the_model_does_not_build_is_refused_by_name(void**) {
    const ClusterSpec spec = spec_of("pair");
    model::HostCluster machine(spec);
    const KernelImage& ping = kernel_named(machine.board(), "ping_pong");
    try {
        machine.launch_all({{0, machine.board().cores_with_role(CoreRole::kWorker).front(), &ping, {}}});
        fail_msg("the model launched a kernel it has no host build of");
    } catch (const Error& e) {
        assert_true(contains(e.what(), "kernel 'ping_pong' is not built for the host model"));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring8_all_reduce_over_the_fabric),
        cmocka_unit_test(test_mesh_all_gather_over_the_fabric),
        cmocka_unit_test(test_ring8_all_reduce_over_the_edm),
        cmocka_unit_test(test_every_case_on_pair),
        cmocka_unit_test(test_every_case_on_mesh2x2_over_the_edm),
        cmocka_unit_test(test_every_case_on_ring8),
        cmocka_unit_test(test_every_case_on_ring8_over_the_fabric),
        cmocka_unit_test(test_every_case_on_line4_over_the_fabric),
        cmocka_unit_test(test_every_case_on_mesh3x3),
        cmocka_unit_test(test_every_case_on_torus4x4_over_the_fabric),
        cmocka_unit_test(test_every_case_on_ring8x2_over_the_fabric),
        cmocka_unit_test(test_every_case_on_systems_torus2x2x2x2),
        cmocka_unit_test(test_every_case_on_systems_mesh3x2),
        cmocka_unit_test(test_big_cluster_every_case_on_4mesh3x3),
        cmocka_unit_test(test_big_cluster_every_case_on_galaxy),
        cmocka_unit_test(test_a_stuck_kernel_times_out_with_the_hang_report),
        cmocka_unit_test(test_a_faulting_kernel_is_named_and_the_machine_stays_usable),
        cmocka_unit_test(test_a_kernel_the_model_does_not_build_is_refused_by_name),
    };
    // ctest runs the big clusters' cases apart, beside the rest (CMakeLists.txt).
    if (const char* only = getenv("WEFT_TEST_FILTER")) cmocka_set_test_filter(only);  // a pattern: "*galaxy"
    if (const char* skip = getenv("WEFT_TEST_SKIP")) cmocka_set_skip_filter(skip);
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
