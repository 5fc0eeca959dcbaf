// The cost model `--algo auto` chooses with. An op's time on this platform is
// modelled from its lowered form: a fixed launch cost, a cost per op on its
// critical path (each is a wait for another core: the latency term), and a
// cost per EDM message on the busiest stream (the bandwidth term).
// The three coefficients are fitted by `make bench` to measurements of every
// algorithm on ring8 (per op and per algorithm), then each algorithm's
// residual at each measured size is kept as a calibration (on ring8 only), and
// all is stored in data/cost_model/<cluster>.json; `weft bench --fit` prints a fit.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ccl/collective.h"
#include "ccl/lowering.h"

namespace weft::ccl {

struct CostFeatures {
    double critical_path = 0;   // ops that must run one after another
    double busiest_stream = 0;  // messages
    static CostFeatures of(const LoweredOp& op);
};

struct CostCoefficients {
    // Seconds: launch, per op on the critical path, per message of the busiest stream.
    double launch = 2e-3, per_step = 60e-6, per_message = 40e-6;
    double predict(const CostFeatures& f) const {
        return launch + per_step * f.critical_path + per_message * f.busiest_stream;
    }
    // Least squares on relative error, coefficients kept non-negative.
    static CostCoefficients fit(const std::vector<std::pair<CostFeatures, double>>& points);
};

// What the three terms miss for one algorithm: the measured time over the
// predicted one at each size the bench measured. Three terms fitted over four
// orders of magnitude of size leave 10-20% residuals at single sizes, as much
// as the gap between the close contenders auto has to tell apart there.
struct Calibration {
    std::vector<std::pair<uint64_t, double>> points;  // (bytes, measured / predicted), by bytes
    // Interpolated in log-log between measured sizes; the nearest end outside them; 1 without points.
    double at(uint64_t bytes) const;
};

struct CostModel {
    // Most specific first: per algorithm ("all_reduce/ring", as NCCL's tuning
    // model keeps a latency and a bandwidth per algorithm: the features alone
    // do not tell apart algorithms whose costs differ in kind, e.g. host-side
    // reduction against forwarding), then per op, then `fallback`.
    std::map<std::string, CostCoefficients> per_algo;
    std::map<std::string, CostCoefficients> per_op;  // by collective_name
    CostCoefficients fallback;
    // By algo_key; measured on the cluster `calibrated_on` and used only there:
    // residuals on 8 chips sharing a host say little about 2 or 4.
    std::map<std::string, Calibration> calibration;
    std::string calibrated_on;
    std::string source = "built-in defaults";

    static std::string algo_key(Collective op, const std::string& algo) { return collective_name(op) + "/" + algo; }
    const CostCoefficients& coefficients(Collective op, const std::string& algo) const;
    double predict(const OpRequest& r, const std::string& algo, const LoweredOp& op) const;
    double predict(Collective op, const std::string& algo, uint64_t bytes, const CostFeatures& f) const;
    // data/cost_model/<name>.json in the source tree, else ring8's (without its
    // calibration), else the defaults.
    static CostModel for_cluster(const std::string& cluster_name);
    // One file, for a cluster of that name (which decides whether its calibration applies).
    static CostModel load(const std::string& path, const std::string& cluster_name);
    void save(const std::string& path) const;
};

}  // namespace weft::ccl
