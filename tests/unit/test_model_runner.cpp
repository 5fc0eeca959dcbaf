// The collective runner on the host-model machine (host/model): the same
// runner, transports, builders and kernels as on QEMU, the firmware's own
// ccl_worker, EDM and fabric router built for the host board, one core at a
// time on host memory. Each op's outputs are checked against the host
// reference, byte for byte.
#include <chrono>
#include <string>
#include <vector>

#include "ccl/op_case.h"
#include "ccl/runner.h"
#include "common/error.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "driver/kernel_args.h"
#include "driver/paths.h"
#include "model/host_cluster.h"
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
        cmocka_unit_test(test_a_stuck_kernel_times_out_with_the_hang_report),
        cmocka_unit_test(test_a_faulting_kernel_is_named_and_the_machine_stays_usable),
        cmocka_unit_test(test_a_kernel_the_model_does_not_build_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
