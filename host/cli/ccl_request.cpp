#include "cli/ccl_request.h"

#include <algorithm>

#include "ccl/algorithm_table.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace weft::cli {
namespace {

std::string list(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
    return out;
}

std::string op_names() {
    std::vector<std::string> names;
    for (ccl::Collective c : ccl::all_collectives()) names.push_back(ccl::collective_name(c));
    return list(names);
}

}  // namespace

void add_ccl_args(CLI::App& cmd, CclArgs& a, bool sweep) {
    add_word(
        cmd, "OP", "", a.op, [](const std::string& w) { ccl::parse_collective(w); }, "the collective op: " + op_names())
        ->required();
    add_word(
        cmd, sweep ? "-d,--dtype,--datatype" : "--dtype", "T", a.dtype,
        [](const std::string& w) { ccl::parse_dtype(w); },
        "element type: f32, bf16, f16, i32 (or float, bfloat16, half, int32); default f32");
    a.redop_option = add_word(
        cmd, sweep ? "-o,--redop,--op" : "--redop", "R", a.redop, [](const std::string& w) { ccl::parse_redop(w); },
        "reduction of the ops that reduce: sum, max, min, prod; default sum");
    const std::string algos = sweep ? "an algorithm of the op (below), auto: the cost model picks, or all; default auto"
                                    : "an algorithm of the op (below), or auto: the cost model picks; default auto";
    cmd.add_option("--algo", a.algo, algos)->option_text("A");
    add_word(
        cmd, "--transport", "T", a.transport,
        [](const std::string& w) {
            if (w != "edm" && w != "fabric" && w != "auto")
                throw UsageError("--transport: '" + w + "' is not edm, fabric or auto");
        },
        "what carries the streams: edm (workers forward between neighbours), fabric (routers on every chip "
        "forward; the cluster file's fabric, 1D or 2D) or auto (the EDM where it can carry the algorithm, else the "
        "fabric); default auto");
    a.root_option =
        add_whole(cmd, "--root", "R", a.root, kIds, "the root chip of broadcast, reduce, gather, scatter; default 0");
    add_cluster(cmd, a.cluster);
}

ccl::RunnerOptions runner_options(const CclArgs& a) {
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = a.transport;
    return o;
}

namespace {

// What --transport promises every algorithm: its kind's capabilities; auto's
// none (it takes the EDM where the EDM can carry an algorithm's streams).
uint32_t promised_capabilities(const std::string& transport) {
    for (const transport::TransportKind& k : transport::transport_kinds())
        if (transport == k.name) return k.capabilities;
    return 0;
}

}  // namespace

std::vector<std::string> algorithms_of(const CclArgs& a, bool sweep, bool grid) {
    const ccl::Collective op = ccl::parse_collective(a.op);
    const uint32_t capabilities = promised_capabilities(a.transport);
    if (const ccl::Algorithm* row = ccl::find_algorithm(op, a.algo); row && !ccl::capable(*row, capabilities)) {
        const std::vector<std::string> kinds = ccl::transports_for(*row);
        if (kinds.empty()) throw UsageError("--algo: " + a.op + "'s " + a.algo + " algorithm runs on no transport");
        throw UsageError("--algo: " + a.op + "'s " + a.algo + " algorithm runs on the " + list(kinds) +
                         ": add --transport " + kinds.front());
    }
    // "all" sweeps the grid's algorithms only where the cluster is one (the bench asks again, knowing).
    if (sweep && a.algo == "all") return ccl::algorithms(op, grid, capabilities);
    // The runner says where the grid's and the systems' run.
    std::vector<std::string> known;
    for (const ccl::Algorithm& row : ccl::algorithm_table())
        if (row.op == op && ccl::capable(row, capabilities)) known.emplace_back(row.name);
    if (a.algo == "auto" || std::find(known.begin(), known.end(), a.algo) != known.end()) return {a.algo};
    throw UsageError("--algo: " + a.op + " has no algorithm '" + a.algo + "' (auto, " + list(known) +
                     (sweep ? ", all)" : ")"));
}

ccl::OpRequest request_of(const CclArgs& a, bool sweep) {
    algorithms_of(a, sweep);
    ccl::OpRequest r;
    r.op = ccl::parse_collective(a.op);
    r.dtype = ccl::parse_dtype(a.dtype);
    r.redop = ccl::parse_redop(a.redop);
    r.algo = a.algo;
    r.root = a.root;
    const bool rooted = r.op == ccl::Collective::kBroadcast || r.op == ccl::Collective::kReduce ||
                        r.op == ccl::Collective::kGather || r.op == ccl::Collective::kScatter;
    if (a.root_option && a.root_option->count() && !rooted)
        throw UsageError("--root: " + a.op + " has no root (broadcast, reduce, gather and scatter have one)");
    if (a.redop_option && a.redop_option->count() && !ccl::reduces(r.op))
        throw UsageError("--redop: " + a.op + " does not reduce (all_reduce, reduce_scatter and reduce do)");
    return r;
}

// Where an algorithm runs, when not everywhere: "2d (a grid)".
std::string where_it_runs(const ccl::Algorithm& a) {
    std::vector<std::string> needs;
    if (a.needs & ccl::kGrid) needs.push_back("a grid");
    if (a.needs & ccl::kSystems) needs.push_back("a cluster of systems");
    if (a.capabilities) needs.push_back("--transport " + ccl::transports_for(a).front());
    std::string out;
    for (const std::string& n : needs) out += (out.empty() ? " (" : ", ") + n;
    return out.empty() ? "" : out + ")";
}

std::string algorithms_help() {
    std::string out = "Algorithms (--algo):";
    for (ccl::Collective c : ccl::all_collectives()) {
        std::vector<std::string> names;
        for (const std::string& name : ccl::all_algorithms(c))
            names.push_back(name + where_it_runs(*ccl::find_algorithm(c, name)));
        out += "\n  " + ccl::collective_name(c) + ": " + list(names);
    }
    return out;
}

std::string ring_text(const ccl::CollectiveRunner& run) {
    std::string s;
    for (uint32_t c : run.ring()) s += (s.empty() ? "" : "-") + std::to_string(c);
    return s;
}

}  // namespace weft::cli
