// The cost model --algo auto chooses with: the fit recovers the coefficients
// behind exact measurements, refuses to go negative, and a per-algorithm fit
// takes precedence over the op's.
#include <cmath>
#include <vector>

#include "ccl/autotune.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft::ccl;

namespace {

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 + 1e-6 * std::fabs(b); }

void test_fit_recovers_exact_coefficients(void**) {
    CostCoefficients truth;
    truth.launch = 2e-3;
    truth.per_step = 50e-6;
    truth.per_message = 300e-6;
    std::vector<std::pair<CostFeatures, double>> pts;
    for (double steps : {2.0, 14.0, 30.0})
        for (double messages : {1.0, 8.0, 512.0}) {
            CostFeatures f;
            f.critical_path = steps;
            f.busiest_stream = messages;
            pts.push_back({f, truth.predict(f)});
        }
    const CostCoefficients fit = CostCoefficients::fit(pts);
    assert_true(near(fit.launch, truth.launch));
    assert_true(near(fit.per_step, truth.per_step));
    assert_true(near(fit.per_message, truth.per_message));
}

// Times that fall with more steps would need a negative cost per step: the fit
// drops that term instead, so the model never rewards a longer critical path.
void test_fit_keeps_coefficients_non_negative(void**) {
    std::vector<std::pair<CostFeatures, double>> pts;
    for (int i = 1; i <= 6; ++i) {
        CostFeatures f;
        f.critical_path = 40.0 / i;
        f.busiest_stream = 10.0 * i;
        pts.push_back({f, 1e-3 + 1e-4 * f.busiest_stream - 1e-6 * f.critical_path});
    }
    const CostCoefficients fit = CostCoefficients::fit(pts);
    assert_true(fit.launch >= 0 && fit.per_step >= 0 && fit.per_message >= 0);
    assert_true(fit.per_step == 0);
    assert_true(fit.per_message > 0);
}

// Sizes too small to change an algorithm's steps: a constant critical path
// cannot be told from the launch cost. The fit keeps one of the two (their sum
// is what the points say) and still recovers the cost per message.
void test_fit_survives_a_feature_that_never_changes(void**) {
    std::vector<std::pair<CostFeatures, double>> pts;
    for (double messages : {1.0, 4.0, 16.0, 64.0}) {
        CostFeatures f;
        f.critical_path = 7;
        f.busiest_stream = messages;
        pts.push_back({f, 2e-3 + 7 * 50e-6 + 300e-6 * messages});
    }
    const CostCoefficients fit = CostCoefficients::fit(pts);
    assert_true(near(fit.launch + 7 * fit.per_step, 2e-3 + 7 * 50e-6));
    assert_true(near(fit.per_message, 300e-6));
    for (const auto& [f, t] : pts) assert_true(near(fit.predict(f), t));
}

void test_per_algorithm_coefficients_come_first(void**) {
    CostModel m;
    m.per_op["all_reduce"].launch = 1e-3;
    m.per_algo[CostModel::algo_key(Collective::kAllReduce, "ring")].launch = 5e-3;
    OpRequest r;
    r.op = Collective::kAllReduce;
    const LoweredOp empty;  // no streams, no critical path: the launch cost alone
    assert_true(near(m.predict(r, "ring", empty), 5e-3));
    assert_true(near(m.predict(r, "tree", empty), 1e-3));  // no fit of its own: the op's
    r.op = Collective::kBroadcast;
    m.fallback.launch = 7e-3;
    assert_true(near(m.predict(r, "ring", empty), 7e-3));  // neither: the fallback
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recovers_exact_coefficients),
        cmocka_unit_test(test_fit_keeps_coefficients_non_negative),
        cmocka_unit_test(test_fit_survives_a_feature_that_never_changes),
        cmocka_unit_test(test_per_algorithm_coefficients_come_first),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
