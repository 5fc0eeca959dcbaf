#include "ccl/algorithm_table.h"

#include "ccl/algorithms.h"
#include "common/error.h"

namespace weft::ccl {

namespace {

using C = Collective;

// A row lowered to a plan, and one its transport runs itself.
Algorithm plan_row(C op, const char* name, uint32_t needs, PlanBuilder plan) {
    return {op, name, needs, 0, plan, nullptr};
}
Algorithm native_row(C op, const char* name, uint32_t capabilities, NativeBuilder native) {
    return {op, name, 0, capabilities, nullptr, native};
}

// The names of op's rows that `keep` keeps, in table order.
template <typename Keep>
std::vector<std::string> names_of(Collective op, Keep keep) {
    std::vector<std::string> names;
    for (const Algorithm& a : algorithm_table())
        if (a.op == op && keep(a)) names.emplace_back(a.name);
    return names;
}

std::string joined(const std::vector<std::string>& words, const char* by) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : by) + w;
    return out;
}

}  // namespace

// A grid's and a transport's own rows come after an op's others: the lists
// users see keep the order they always had (help, completion, errors).
const std::vector<Algorithm>& algorithm_table() {
    using namespace plans;  // the builders, by the rows' names
    static const std::vector<Algorithm> table = {
        plan_row(C::kAllGather, "ring", kRing, all_gather_ring),
        plan_row(C::kAllGather, "ring_bidir", kRing | kBothWays, all_gather_ring_bidir),
        plan_row(C::kAllGather, "ring_halfway", kRing | kBothWays, all_gather_ring_halfway),
        plan_row(C::kAllGather, "line", kLine | kBothWays, all_gather_line),
        native_row(C::kAllGather, "multicast", transport::kCanMulticast, native::multicast),
        plan_row(C::kAllGather, "2d", kGrid, all_gather_2d),
        plan_row(C::kReduceScatter, "ring", kRing, reduce_scatter_ring),
        plan_row(C::kReduceScatter, "ring_bidir", kRing | kBothWays, reduce_scatter_ring_bidir),
        plan_row(C::kReduceScatter, "line", kLine | kBothWays, reduce_scatter_line),
        // Both ways round the ring as the CTRING knobs say (both by default).
        plan_row(C::kAllReduce, "ring", kRing | kBothWays, all_reduce_ring),
        plan_row(C::kAllReduce, "full_mesh", 0, all_reduce_full_mesh),
        plan_row(C::kAllReduce, "reduce_root", 0, all_reduce_reduce_root),
        plan_row(C::kAllReduce, "tree", 0, all_reduce_tree),
        plan_row(C::kAllReduce, "naive_ring", kRing, all_reduce_naive_ring),
        plan_row(C::kAllReduce, "recursive_doubling", 0, all_reduce_recursive_doubling),
        plan_row(C::kAllReduce, "halving_doubling", 0, all_reduce_halving_doubling),
        plan_row(C::kAllReduce, "swing", 0, all_reduce_swing),
        plan_row(C::kAllReduce, "2d", kGrid, all_reduce_2d),
        plan_row(C::kAllReduce, "hierarchical", kSystems, all_reduce_hierarchical),
        plan_row(C::kBroadcast, "chain", kRing | kBothWays, rooted_chain),
        plan_row(C::kBroadcast, "direct", 0, rooted_direct),
        native_row(C::kBroadcast, "multicast", transport::kCanMulticast, native::multicast),
        plan_row(C::kReduce, "chain", kRing | kBothWays, rooted_chain),
        plan_row(C::kReduce, "direct", 0, rooted_direct),
        plan_row(C::kGather, "direct", 0, rooted_direct),
        plan_row(C::kScatter, "direct", 0, rooted_direct),
        plan_row(C::kSendRecv, "ring", kRing, send_recv_ring),
    };
    return table;
}

const Algorithm* find_algorithm(Collective op, const std::string& name) {
    for (const Algorithm& a : algorithm_table())
        if (a.op == op && name == a.name) return &a;
    return nullptr;
}

bool capable(const Algorithm& a, uint32_t capabilities) { return (a.capabilities & ~capabilities) == 0; }

bool can_run(const Algorithm& a, bool grid, uint32_t capabilities) {
    return (grid || !(a.needs & kGrid)) && !(a.needs & kSystems) && capable(a, capabilities);
}

uint32_t shape_of(const ClusterTopology& t) {
    return (is_grid(t) ? uint32_t(kGrid) : 0u) | (t.systems().empty() ? 0u : uint32_t(kSystems));
}

std::vector<std::string> algorithms_on(Collective op, const ClusterTopology& t, uint32_t capabilities) {
    const uint32_t shape = shape_of(t);
    return names_of(op, [&](const Algorithm& a) {
        return (a.needs & (kGrid | kSystems) & ~shape) == 0 && capable(a, capabilities);
    });
}

std::vector<std::string> algorithms(Collective op, bool grid, uint32_t capabilities) {
    return names_of(op, [&](const Algorithm& a) { return can_run(a, grid, capabilities); });
}

std::vector<std::string> all_algorithms(Collective op) {
    return names_of(op, [](const Algorithm&) { return true; });
}

std::vector<std::string> grid_algorithms(Collective op) {
    std::vector<std::string> names;
    for (const Algorithm& a : algorithm_table())
        if (a.op == op && (a.needs & kGrid)) names.emplace_back(a.name);
    return names;
}

std::vector<std::string> transports_for(const Algorithm& a) {
    std::vector<std::string> kinds;
    for (const transport::TransportKind& k : transport::transport_kinds())
        if ((a.capabilities & ~k.capabilities) == 0) kinds.emplace_back(k.name);
    return kinds;
}

// "all_gather's multicast algorithm needs a transport that can multicast,
// which the edm cannot: it runs on the fabric: use --transport fabric"
std::string cannot_run(const Algorithm& a, const std::string& transport, uint32_t capabilities) {
    const uint32_t missing = a.capabilities & ~capabilities;
    if (!missing) return "";
    const std::vector<std::string> kinds = transports_for(a);
    std::string where = "; no transport can";
    if (!kinds.empty()) where = ": it runs on the " + joined(kinds, " or the ") + ": use --transport " + kinds.front();
    return collective_name(a.op) + "'s " + a.name + " algorithm needs a transport that can " +
           transport::capability_names(missing) + ", which the " + transport + " cannot" + where;
}

Plan build_plan(const PlanContext& ctx, const std::string& algo) {
    const Algorithm* a = find_algorithm(ctx.request.op, algo);
    if (a && !a->plan)
        throw Error("internal: " + collective_name(a->op) + "'s " + algo + " algorithm is its transport's own op");
    if (!a)
        throw Error("unknown algorithm '" + algo + "' for " + collective_name(ctx.request.op) +
                    " (algorithms: " + joined(algorithms(ctx.request.op, true), ", ") + ", auto)");
    return a->plan(ctx);
}

}  // namespace weft::ccl
