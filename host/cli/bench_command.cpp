// weft bench OP: an nccl-tests style sweep over sizes (and algorithms).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>

#include "ccl/op_case.h"
#include "cli/arguments.h"
#include "cli/version.h"
#include "cli/bench_report.h"
#include "cli/ccl_request.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/gnuplot.h"
#include "common/knobs.h"
#include "driver/trace.h"

namespace weft::cli {
namespace {

struct BenchArgs {
    CclArgs ccl;
    uint64_t min_bytes = 1024, max_bytes = 0;  // max 0: min
    uint64_t step_bytes = 0;                   // > 0: sizes step by it, not by the factor
    uint32_t factor = 2, iters = 0, warmup = 1, check = 1;
    bool all_algos = false, no_check = false, fit = false, out_of_place_only = false;
    std::string json, csv, png, trace;

    bool checks() const { return check && !no_check; }  // -c 1 and no --no-check
};

// MIN, MIN*F, ... up to MAX; stops before a step could pass MAX, so never wraps.
std::vector<uint64_t> sweep_sizes(uint64_t min, uint64_t max, uint64_t factor) {
    std::vector<uint64_t> sizes;
    for (uint64_t s = min;; s *= factor) {
        sizes.push_back(s);
        if (s > max / factor) return sizes;
    }
}

std::vector<uint64_t> sizes_of(const BenchArgs& a) {
    const uint64_t max = a.max_bytes ? a.max_bytes : a.min_bytes;
    if (a.min_bytes > max)
        throw UsageError("-b/--minbytes " + std::to_string(a.min_bytes) + " is more than -e/--maxbytes " +
                         std::to_string(max));
    if (a.step_bytes == 0) return sweep_sizes(a.min_bytes, max, a.factor);
    std::vector<uint64_t> sizes;
    for (uint64_t s = a.min_bytes; s <= max; s += a.step_bytes) {
        sizes.push_back(s);
        if (max - s < a.step_bytes) break;
    }
    return sizes;
}

// Where the sweep is, on a terminal only: the table on stdout stays clean.
class Progress {
public:
    void show(size_t done, size_t total, const std::string& algo, uint64_t size) const {
        if (tty_)
            std::fprintf(stderr, "\r  [%zu/%zu] %s %llu B ...          ", done, total, algo.c_str(),
                         (unsigned long long)size);
    }
    void clear() const {
        if (tty_) std::fprintf(stderr, "\r%60s\r", "");
    }

private:
    bool tty_ = isatty(STDERR_FILENO);
};

// One size with one algorithm: the first run is checked (the #wrong column);
// warm-ups and timed runs are not.
struct Cell {
    ccl::CaseResult first;
    double seconds = 0;  // mean of the timed runs
    double fastest = 0, slowest = 0;
    uint32_t iters = 0;
    double alg = 0, bus = 0;
};

// Out of place, as nccl-tests' first columns, and in place (the input
// overwritten by the output at the bottom of DRAM), where the op has one.
struct Cells {
    Cell out;
    std::optional<Cell> in;
};

Cell measure(ccl::CollectiveRunner& run, Cluster& cluster, const ccl::OpRequest& r, uint64_t size, const BenchArgs& a) {
    Cell c;
    const uint32_t iters = a.iters ? a.iters : (size <= (1u << 20) ? 5 : size <= (16u << 20) ? 3 : 2);
    c.first = ccl::run_case(run, cluster, r, 1, a.checks());
    for (uint32_t w = 1; w < a.warmup; ++w) ccl::run_case(run, cluster, r, 1, false);
    double total = 0;
    c.iters = iters;
    for (uint32_t i = 0; i < iters; ++i) {
        const double t = ccl::run_case(run, cluster, r, 1, false).timing.seconds;
        total += t;
        c.fastest = i == 0 ? t : std::min(c.fastest, t);
        c.slowest = std::max(c.slowest, t);
    }
    c.seconds = total / iters;
    c.alg = algbw(c.first.layout.elements * c.first.layout.element, c.seconds);
    c.bus = c.alg * ccl::bus_factor(r.op, static_cast<uint32_t>(cluster.size()));
    return c;
}

Cells measure_both(ccl::CollectiveRunner& run, Cluster& cluster, const ccl::OpRequest& r, uint64_t size,
                   const BenchArgs& a) {
    Cells c{measure(run, cluster, r, size, a), std::nullopt};
    if (a.out_of_place_only || r.op == ccl::Collective::kSendRecv || r.shape[0] != 0) return c;
    ccl::OpRequest in_place = r;
    in_place.send = in_place.recv = cluster.board().dram.base;
    c.in = measure(run, cluster, in_place, size, a);
    return c;
}

int root_column(const ccl::OpRequest& r) {
    const bool rooted = r.op == ccl::Collective::kBroadcast || r.op == ccl::Collective::kReduce ||
                        r.op == ccl::Collective::kGather || r.op == ccl::Collective::kScatter;
    return rooted ? int(r.root) : -1;
}

void print_header(const ccl::OpRequest& base, const ccl::CollectiveRunner& run, uint32_t n, const BenchArgs& a,
                  const std::vector<uint64_t>& sizes) {
    // As nccl-tests does: the options this run used, then the table.
    std::printf("# weft bench %s: minBytes %llu maxBytes %llu step: %s warmup iters: %u iters: %s validation: %d\n",
                ccl::collective_name(base.op).c_str(), (unsigned long long)sizes.front(),
                (unsigned long long)sizes.back(),
                a.step_bytes ? (std::to_string(a.step_bytes) + "(bytes)").c_str()
                             : (std::to_string(a.factor) + "(factor)").c_str(),
                a.warmup, a.iters ? std::to_string(a.iters).c_str() : "5/3/2 by size", a.checks() ? 1 : 0);
    std::printf("# %s on %u chips, ring %s (stretch %.2f), %s %s\n", ccl::collective_name(base.op).c_str(), n,
                ring_text(run).c_str(), run.ring_stretch(), ccl::dtype_name(base.dtype).c_str(),
                ccl::reduces(base.op) ? ccl::redop_name(base.redop).c_str() : "");
    // Over the two groups of four columns (41 characters each), as nccl-tests does.
    std::printf("# %65s %s %s\n", "", "-------------- out-of-place -------------",
                "---------------- in-place ---------------");
    std::printf("# %12s %12s %6s %6s %6s %-18s %12s %9s %9s %8s %12s %9s %9s %8s %8s %7s %6s\n", "size(B)", "count",
                "type", "redop", "root", "algo", "time(us)", "algbw", "busbw", "#wrong", "time(us)", "algbw", "busbw",
                "#wrong", "wire/def", "bells", "b/c/s");
    std::printf(
        "# wire/def: payload bytes the cables carried / the algorithm's bytes on links; bells: doorbell\n"
        "# rings per op; b/c/s: per chip per step of the critical path (the out-of-place checked run; '-' with\n"
        "# --no-check). In place: the output over the input; '-' for an op without one or --out-of-place.\n");
}

// The checked run's traffic as the three last columns.
std::string traffic_columns(const ccl::CaseResult& c, uint32_t chips) {
    char buf[64];
    if (c.traffic.wire_bytes == 0 && c.traffic.doorbells == 0) return "       -       -      -";
    const double defined = double(c.timing.bytes_on_links);
    const double steps = std::max(1.0, c.timing.features.critical_path);
    std::snprintf(buf, sizeof buf, "%8.3f %7llu %6.2f", defined > 0 ? c.traffic.wire_bytes / defined : 0.0,
                  (unsigned long long)c.traffic.doorbells, double(c.traffic.doorbells) / chips / steps);
    return buf;
}

// #wrong is N/A where nothing was checked (--no-check), as nccl-tests prints it.
std::string time_columns(const std::optional<Cell>& c, bool checked) {
    char buf[64];
    if (!c) return "           -         -         -        -";
    const std::string wrong = checked ? std::to_string(c->first.check.wrong) : "N/A";
    std::snprintf(buf, sizeof buf, "%12.1f %9.3f %9.3f %8s", c->seconds * 1e6, c->alg, c->bus, wrong.c_str());
    return buf;
}

void print_row(const ccl::OpRequest& r, const Cells& cells, uint32_t chips, bool checked) {
    const Cell& c = cells.out;
    std::printf("  %12llu %12llu %6s %6s %6d %-18s %s %s %s\n",
                static_cast<unsigned long long>(c.first.layout.elements) * c.first.layout.element,
                (unsigned long long)c.first.layout.elements, ccl::dtype_name(r.dtype).c_str(),
                ccl::reduces(r.op) ? ccl::redop_name(r.redop).c_str() : "-", root_column(r),
                c.first.timing.algo.c_str(), time_columns(c, checked).c_str(), time_columns(cells.in, checked).c_str(),
                traffic_columns(c.first, chips).c_str());
    std::fflush(stdout);
    if (c.first.check.wrong) std::printf("#   first wrong: %s\n", c.first.check.first_wrong.c_str());
    if (cells.in && cells.in->first.check.wrong)
        std::printf("#   first wrong in place: %s\n", cells.in->first.check.first_wrong.c_str());
}

double rounded(double v, int decimals) {
    const double scale = std::pow(10.0, decimals);
    return std::round(v * scale) / scale;
}

// One cell's algorithm, times, bandwidths and check (null if unchecked): a row's, and its in-place part.
nlohmann::json timing_json(const Cell& c, bool checked) {
    return {{"algo", c.first.timing.algo},
            {"time_us", rounded(c.seconds * 1e6, 1)},
            {"time_min_us", rounded(c.fastest * 1e6, 1)},
            {"time_max_us", rounded(c.slowest * 1e6, 1)},
            {"iters", c.iters},
            {"algbw_gbs", rounded(c.alg, 6)},
            {"busbw_gbs", rounded(c.bus, 6)},
            {"wrong", checked ? nlohmann::json(c.first.check.wrong) : nlohmann::json(nullptr)}};
}

// What the rows add up to.
struct Sweep {
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::pair<ccl::CostFeatures, double>> fit_points;
    double bus_sum = 0;
    int bus_n = 0;
    uint64_t wrong = 0;

