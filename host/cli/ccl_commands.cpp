#include "cli/ccl_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ccl/op_case.h"
#include "common/error.h"
#include "common/plot.h"

namespace weft::cli {
namespace {

ccl::OpRequest request_of(const CclArgs& a) {
    ccl::OpRequest r;
    if (a.op.empty()) throw Error("which op? (weft run OP, e.g. weft run all_reduce)");
    r.op = ccl::parse_collective(a.op);
    r.dtype = ccl::parse_dtype(a.dtype);
    r.redop = ccl::parse_redop(a.redop);
    r.algo = a.algo;
    r.root = a.root;
    r.bytes = a.size;
    if (!a.shape.empty()) {
        std::stringstream s(a.shape);
        std::string part;
        size_t d = 0;
        while (std::getline(s, part, ',')) {
            if (d >= 4) throw Error("--shape takes four sizes a,b,c,d");
            try {
                r.shape[d++] = std::stoull(part);
            } catch (...) {
                throw Error("--shape " + a.shape + ": '" + part + "' is not a size");
            }
        }
        if (d != 4) throw Error("--shape takes four sizes a,b,c,d");
        r.dim = a.dim;
    }
    return r;
}

std::string ring_text(const ccl::CollectiveRunner& run) {
    std::string s;
    for (uint32_t c : run.ring()) s += (s.empty() ? "" : "-") + std::to_string(c);
    return s;
}

double algbw(uint64_t bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

}  // namespace

int cmd_run(Cluster& cluster, const CclArgs& a) {
    ccl::OpRequest r = request_of(a);
    if (r.bytes == 0 && r.shape[0] == 0) r.bytes = 1 << 20;
    ccl::CollectiveRunner run(cluster);
    const uint32_t n = static_cast<uint32_t>(cluster.size());
    std::printf("%s on %u chips, ring %s (stretch %.2f)\n", ccl::collective_name(r.op).c_str(), n, ring_text(run).c_str(),
                run.ring_stretch());
    const ccl::CaseResult res = ccl::run_case(run, cluster, r, 1);
    const uint64_t bytes = res.layout.elements * res.layout.element;
    const double alg = algbw(bytes, res.timing.seconds);
    std::printf("  algo %s%s, %s %s, %llu bytes (%llu elements), %u workers, %u EDM channels", res.timing.algo.c_str(),
                r.algo == "auto" ? " (auto)" : "", ccl::dtype_name(r.dtype).c_str(),
                ccl::reduces(r.op) ? ccl::redop_name(r.redop).c_str() : "-", (unsigned long long)bytes,
                (unsigned long long)res.layout.elements, res.timing.workers, res.timing.streams);
    if (res.timing.planes > 1) std::printf(", every hop over %u planes", res.timing.planes);
    std::printf("\n");
    std::printf("  time %.3f ms, algbw %.3f GB/s, busbw %.3f GB/s\n", res.timing.seconds * 1e3, alg,
                alg * ccl::bus_factor(r.op, n));
    if (res.check.wrong) {
        std::printf("  check: %llu of %llu elements WRONG; first: %s\n", (unsigned long long)res.check.wrong,
                    (unsigned long long)res.check.checked, res.check.first_wrong.c_str());
        return 1;
    }
    std::printf("  check: %llu elements match the host reference\n", (unsigned long long)res.check.checked);
    return 0;
}

int cmd_bench(Cluster& cluster, const CclArgs& a) {
    ccl::OpRequest base = request_of(a);
    const uint32_t n = static_cast<uint32_t>(cluster.size());
    ccl::CollectiveRunner run(cluster);
    const uint64_t max_bytes = a.max_bytes ? a.max_bytes : a.min_bytes;
    if (a.factor < 2) throw Error("-f must be at least 2");
    if (a.min_bytes == 0 || max_bytes < a.min_bytes) throw Error("need 0 < -b <= -e");
    std::vector<std::string> algos;
    if (a.all_algos || a.algo == "all") algos = ccl::algorithms(base.op);
    else algos = {a.algo};
    const bool tty = isatty(STDERR_FILENO);
    std::printf("# %s on %u chips, ring %s (stretch %.2f), %s %s\n", ccl::collective_name(base.op).c_str(), n,
                ring_text(run).c_str(), run.ring_stretch(), ccl::dtype_name(base.dtype).c_str(),
                ccl::reduces(base.op) ? ccl::redop_name(base.redop).c_str() : "");
    std::printf("# %12s %12s %6s %6s %6s %-13s %12s %9s %9s %8s\n", "size(B)", "count", "type", "redop", "root", "algo",
                "time(us)", "algbw", "busbw", "#wrong");
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::pair<ccl::CostFeatures, double>> fit_points;
    double bus_sum = 0;
    int bus_n = 0;
    uint64_t wrong_total = 0;
    std::vector<uint64_t> sizes;
    for (uint64_t s = a.min_bytes; s <= max_bytes; s *= a.factor) sizes.push_back(s);
    size_t done = 0;
    for (uint64_t size : sizes)
        for (const std::string& algo : algos) {
            ccl::OpRequest r = base;
            r.bytes = size - size % ccl::dtype_size(r.dtype);
            r.algo = algo;
            if (tty)
                std::fprintf(stderr, "\r  [%zu/%zu] %s %llu B ...          ", ++done, sizes.size() * algos.size(),
                             algo.c_str(), (unsigned long long)size);
            const uint32_t iters = a.iters ? a.iters : (size <= (1u << 20) ? 5 : size <= (16u << 20) ? 3 : 2);
            // The first run is checked (the #wrong column); warm-ups and timed runs are not.
            ccl::CaseResult first = ccl::run_case(run, cluster, r, 1, a.check);
            for (uint32_t w = 1; w < a.warmup; ++w) ccl::run_case(run, cluster, r, 1, false);
            double total = 0;
            for (uint32_t i = 0; i < iters; ++i) total += ccl::run_case(run, cluster, r, 1, false).timing.seconds;
            const double t = total / iters;
            const uint64_t bytes = first.layout.elements * first.layout.element;
            const double alg = algbw(bytes, t), bus = alg * ccl::bus_factor(r.op, n);
            if (tty) std::fprintf(stderr, "\r%60s\r", "");
            std::printf("  %12llu %12llu %6s %6s %6d %-13s %12.1f %9.3f %9.3f %8llu\n", (unsigned long long)bytes,
                        (unsigned long long)first.layout.elements, ccl::dtype_name(r.dtype).c_str(),
                        ccl::reduces(r.op) ? ccl::redop_name(r.redop).c_str() : "-",
                        r.op == ccl::Collective::kBroadcast || r.op == ccl::Collective::kReduce ||
                                r.op == ccl::Collective::kGather || r.op == ccl::Collective::kScatter
                            ? int(r.root)
                            : -1,
                        first.timing.algo.c_str(), t * 1e6, alg, bus, (unsigned long long)first.check.wrong);
            std::fflush(stdout);
            if (first.check.wrong) std::printf("#   first wrong: %s\n", first.check.first_wrong.c_str());
            wrong_total += first.check.wrong;
            bus_sum += bus;
            ++bus_n;
            rows.push_back({{"op", ccl::collective_name(r.op)}, {"algo", first.timing.algo}, {"requested", algo},
                            {"bytes", bytes}, {"count", first.layout.elements}, {"type", ccl::dtype_name(r.dtype)},
                            {"redop", ccl::redop_name(r.redop)}, {"time_us", t * 1e6}, {"algbw_gbs", alg},
                            {"busbw_gbs", bus}, {"wrong", first.check.wrong}});
            if (a.fit) fit_points.push_back({first.timing.features, t});
        }
    std::printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong_total, wrong_total ? "FAILED" : "OK");
    std::printf("# Avg bus bandwidth    : %.4f GB/s\n", bus_n ? bus_sum / bus_n : 0.0);
    if (!a.json.empty()) {
        std::ofstream out(a.json);
        if (!out) throw Error("cannot write " + a.json);
        out << nlohmann::json{{"op", ccl::collective_name(base.op)}, {"chips", n}, {"rows", rows}}.dump(1) << "\n";
    }
    if (!a.csv.empty()) {
        std::ofstream out(a.csv);
        if (!out) throw Error("cannot write " + a.csv);
        out << "op,algo,bytes,count,type,redop,time_us,algbw_gbs,busbw_gbs,wrong\n";
        for (const auto& row : rows)
            out << row["op"].get<std::string>() << "," << row["algo"].get<std::string>() << "," << row["bytes"] << ","
                << row["count"] << "," << row["type"].get<std::string>() << "," << row["redop"].get<std::string>() << ","
                << row["time_us"] << "," << row["algbw_gbs"] << "," << row["busbw_gbs"] << "," << row["wrong"] << "\n";
    }
    if (!a.png.empty()) {
        PlotSpec spec;
        spec.title = ccl::collective_name(base.op) + " on " + std::to_string(n) + " chips, " + ccl::dtype_name(base.dtype);
        spec.x_label = "message size (bytes)";
        spec.y_label = "busbw (GB/s)";
        for (const std::string& algo : algos) {
            PlotSeries series{algo, {}};
            for (const auto& row : rows)
                if (row["requested"] == algo) series.points.push_back({row["bytes"].get<double>(), row["busbw_gbs"].get<double>()});
            spec.series.push_back(series);
        }
        write_line_plot_png(a.png, spec);
        std::printf("# chart: %s\n", a.png.c_str());
    }
    if (a.fit) {
        const ccl::CostCoefficients m = ccl::CostCoefficients::fit(fit_points);
        std::printf("# cost model for %s: launch %.3g s + %.3g s/step + %.3g s/message\n",
                    ccl::collective_name(base.op).c_str(), m.launch, m.per_step, m.per_message);
    }
    return wrong_total ? 1 : 0;
}

}  // namespace weft::cli
