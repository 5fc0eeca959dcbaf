#include "ccl/autotune.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "driver/paths.h"

namespace weft::ccl {

CostFeatures CostFeatures::of(const LoweredOp& op) {
    CostFeatures f;
    f.critical_path = op.critical_path;
    for (const Stream& s : op.streams) f.busiest_stream = std::max(f.busiest_stream, double(s.messages));
    return f;
}

const CostCoefficients& CostModel::coefficients(Collective op, const std::string& algo) const {
    if (auto it = per_algo.find(algo_key(op, algo)); it != per_algo.end()) return it->second;
    auto it = per_op.find(collective_name(op));
    return it == per_op.end() ? fallback : it->second;
}

double CostModel::predict(Collective op, const std::string& algo, uint64_t bytes, const CostFeatures& f) const {
    const double t = coefficients(op, algo).predict(f);
    auto it = calibration.find(algo_key(op, algo));
    return it == calibration.end() ? t : t * it->second.at(bytes);
}

double CostModel::predict(const OpRequest& r, const std::string& algo, const LoweredOp& op) const {
    return predict(r.op, algo, r.bytes, CostFeatures::of(op));
}

double Calibration::at(uint64_t bytes) const {
    if (points.empty()) return 1.0;
    if (bytes <= points.front().first) return points.front().second;
    if (bytes >= points.back().first) return points.back().second;
    size_t i = 1;
    while (points[i].first < bytes) ++i;
    const auto& [b0, r0] = points[i - 1];
    const auto& [b1, r1] = points[i];
    const double x = std::log(double(bytes) / double(b0)) / std::log(double(b1) / double(b0));
    return std::exp(std::log(r0) + x * (std::log(r1) - std::log(r0)));
}

namespace {
CostCoefficients coefficients_of(const nlohmann::json& j) {
    CostCoefficients c;
    c.launch = j.at("launch_s").get<double>();
    c.per_step = j.at("per_step_s").get<double>();
    c.per_message = j.at("per_message_s").get<double>();
    return c;
}
nlohmann::json json_of(const CostCoefficients& c) {
    return {{"launch_s", c.launch}, {"per_step_s", c.per_step}, {"per_message_s", c.per_message}};
}
}  // namespace

CostModel CostModel::for_cluster(const std::string& name) {
    if (name.empty()) return CostModel{};
    // A cluster without its own fit uses ring8's: same chips, same links, same host.
    const std::string own = paths::source_root() + "/data/cost_model/" + name + ".json";
    if (std::ifstream(own)) return load(own, name);
    const std::string ring8 = paths::source_root() + "/data/cost_model/ring8.json";
    if (std::ifstream(ring8)) return load(ring8, name);
    return CostModel{};
}

CostModel CostModel::load(const std::string& path, const std::string& cluster_name) {
    CostModel m;
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot read the cost model");
    try {
        const auto j = nlohmann::json::parse(in);
        m.fallback = coefficients_of(j.at("fallback"));
        for (auto& [op, c] : j.at("ops").items()) m.per_op[op] = coefficients_of(c);
        if (j.contains("algorithms"))
            for (auto& [key, c] : j.at("algorithms").items()) m.per_algo[key] = coefficients_of(c);
        if (j.value("calibrated_on", std::string()) == cluster_name) {
            m.calibrated_on = cluster_name;
            for (auto& [key, pts] : j.at("calibration").items()) {
                Calibration& cal = m.calibration[key];
                for (const auto& p : pts) {
                    const double ratio = p.at(1).get<double>();
                    if (!(ratio > 0) || !std::isfinite(ratio))
                        throw Error("calibration of " + key + ": ratio " + std::to_string(ratio) +
                                    " is not a positive number");
                    cal.points.push_back({p.at(0).get<uint64_t>(), ratio});
                }
                std::sort(cal.points.begin(), cal.points.end());
            }
        }
        m.source = path;
    } catch (const std::exception& e) {
        throw Error(path + ": not a cost model (" + e.what() + ")");
    }
    return m;
}

CostCoefficients CostCoefficients::fit(const std::vector<std::pair<CostFeatures, double>>& pts) {
    // Minimise relative error (times span 4 orders of magnitude): weight each row by 1/t.
    // Solve the 3x3 normal equations; drop a coefficient that comes out negative,
    // or that the points cannot tell from the others (an algorithm whose steps
    // do not change over the sizes measured), and refit.
    std::array<bool, 3> use{true, true, true};
    std::array<double, 3> c{};
    for (int round = 0; round < 6; ++round) {
        double a[3][4] = {};
        for (const auto& [f, t] : pts) {
            const double w = 1.0 / std::max(t, 1e-6);
            const double x[3] = {use[0] ? w : 0, use[1] ? w * f.critical_path : 0, use[2] ? w * f.busiest_stream : 0};
            for (int i = 0; i < 3; ++i) {
                for (int j = 0; j < 3; ++j) a[i][j] += x[i] * x[j];
                a[i][3] += x[i] * (w * t);
            }
        }
        double norm[3];  // each coefficient's column before elimination
        for (int i = 0; i < 3; ++i) {
            if (!use[i]) a[i][i] = 1, a[i][3] = 0;
            norm[i] = a[i][i];
        }
        bool dependent = false;
        for (int i = 0; i < 3 && !dependent; ++i) {  // Gauss-Jordan; no row swaps, so row i stays coefficient i
            // What elimination leaves of a column is the part the columns before
            // it do not explain: next to nothing, and the points cannot fit it.
            if (!(std::fabs(a[i][i]) > 1e-9 * norm[i])) {
                if (!use[i]) throw Error("cost model fit: the measurements do not determine it");
                use[i] = false;  // a combination of the ones before it
                dependent = true;
                break;
            }
            for (int k = 0; k < 3; ++k) {
                if (k == i) continue;
                const double m = a[k][i] / a[i][i];
                for (int j = i; j < 4; ++j) a[k][j] -= m * a[i][j];
            }
        }
        if (dependent) continue;
        bool again = false;
        for (int i = 0; i < 3; ++i) {
            c[i] = a[i][3] / a[i][i];
            if (use[i] && c[i] < 0) use[i] = false, again = true;
        }
        if (!again) break;
    }
    CostCoefficients m;
    m.launch = std::max(0.0, c[0]);
    m.per_step = std::max(0.0, c[1]);
    m.per_message = std::max(0.0, c[2]);
    return m;
}

void CostModel::save(const std::string& path) const {
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [op, c] : per_op) ops[op] = json_of(c);
    nlohmann::json algos = nlohmann::json::object();
    for (const auto& [key, c] : per_algo) algos[key] = json_of(c);
    nlohmann::json j{{"fallback", json_of(fallback)}, {"ops", ops}, {"algorithms", algos}};
    if (!calibrated_on.empty()) {
        nlohmann::json cal = nlohmann::json::object();
        for (const auto& [key, c] : calibration)
            for (const auto& [bytes, ratio] : c.points) cal[key].push_back({bytes, ratio});
        j["calibrated_on"] = calibrated_on;
        j["calibration"] = cal;
    }
    std::ofstream out(path);
    if (!out) throw Error("cannot write " + path);
    out << j.dump(2) << "\n";
}

}  // namespace weft::ccl
