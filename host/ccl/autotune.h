// The cost model `--algo auto` chooses with. An op's time on this platform is
// modelled from its lowered form: a fixed launch cost, a cost per instruction
// of the longest worker program (each is a hop of latency: a wait, a slot
// hand-over), and a cost per EDM message on the busiest stream (bandwidth).
// The three coefficients are fitted by `weft bench --fit` to measurements of
// every algorithm on a cluster and stored in data/cost_model/<cluster>.json.
#pragma once
#include <string>
#include <vector>

#include "ccl/collective.h"
#include "ccl/lowering.h"

namespace weft::ccl {

struct CostFeatures {
    double longest_program = 0;  // instructions
    double busiest_stream = 0;   // messages
    static CostFeatures of(const LoweredOp& op);
};

struct CostModel {
    // Seconds: launch, per instruction, per message. Defaults measured on ring8.
    double launch = 2e-3, per_instruction = 60e-6, per_message = 40e-6;
    std::string source = "built-in defaults";

    double predict(const OpRequest& r, const std::string& algo, const LoweredOp& op) const;
    // data/cost_model/<name>.json in the source tree, else the defaults.
    static CostModel for_cluster(const std::string& cluster_name);
    // Least squares (coefficients kept non-negative) over measured points.
    static CostModel fit(const std::vector<std::pair<CostFeatures, double>>& points);
    void save(const std::string& path) const;
};

}  // namespace weft::ccl
