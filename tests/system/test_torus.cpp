// Collectives on a 4x4 torus of real QEMU chips, where every chip has all
// four ports cabled: `--algo auto` picks only among the algorithms that fit
// the board's worker cores (full_mesh would need a sender and a receiver on
// each of four ports: eight workers of four).
#include <cstring>

#include "ccl/op_case.h"
#include "common/error.h"
#include "system_test.h"

using namespace weft;
using namespace weft::test;

namespace {

std::unique_ptr<Cluster> g_cluster;

int setup(void**) { return start_for_group("torus4x4", &g_cluster); }
int teardown(void**) {
    g_cluster.reset();
    return 0;
}

void test_auto_picks_an_algorithm_that_fits(void**) {
    ccl::CollectiveRunner runner(*g_cluster);
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.bytes = 4096;
    r.algo = "full_mesh";
    std::string error;
    try {
        runner.lower_op(r, r.algo);
    } catch (const Error& e) {
        error = e.what();
    }
    assert_non_null(strstr(error.c_str(), "would need 8 worker cores"));
    for (uint64_t bytes : {uint64_t(4096), uint64_t(1) << 20}) {
        r.algo = "auto";
        r.bytes = bytes;
        const ccl::CaseResult res = ccl::run_case(runner, *g_cluster, r, 5);
        // Over the EDM full_mesh does not fit; over the fabric its folded workers do.
        if (res.timing.algo == "full_mesh") assert_string_equal(res.timing.transport.c_str(), "fabric");
        assert_true(res.check.checked > 0);
        if (res.check.wrong) fail_msg("%s: %s", res.timing.algo.c_str(), res.check.first_wrong.c_str());
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_picks_an_algorithm_that_fits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