    void add(const ccl::OpRequest& r, const std::string& requested, const Cells& cells, bool checked) {
        const Cell& c = cells.out;
        wrong += c.first.check.wrong + (cells.in ? cells.in->first.check.wrong : 0);
        bus_sum += c.bus;
        ++bus_n;
        nlohmann::json row = timing_json(c, checked);
        row.update({{"op", ccl::collective_name(r.op)},
                    {"requested", requested},
                    {"bytes", c.first.layout.elements * c.first.layout.element},
                    {"count", c.first.layout.elements},
                    {"type", ccl::dtype_name(r.dtype)},
                    {"redop", ccl::redop_name(r.redop)},
                    {"wire_bytes", c.first.traffic.wire_bytes},
                    {"defined_bytes", c.first.timing.bytes_on_links},
                    {"doorbells", c.first.traffic.doorbells},
                    {"steps", c.first.timing.features.critical_path},
                    {"in_place", cells.in ? timing_json(*cells.in, checked) : nlohmann::json(nullptr)}});
        rows.push_back(std::move(row));
        fit_points.push_back({c.first.timing.features, c.seconds});
    }
};

Sweep sweep(ccl::CollectiveRunner& run, Cluster& cluster, const ccl::OpRequest& base,
            const std::vector<uint64_t>& sizes, const std::vector<std::string>& algos, const BenchArgs& a) {
    Sweep s;
    const Progress progress;
    size_t done = 0;
    for (uint64_t size : sizes)
        for (const std::string& algo : algos) {
            ccl::OpRequest r = base;
            r.bytes = size - size % ccl::dtype_size(r.dtype);
            r.algo = algo;
            progress.show(++done, sizes.size() * algos.size(), algo, size);
            const Cells c = measure_both(run, cluster, r, size, a);
            progress.clear();
            print_row(r, c, static_cast<uint32_t>(cluster.size()), a.checks());
            s.add(r, algo, c, a.checks());
        }
    return s;
}

// What a result file says about the run that made it.
nlohmann::json metadata(Cluster& cluster, const ccl::OpRequest& base, const BenchArgs& a) {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    return {{"cluster", cluster.info().value("name", "")},
            {"board", cluster.board().name},
            {"chips", cluster.size()},
            {"dtype", ccl::dtype_name(base.dtype)},
            {"redop", ccl::redop_name(base.redop)},
            {"transport", a.ccl.transport},
            {"iters", a.iters},  // 0: by size (5, 3 or 2), as -n 0; each row has its own
            {"warmup", a.warmup},
            {"checked", a.checks()},
            {"date", date},
            {"host", host},
            {"weft_version", version_text()}};
}

void report(const Sweep& s, const ccl::OpRequest& base, Cluster& cluster, const std::vector<std::string>& algos,
            const BenchArgs& a) {
    const uint32_t n = static_cast<uint32_t>(cluster.size());
    const std::string op = ccl::collective_name(base.op);
    const nlohmann::json meta = metadata(cluster, base, a);
    if (a.checks())
        std::printf("# Out of bounds values : %llu %s\n", (unsigned long long)s.wrong, s.wrong ? "FAILED" : "OK");
    else
        std::printf("# Out of bounds values : N/A (not checked)\n");
    std::printf("# Avg bus bandwidth    : %.4f GB/s\n", s.bus_n ? s.bus_sum / s.bus_n : 0.0);
    if (!a.json.empty()) write_bench_json(a.json, op, meta, s.rows);
    if (!a.csv.empty()) write_bench_csv(a.csv, meta, s.rows);
    if (!a.png.empty()) {
        const std::string iters = a.iters ? std::to_string(a.iters) + " timed runs" : "2-5 timed runs";
        const std::string redop = ccl::reduces(base.op) ? " " + ccl::redop_name(base.redop) : "";
        const std::string title = op + " on " + meta["cluster"].get<std::string>() + " (" + std::to_string(n) +
                                  " chips), " + ccl::dtype_name(base.dtype) + redop + ", " + iters +
                                  " per size: mean, min-max spread";
        const std::vector<std::string> lines = write_bench_png(a.png, title, algos, s.rows);
        std::string legend;
        for (const std::string& l : lines) legend += (legend.empty() ? "" : ", ") + l;
        std::printf("# chart: %s (%s; lines: %s)\n", a.png.c_str(), title.c_str(), legend.c_str());
    }
    if (a.fit) {
        const ccl::CostCoefficients m = ccl::CostCoefficients::fit(s.fit_points);
        std::printf("# cost model for %s: launch %.3g s + %.3g s/step + %.3g s/message\n", op.c_str(), m.launch,
                    m.per_step, m.per_message);
    }
}

// The sizes as the op lays them out on these chips: nccl-tests' rows are
// counts, so a size below one element is left out (said on stderr) and sizes
// that round to the same count run once.
std::vector<uint64_t> runnable_sizes(const ccl::CollectiveRunner& run, ccl::OpRequest r,
                                     const std::vector<uint64_t>& sizes) {
    std::vector<uint64_t> out;
    std::set<uint64_t> counts;
    std::string first_refusal;
    size_t left_out = 0;
    for (uint64_t size : sizes) {
        r.bytes = size;
        try {
            if (counts.insert(run.layout(r).elements).second) out.push_back(size);
        } catch (const Error& e) {
            if (!left_out++) first_refusal = e.what();
        }
    }
    if (out.empty()) throw UsageError("no size from -b to -e fits the op on these chips: " + first_refusal);
    if (left_out)
        std::fprintf(stderr, "weft bench: %zu of the sizes left out (the first: %s)\n", left_out,
                     first_refusal.c_str());
    return out;
}

int bench(BenchArgs a, const std::string& run_dir) {
    if (a.all_algos) a.ccl.algo = "all";
    const ccl::OpRequest base = request_of(a.ccl, true);
    std::vector<std::string> algos = algorithms_of(a.ccl, true);
    const std::vector<uint64_t> asked = sizes_of(a);
    // The chart is drawn last: a missing gnuplot must not cost a whole sweep.
    if (!a.png.empty()) check_gnuplot();
    for (const auto& [option, path] :
         {std::pair{"--json-out", a.json}, {"--csv", a.csv}, {"--png", a.png}, {"--trace", a.trace}})
        if (!path.empty()) check_writable(option, path);
    knobs::check(knobs::Reader::kCcl);  // a bad WEFT_CCL_* is a usage error, before any cluster starts
    auto cluster = attach_or_start(run_dir, a.ccl.cluster, "ring8");
    const uint32_t n = static_cast<uint32_t>(cluster->size());
    ccl::CollectiveRunner run(*cluster, runner_options(a.ccl));
    const std::vector<uint64_t> sizes = runnable_sizes(run, base, asked);
    if (a.ccl.algo == "all" && ccl::is_grid(cluster->topology())) algos = algorithms_of(a.ccl, true, true);
    print_header(base, run, n, a, sizes);
    std::unique_ptr<Trace> trace;
    if (!a.trace.empty()) trace = std::make_unique<Trace>(*cluster, a.trace);
    const Sweep s = sweep(run, *cluster, base, sizes, algos, a);
    if (trace) std::printf("# trace: %zu events in %s\n", trace->stop(), a.trace.c_str());
    report(s, base, *cluster, algos, a);
    return s.wrong ? 1 : 0;
}

}  // namespace

Command add_bench(CLI::App& weft, Globals& g) {
    CLI::App* cmd =
        weft.add_subcommand("bench", "nccl-tests style sweep: time, algbw, busbw, #wrong by size and algorithm");
    auto a = std::make_shared<BenchArgs>();
    add_ccl_args(*cmd, a->ccl, true);
    add_size(*cmd, "-b,--minbytes", "MIN", a->min_bytes, {1, kMaxBytes}, "the first size; default 1K");
    add_size(*cmd, "-e,--maxbytes", "MAX", a->max_bytes, {1, kMaxBytes}, "the last size at most; default MIN");
    add_whole(*cmd, "-f,--stepfactor", "F", a->factor, {2, UINT32_MAX}, "each size F times the one before; default 2");
    add_whole(*cmd, "-n,--iters", "N", a->iters, {0, UINT32_MAX},
              "timed runs per size; 0 (default): 5, 3 or 2 by size");
    add_whole(*cmd, "-w,--warmup", "N", a->warmup, {0, UINT32_MAX},
              "runs before the timed ones, the checked one included; default 1");
    add_size(*cmd, "-i,--stepbytes", "STEP", a->step_bytes, {0, kMaxBytes},
             "sizes MIN, MIN+STEP, ... up to MAX instead of by the factor; default 0 (by the factor)");
    CLI::Option* check =
        add_whole(*cmd, "-c,--check", "0|1", a->check, {0, 1}, "check the first run of each size (1, default) or not (0)");
    cmd->add_flag("--all-algos", a->all_algos, "every algorithm of the op (--algo all)")->excludes("--algo");
    cmd->add_flag("--no-check", a->no_check, "do not check the first run against the host reference (-c 0)")
        ->excludes(check);  // two answers to one question
    cmd->add_flag("--out-of-place", a->out_of_place_only, "skip the in-place runs (their columns show '-')");
    cmd->add_flag("--fit", a->fit, "fit the cost model's launch, step and message costs to the times");
    cmd->add_option("--json-out", a->json, "the rows as JSON to this file")->option_text("FILE");
    cmd->add_option("--csv", a->csv, "the rows as CSV to this file")->option_text("FILE");
    cmd->add_option("--png", a->png, "busbw against size, a line per algorithm, to this PNG")->option_text("FILE");
    cmd->add_option("--trace", a->trace, "a timeline of the sweep: Chrome trace JSON, a track per chip and core")
        ->option_text("FILE");
    add_run_dir(*cmd, g.run_dir);
    cmd->footer(algorithms_help());
    return {cmd, [a, &g] { return bench(*a, g.run_dir); }};
}

}  // namespace weft::cli
