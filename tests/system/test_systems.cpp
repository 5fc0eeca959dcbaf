// The hierarchical all-reduce (seed 003) on real QEMU clusters of systems
// (argv[1]: systems-ring2x4x4, systems-torus2x2x2x2, systems-mesh3x2): every
// data type, sizes from 4 bytes to 16 MiB (4 MiB on the 32-chip cluster),
// ones that leave remainders, in place on the caller's buffers, over the
// EDM and over the fabric, with the root moved by its knob; every element
// checked against the host reference. auto picks an algorithm that runs.
#include <stdlib.h>

#include <cstring>

#include <string>
#include <vector>

#include "ccl/op_case.h"
#include "system_test.h"

using namespace weft;
using namespace weft::test;

namespace {

std::string g_name = "systems-mesh3x2";
std::unique_ptr<Cluster> g_cluster;

int setup(void**) { return start_for_group(g_name, &g_cluster); }
int teardown(void**) {
    g_cluster.reset();
    return 0;
}

// Runs and checks one case; returns a line describing a failure, or "".
std::string run_one(ccl::CollectiveRunner& runner, const ccl::OpRequest& r, uint32_t seed) {
    const std::string what = runner.transport_name() + " " + r.algo + "/" + ccl::dtype_name(r.dtype) + "/" +
                             ccl::redop_name(r.redop) + " " + std::to_string(r.bytes) + " B" +
                             (r.in_place() ? " in place" : "");
    try {
        const ccl::CaseResult res = ccl::run_case(runner, *g_cluster, r, seed);
        if (res.check.checked == 0) return what + ": nothing was checked";
        if (res.check.wrong)
            return what + ": " + std::to_string(res.check.wrong) + " wrong, first " + res.check.first_wrong;
        if (res.timing.algo != r.algo && r.algo != "auto") return what + ": ran " + res.timing.algo;
        return "";
    } catch (const std::exception& e) {
        return what + ": " + e.what();
    }
}

ccl::OpRequest hierarchical(uint64_t bytes, abi::DataType dtype = abi::kF32) {
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.algo = "hierarchical";
    r.bytes = bytes;
    r.dtype = dtype;
    return r;
}

void report(const std::vector<std::string>& failures, size_t cases) {
    for (const auto& f : failures) fprintf(stderr, "FAIL %s\n", f.c_str());
    fprintf(stderr, "%zu cases on %s, %zu failed\n", cases, g_name.c_str(), failures.size());
    assert_int_equal(failures.size(), 0);
}

void test_every_type_and_size(void**) {
    const auto n = static_cast<uint32_t>(g_cluster->size());
    ccl::CollectiveRunner runner(*g_cluster);
    std::vector<std::string> failures;
    size_t cases = 0;
    uint32_t seed = 1;
    // Past a few pages a part per chip, size changes only the pipelining,
    // which no type changes: big clusters stop at 128 KiB a chip, and the
    // megabyte case runs for one type of each width (every type's math runs
    // at the smaller sizes).
    const uint64_t largest = n > 8 ? n * (128 << 10) : 16 << 20;
    for (abi::DataType t : {abi::kF32, abi::kBF16, abi::kF16, abi::kI32}) {
        const uint64_t e = ccl::dtype_size(t);
        for (uint64_t bytes : {e, e * (n - 1), e * (1000 * n + 7), uint64_t(1 << 20) + 12 * e}) {
            if (bytes > (1 << 20) && (t == abi::kF16 || t == abi::kI32)) continue;
            ++cases;
            const std::string f = run_one(runner, hierarchical(bytes, t), seed++);
            if (!f.empty()) failures.push_back(f);
        }
        ccl::OpRequest maxed = hierarchical(4, t);
        maxed.redop = abi::kMathMax;
        const std::string f = run_one(runner, maxed, seed++);
        ++cases;
        if (!f.empty()) failures.push_back(f);
    }
    const std::string big = run_one(runner, hierarchical(largest), seed++);
    if (!big.empty()) failures.push_back(big);
    report(failures, cases + 1);
}

void test_in_place_on_the_callers_buffers(void**) {
    ccl::CollectiveRunner runner(*g_cluster);
    ccl::OpRequest r = hierarchical(3 * 4096 + 12);
    r.send = r.recv = g_cluster->board().dram.base + (5 << 20) + 4;
    const std::string f = run_one(runner, r, 77);
    if (!f.empty()) fail_msg("%s", f.c_str());
}

void test_over_the_fabric(void**) {
    ccl::RunnerOptions o;
    o.transport = "fabric";
    ccl::CollectiveRunner runner(*g_cluster, o);
    std::vector<std::string> failures;
    for (uint64_t bytes : {uint64_t(4), uint64_t(65536 + 8)}) {
        const std::string f = run_one(runner, hierarchical(bytes), 90 + uint32_t(bytes));
        if (!f.empty()) failures.push_back(f);
    }
    report(failures, 2);
}

// The root is only an argument: a corner root gives the same sums.
void test_the_root_moves_by_its_knob(void**) {
    setenv("WEFT_HIERARCHICAL_ROOT", "0", 1);
    ccl::CollectiveRunner runner(*g_cluster);
    const std::string f = run_one(runner, hierarchical(40000), 123);
    unsetenv("WEFT_HIERARCHICAL_ROOT");
    if (!f.empty()) fail_msg("root 0: %s", f.c_str());
}

// auto runs an algorithm that fits; the tuning picks hierarchical for it.
void test_auto_runs_an_algorithm_that_fits(void**) {
    ccl::CollectiveRunner runner(*g_cluster);
    ccl::OpRequest r = hierarchical(256 * 1024);
    r.algo = "auto";
    const std::string f = run_one(runner, r, 321);
    if (!f.empty()) fail_msg("%s", f.c_str());
    setenv("WEFT_ALL_REDUCE_ALGO", "hierarchical", 1);
    const ccl::CaseResult res = ccl::run_case(runner, *g_cluster, r, 322);
    unsetenv("WEFT_ALL_REDUCE_ALGO");
    assert_string_equal(res.timing.algo.c_str(), "hierarchical");
    assert_int_equal(res.check.wrong, 0);
    setenv("WEFT_ALL_REDUCE_ALGO", "hierarchial", 1);  // a typo is refused by name, and the cluster stays usable
    const std::string typo = run_one(runner, r, 323);
    unsetenv("WEFT_ALL_REDUCE_ALGO");
    assert_non_null(strstr(typo.c_str(), "WEFT_ALL_REDUCE_ALGO names 'hierarchial', which is not an all_reduce"));
    const std::string after = run_one(runner, r, 324);
    if (!after.empty()) fail_msg("after the refusal: %s", after.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_name = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_and_size),
        cmocka_unit_test(test_in_place_on_the_callers_buffers),
        cmocka_unit_test(test_over_the_fabric),
        cmocka_unit_test(test_the_root_moves_by_its_knob),
        cmocka_unit_test(test_auto_runs_an_algorithm_that_fits),
    };
    return cmocka_run_group_tests_name(("hierarchical all-reduce on " + g_name).c_str(), tests, setup, teardown);
}
