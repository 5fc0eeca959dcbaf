// The cost model --algo auto chooses with: the fit recovers the coefficients
// behind exact measurements, refuses to go negative, and a per-algorithm fit
// takes precedence over the op's; the calibration makes measured sizes exact,
// interpolates between them and applies only on the cluster it was measured on.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
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

void test_calibration_interpolates_in_log_log(void**) {
    Calibration c;
    assert_true(near(c.at(4096), 1.0));  // nothing measured: no correction
    c.points = {{1024, 2.0}, {4096, 0.5}, {16384, 0.5}};
    assert_true(near(c.at(1024), 2.0));
    assert_true(near(c.at(2048), 1.0));  // halfway in log size: the geometric mean
    assert_true(near(c.at(8192), 0.5));
    assert_true(near(c.at(16), 2.0));  // outside: the nearest measured size
    assert_true(near(c.at(1u << 30), 0.5));
}

// Two algorithms whose three-term fits get their order wrong at one size (the
// fit's residual is larger than the gap between them): calibrated on the
// measurements, the model predicts each measured time and picks the faster.
void test_calibration_corrects_the_fit_at_measured_sizes(void**) {
    CostModel m;
    const std::string a = CostModel::algo_key(Collective::kAllGather, "ring_bidir");
    const std::string b = CostModel::algo_key(Collective::kAllGather, "ring_halfway");
    m.per_algo[a].launch = 10e-3, m.per_algo[a].per_message = 500e-6, m.per_algo[a].per_step = 0;
    m.per_algo[b].launch = 10e-3, m.per_algo[b].per_message = 520e-6, m.per_algo[b].per_step = 0;
    CostFeatures f;
    f.busiest_stream = 1000;
    const uint64_t size = 64ull << 20;
    const double measured_a = 0.60, measured_b = 0.54;  // b is faster, the fits say a
    assert_true(m.predict(Collective::kAllGather, "ring_bidir", size, f) <
                m.predict(Collective::kAllGather, "ring_halfway", size, f));
    m.calibration[a].points = {{size, measured_a / m.per_algo[a].predict(f)}};
    m.calibration[b].points = {{size, measured_b / m.per_algo[b].predict(f)}};
    assert_true(near(m.predict(Collective::kAllGather, "ring_bidir", size, f), measured_a));
    assert_true(near(m.predict(Collective::kAllGather, "ring_halfway", size, f), measured_b));
}

void test_calibration_applies_only_on_its_cluster(void**) {
    CostModel m;
    m.per_op["all_reduce"].launch = 3e-3;
    const std::string key = CostModel::algo_key(Collective::kAllReduce, "ring");
    m.calibration[key].points = {{1024, 2.0}, {1u << 20, 0.5}};
    m.calibrated_on = "ring8";
    char path[] = "/tmp/weft-cost-model-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    m.save(path);
    const CostModel on_ring8 = CostModel::load(path, "ring8");
    const CostModel on_line4 = CostModel::load(path, "line4");
    std::remove(path);
    const CostFeatures none;
    assert_true(near(on_ring8.predict(Collective::kAllReduce, "ring", 1024, none), 6e-3));
    assert_true(near(on_ring8.predict(Collective::kAllReduce, "ring", 1u << 20, none), 1.5e-3));
    assert_true(on_line4.calibration.empty());
    assert_true(near(on_line4.predict(Collective::kAllReduce, "ring", 1024, none), 3e-3));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recovers_exact_coefficients),
        cmocka_unit_test(test_fit_keeps_coefficients_non_negative),
        cmocka_unit_test(test_fit_survives_a_feature_that_never_changes),
        cmocka_unit_test(test_per_algorithm_coefficients_come_first),
        cmocka_unit_test(test_calibration_interpolates_in_log_log),
        cmocka_unit_test(test_calibration_corrects_the_fit_at_measured_sizes),
        cmocka_unit_test(test_calibration_applies_only_on_its_cluster),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
