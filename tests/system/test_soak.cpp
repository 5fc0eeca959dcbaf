// A soak on `line4`: 200 small collective ops with 1% of the frames dropped
// on every cable, a cable pulled and plugged back while an op runs, and a
// chip reset while another runs. Every op is either correct or fails with an
// error that says what failed; the cluster runs correct ops after each
// mishap and at the end.
#include <thread>

#include "ccl/op_case.h"
#include "system_test.h"

using namespace weft;
using namespace weft::test;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Cluster> g_cluster;

int setup(void**) { return start_for_group("line4", &g_cluster); }

int teardown(void**) {
    g_cluster.reset();
    return 0;
}

constexpr int kOps = 200;

ccl::OpRequest op_number(int i) {
    static const ccl::Collective ops[] = {ccl::Collective::kAllReduce, ccl::Collective::kAllGather,
                                          ccl::Collective::kReduceScatter, ccl::Collective::kBroadcast};
    ccl::OpRequest r;
    r.op = ops[i % 4];
    r.bytes = 4096 + 1024 * (i % 7);
    r.root = i % 4;
    return r;
}

// What one op did: "" if correct, else its error.
std::string run_op(ccl::CollectiveRunner& run, int i) {
    try {
        const ccl::CaseResult res = ccl::run_case(run, *g_cluster, op_number(i), i);
        if (res.check.checked == 0) return "nothing was checked";
        return res.check.wrong ? std::to_string(res.check.wrong) + " wrong: " + res.check.first_wrong : "";
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
}

// An error a user can act on names what failed: a deadline, a fault, a chip.
bool clear_error(const std::string& e) {
    return contains(e, "error: ") && (contains(e, "deadline") || contains(e, "FAULT") || contains(e, "chip "));
}

void test_soak_under_drops_a_pull_and_a_reset(void**) {
    Cluster& c = *g_cluster;
    for (const LinkInfo& l : c.links()) c.set_fault(l.chip_a, l.port_a, {{"drop_rate", 0.01}});
    ccl::RunnerOptions o;
    o.timeout = milliseconds(4000);
    ccl::CollectiveRunner run(c, o);
    const LinkInfo cable = c.links()[1];
    int failed = 0, correct = 0;
    for (int i = 0; i < kOps; ++i) {
        std::thread mishap;
        if (i == 70)
            mishap = std::thread([&] {
                c.set_link(cable.chip_a, cable.port_a, false);
                std::this_thread::sleep_for(milliseconds(300));
                c.set_link(cable.chip_a, cable.port_a, true);
            });
        if (i == 140)
            mishap = std::thread([&] {
                std::this_thread::sleep_for(milliseconds(5));
                try {
                    c.reset_chip(2);
                } catch (const Error&) {
                }
            });
        const std::string got = run_op(run, i);
        if (mishap.joinable()) mishap.join();
        if (got.empty()) {
            ++correct;
        } else {
            ++failed;
            if (!clear_error(got)) fail_msg("op %d failed without saying what: %s", i, got.c_str());
            // After a failure the very next op must work.
            const std::string next = run_op(run, i + 1000);
            if (!next.empty()) fail_msg("op %d after a failure: %s", i, next.c_str());
        }
        if (i % 50 == 49) fprintf(stderr, "%d ops: %d correct, %d failed with an error\n", i + 1, correct, failed);
    }
    for (const LinkInfo& l : c.links()) c.set_fault(l.chip_a, l.port_a, {{"clear", true}});
    assert_true(correct >= kOps - 10);
    assert_string_equal(run_op(run, 9999).c_str(), "");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak_under_drops_a_pull_and_a_reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
