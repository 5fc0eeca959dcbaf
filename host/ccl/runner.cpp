#include "ccl/runner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "ccl/placement.h"
#include "common/error.h"
#include "common/knobs.h"
#include "common/log.h"
#include "driver/resident.h"

namespace weft::ccl {

RunnerOptions RunnerOptions::from_env() {
    RunnerOptions o;
    // The knobs' ranges keep every value within 32 bits.
    o.slots = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_SLOTS")));
    const knobs::Knob& slot_size = knobs::knob("WEFT_CCL_SLOT_SIZE");
    if (knobs::is_set(slot_size) || knobs::integer(slot_size) != slot_size.fallback)  // else the board's
        o.slot_size = static_cast<uint32_t>(knobs::integer(slot_size));
    o.workers_per_link = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_WORKERS_PER_LINK")));
    o.planes = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_PLANES")));
    return o;
}

uint32_t fits_board_slot_size(const BoardInfo& board, uint32_t slots) {
    uint64_t free = UINT64_MAX;
    for (uint32_t core : board.cores_with_role(CoreRole::kErisc)) free = std::min(free, board.l1_free(core).size);
    const uint64_t per_slot = free / 2 / std::max(1u, slots);
    uint64_t size = knobs::knob("WEFT_CCL_SLOT_SIZE").fallback;
    while (size > 4096 && size > per_slot) size /= 2;
    return static_cast<uint32_t>(size);
}

namespace {

std::vector<uint32_t> every_chip(const Machine& cluster) {
    std::vector<uint32_t> all(cluster.chip_count());
    for (uint32_t c = 0; c < all.size(); ++c) all[c] = c;
    return all;
}

// An op needs every chip of its communicator: one whose QEMU is gone is named
// as such, not as the cables it took with it ("chip 0 cannot reach chips 5, 6").
const std::vector<uint32_t>& all_alive(Machine& cluster, const std::vector<uint32_t>& chips) {
    for (uint32_t c : chips)
        if (c < cluster.chip_count() && !cluster.alive(c))
            throw Error(cluster.death_of(c) +
                        ": an op needs every chip of its communicator; weft down and weft up start the cluster again");
    return chips;
}

// The chips with an op running, per cluster: communicators over disjoint
// chips run at once, over shared chips one after the other.
std::map<const Machine*, std::set<uint32_t>>& busy_chips() {
    static std::map<const Machine*, std::set<uint32_t>> busy;
    return busy;
}

}  // namespace

CollectiveRunner::CollectiveRunner(Machine& cluster, RunnerOptions options)
    : CollectiveRunner(cluster, every_chip(cluster), std::move(options)) {}

std::map<int, std::unique_ptr<CollectiveRunner>> CollectiveRunner::split(Machine& cluster,
                                                                         const std::vector<int>& colour,
                                                                         RunnerOptions options) {
    if (colour.size() != cluster.chip_count())
        throw Error("split: " + std::to_string(colour.size()) + " colours for a " +
                    std::to_string(cluster.chip_count()) + "-chip cluster (one per chip, < 0 for none)");
    std::map<int, std::vector<uint32_t>> members;
    for (uint32_t c = 0; c < colour.size(); ++c)
        if (colour[c] >= 0) members[colour[c]].push_back(c);
    std::map<int, std::unique_ptr<CollectiveRunner>> out;
    for (auto& [k, chips] : members) out[k] = std::make_unique<CollectiveRunner>(cluster, chips, options);
    return out;
}

CollectiveRunner::CollectiveRunner(Machine& cluster, std::vector<uint32_t> chips, RunnerOptions options)
    : cluster_(cluster),
      options_(options),
      chips_(all_alive(cluster, chips)),
      whole_(chips_ == every_chip(cluster)),
      topo_(cables()),
      ring_(topo_.ring_order()),
      line_(topo_.line_order()),
      workers_(cluster.board().cores_with_role(CoreRole::kWorker)),
      model_(CostModel::for_cluster(cluster.name())) {
    cluster.apply_wake_override();
    if (options_.slot_size == 0) options_.slot_size = fits_board_slot_size(cluster.board(), options_.slots);
    // A fabric spans the whole cluster, or one whole mesh of it (each mesh's
    // communicator then runs its own fabric, all at once).
    const bool fabric_fits = whole_ || cluster.topology().whole_mesh(chips_);
    if (options_.transport == "fabric") {
        if (!fabric_fits)
            throw Error("a communicator over the fabric is the whole cluster or one whole mesh of it; over other "
                        "chips it runs over the EDM (--transport edm)");
        fabric_plan_ = plan_fabric(cluster.topology());
    } else if (options_.transport == "auto") {
        // The fabric carries what the EDM cannot, where the cluster has one.
        if (fabric_fits && chips_.size() > 1) {
            try {
                fabric_plan_ = plan_fabric(cluster.topology());
            } catch (const Error& e) {
                WEFT_INFO("ccl", "no fabric for --transport auto: %s", e.what());
            }
        }
    } else if (options_.transport != "edm") {
        throw Error("unknown transport '" + options_.transport + "': edm, fabric or auto");
    }
}

CollectiveRunner::~CollectiveRunner() = default;

ClusterTopology CollectiveRunner::cables() const { return ours(cluster_.topology()); }

ClusterTopology CollectiveRunner::ours(const ClusterTopology& now) const { return whole_ ? now : now.among(chips_); }

// The cluster file's fabric: section, sized to the board. A stream's
// message is at most one packet.
std::vector<transport::FabricBuilder> CollectiveRunner::plan_fabric(const ClusterTopology& now) {
    FabricSpec spec = cluster_.fabric_spec();
    spec.record_packets = options_.record_packets;
    // A mesh's communicator: the fabric of that mesh alone, in its ranks.
    const ClusterTopology topology = ours(now);
    // A packet log is one fabric's (the model replays it on that one): recorded, the op runs on plane 0.
    const uint32_t wanted = spec.record_packets ? 1 : spec.planes_on(cluster_.board().planes());
    std::vector<transport::FabricBuilder> planes = transport::plane_fabrics(cluster_.board(), topology, spec, wanted);
    for (const transport::FabricBuilder& f : planes)
        options_.fabric_streams.message_bytes =
            std::min(options_.fabric_streams.message_bytes, f.spec().payload_bytes());
    planned_cables_ = up_of(now);
    return planes;
}

std::vector<const transport::FabricBuilder*> CollectiveRunner::fabric_planes() const {
    std::vector<const transport::FabricBuilder*> planes;
    for (const transport::FabricBuilder& f : fabric_plan_) planes.push_back(&f);
    return planes;
}

std::string CollectiveRunner::stop_fabrics() {
    std::string forced;
    for (auto& f : fabric_) forced += f->stop();
    fabric_.clear();
    return forced;
}

// Each plane's fabric is rerouted round its own dead cables by its own control plane.
std::string CollectiveRunner::tend_fabrics() {
    for (const auto& f : fabric_)
        if (std::string why = f->tend(); !why.empty()) return why;
    return "";
}

void CollectiveRunner::drop_fabric(const Error& e) {
    // Packets of the failed op may still sit in the routers: the next op gets
    // a fabric started afresh.
    const std::string forced = stop_fabrics();
    const std::string what = std::string(e.what()) + (forced.empty() ? "" : "\nstopping the fabric: " + forced);
    if (dynamic_cast<const TimeoutError*>(&e)) throw TimeoutError(what);
    if (dynamic_cast<const FaultError*>(&e)) throw FaultError(what);
    throw Error(what);
}

std::vector<bool> CollectiveRunner::up_of(const ClusterTopology& now) {
    std::vector<bool> up;
    for (const LinkInfo& l : now.links()) up.push_back(l.up);
    return up;
}

// A fabric is planned for the cables up then: after a cable went down (or
// came back) the next fabric not yet running is planned afresh, its tables
// routed around the dead ones by the control plane (auto falls back to the
// EDM alone where no fabric can be planned).
// Between ops the fabric is idle, so a fabric running on cables that have
// changed since it was planned (one died and was routed round live, or came
// back) is stopped and planned again: the routes the cables allow now, and
// a cable that returned carries traffic again.
void CollectiveRunner::replan_if_cables_changed(const ClusterTopology& now) {
    if (fabric_plan_.empty() || up_of(now) == planned_cables_) return;
    if (!fabric_.empty()) {
        WEFT_INFO("ccl", "the cables changed under the running fabric: stopping it to plan it again");
        stop_fabrics();
    }
    WEFT_INFO("ccl", "the cables changed since the fabric was planned: planning it again");
    try {
        fabric_plan_ = plan_fabric(now);
    } catch (const Error& e) {
        if (options_.transport == "fabric") throw;  // and the next op tries again
        fabric_plan_.clear();
        WEFT_INFO("ccl", "no fabric for --transport auto now: %s", e.what());
    }
}

void CollectiveRunner::ensure_fabric() {
    if (fabric_plan_.empty() || !fabric_.empty()) return;
    try {
        for (const transport::FabricBuilder& plane : fabric_plan_)
            fabric_.push_back(transport::Fabric::start(cluster_, plane, std::chrono::milliseconds(10000),
                                                       whole_ ? std::vector<uint32_t>{} : chips_));
    } catch (const Error&) {
        stop_fabrics();  // the planes that started
        throw;
    }
}

transport::PacketLog CollectiveRunner::packet_log() {
    if (fabric_.empty())
        throw Error("no fabric runs: the op went over the EDM (--transport fabric runs it over the fabric)");
    if (!whole_) throw Error("a packet log is read from a fabric over the whole cluster");
    return transport::read_packet_log(cluster_, fabric_.front()->builder());  // plane 0's
}

OpLayout CollectiveRunner::layout(const OpRequest& r) const {
    const Region& d = cluster_.board().dram;
    return layout_op(r, static_cast<uint32_t>(chips_.size()), Pages::run(d.base, d.size));
}

transport::EdmOptions CollectiveRunner::edm_options() const {
    transport::EdmOptions eo;
    eo.termination = abi::kEdmMessageCount;
    eo.slots = options_.slots;
    eo.slot_size = options_.slot_size;
    eo.progress_timeout_us = options_.edm_progress_timeout_us;
    return eo;
}

std::vector<CollectiveRunner::Via> CollectiveRunner::vias() const {
    if (options_.transport == "fabric") return {Via::kFabric};
    if (options_.transport == "auto" && !fabric_plan_.empty()) return {Via::kEdm, Via::kFabric};
    return {Via::kEdm};
}

std::vector<uint32_t> CollectiveRunner::workers(Via via) const {
    std::vector<uint32_t> w = workers_;
    // A worker reaches the routers through a lane of its own: those past the
    // routers' lanes sit a fabric op out.
    const uint32_t lanes = fabric_plan_.empty() ? 0 : fabric_plan_.front().spec().lanes;
    if (via == Via::kFabric && w.size() > lanes) w.resize(lanes);
    return w;
}

uint32_t CollectiveRunner::message_bytes(Via via) const {
    return via == Via::kFabric ? options_.fabric_streams.message_bytes : options_.slot_size;
}

std::unique_ptr<transport::Transport> CollectiveRunner::make_transport(transport::L1Allocator& mem,
                                                                       uint32_t message_bytes, Via via) const {
    if (via == Via::kFabric) {
        transport::FabricStreamOptions so = options_.fabric_streams;
        so.message_bytes = message_bytes;
        return std::make_unique<transport::FabricTransport>(fabric_planes(), cluster_.board(), mem, so);
    }
    return std::make_unique<transport::EdmTransport>(topo_, cluster_.board(), mem, edm_options());
}

transport::L1Allocator CollectiveRunner::allocator(Via via) const {
    transport::L1Allocator mem(cluster_.board());
    std::map<uint32_t, uint32_t> rank_of;
    for (uint32_t rank = 0; rank < chips_.size(); ++rank) rank_of[chips_[rank]] = rank;
    for (const resident::Running& r : resident::list(cluster_))
        if (auto it = rank_of.find(r.chip); it != rank_of.end()) mem.keep_out(it->second, r.core, r.l1);
    if (via == Via::kFabric)  // where its routers run, or will once the op starts them
        for (const transport::FabricBuilder& plane : fabric_plan_)
            for (const transport::FabricRouterPlan& r : plane.routers()) mem.keep_out(r.chip, r.core, r.l1);
    return mem;
}

LoweredOp CollectiveRunner::lower_op(const OpRequest& r, const std::string& algo) const {
    const Via via = options_.transport == "fabric" ? Via::kFabric : Via::kEdm;
    return lower_op(r, algo, message_bytes(via), via);
}

LoweredOp CollectiveRunner::lower_op(const OpRequest& r, const std::string& algo, uint32_t message, Via via) const {
    const OpLayout l = layout(r);
    const PlanContext ctx{r, l, topo_, ring_, line_, CtringTuning::from_env(),
                          knobs::integer(knobs::knob("WEFT_HIERARCHICAL_ROOT"))};
    const Plan plan = build_plan(ctx, algo);
    LoweringOptions lo;
    const uint32_t slots = via == Via::kFabric ? options_.fabric_streams.slots : options_.slots;
    lo.message_bytes = message;
    lo.piece_bytes = plan.piece_bytes ? plan.piece_bytes : uint64_t(slots) * message;
    // On silicon-like (shaped) cables a hop striped over two planes runs
    // 1.8-2x one plane with pieces of two messages, and no faster than one
    // with a stream's whole buffering (ring8x2, 16 MiB at 0.005 GB/s); where
    // the host is the bottleneck (unshaped) their fixed costs make it 2x slower.
    if (shaped_) lo.stripe_piece_bytes = 2ull * message;
    lo.element_size = l.element;
    lo.reduce_arg = abi::ccl_reduce_arg(r.redop, r.dtype);
    lo.workers_per_link = options_.workers_per_link;
    lo.planes = options_.planes;
    lo.scratch = l.scratch;
    // Under auto, an op the EDM could run only with folded workers goes over
    // the fabric, where it needs fewer (a route is one way out, not a cable).
    lo.fold = via == Via::kFabric || vias().size() == 1;
    if (via == Via::kFabric) return lower(plan, transport::FabricRouting(fabric_planes()), workers(via), lo);
    return lower(plan, transport::CableRouting(topo_), workers(via), lo);
}

namespace {

// The most L1 one worker's program takes.
uint64_t longest_program_bytes(const LoweredOp& op) {
    size_t most = 0;
    for (const WorkerProgram& w : op.workers) most = std::max(most, w.code.size());
    return most * sizeof(abi::CclInstr);
}

}  // namespace

CollectiveRunner::Fitted CollectiveRunner::fit(const OpRequest& r, const std::string& algo, LoweredOp op,
                                               Via via) const {
    const KernelImage* worker = &kernel_named(cluster_.board(), "ccl_worker");
    uint32_t message = message_bytes(via);
    std::optional<transport::L1Shortage> first;  // at the messages asked for: what to tell
    for (;;) {
        transport::L1Allocator mem = allocator(via);
        const auto transport = make_transport(mem, message, via);
        try {
            return {algo, op, place_op(op, *transport, mem, worker), message, via};
        } catch (const transport::L1Shortage& e) {
            if (!first) first = e;
            // Over the fabric the stream messages shrink to what the workers'
            // L1 holds, as the EDM's slots are sized to its cores' L1. Smaller
            // messages cut an op into more pieces, a longer program: once one
            // worker's program alone outgrows its L1, halving only makes it worse.
            const bool halve = via == Via::kFabric && message / 2 >= kMinFabricMessage;
            LoweredOp smaller = halve ? lower_op(r, algo, message / 2, via) : LoweredOp{};
            if (!halve || longest_program_bytes(smaller) > cluster_.board().l1_free(workers(via).front()).size) {
                if (options_.workers_per_link <= 1) throw transport::L1Shortage(*first);
                throw transport::L1Shortage(
                    std::string(first->what()) + " (workers_per_link " + std::to_string(options_.workers_per_link) +
                    " stripes each link over that many streams; lower WEFT_CCL_WORKERS_PER_LINK, WEFT_CCL_SLOTS or"
                    " WEFT_CCL_SLOT_SIZE)");
            }
            message /= 2;
            op = std::move(smaller);
        }
    }
}

namespace {

bool does_not_fit(const Error& e) {
    return dynamic_cast<const WorkerShortage*>(&e) || dynamic_cast<const transport::L1Shortage*>(&e);
}

}  // namespace

CollectiveRunner::Fitted CollectiveRunner::fit_any(const OpRequest& r, const std::string& algo) const {
    std::exception_ptr failed;
    for (Via via : vias()) {
        try {
            return fit(r, algo, lower_op(r, algo, message_bytes(via), via), via);
        } catch (const Error& e) {
            if (!does_not_fit(e)) throw;
            if (!failed) failed = std::current_exception();  // the preferred transport's reason
        }
    }
    std::rethrow_exception(failed);
}

CollectiveRunner::Fitted CollectiveRunner::fit_native(const OpRequest& r, const Algorithm& a) const {
    const OpLayout l = layout(r);
    std::string lacking;
    for (Via via : vias()) {
        transport::L1Allocator mem = allocator(via);
        const auto transport = make_transport(mem, message_bytes(via), via);
        if (std::string why = cannot_run(a, transport->name(), transport->capabilities()); !why.empty()) {
            if (lacking.empty()) lacking = std::move(why);
            continue;
        }
        a.native(r, l, *transport);
        Fitted f{a.name, LoweredOp{}, place_op(LoweredOp{}, *transport, mem, nullptr), 0, via};
        f.op.bytes_on_links = l.elements * l.element * (l.ranks - 1);  // the vector reaches n - 1 chips
        return f;
    }
    throw Error(lacking);
}

namespace {

// What auto means for r: the tuning's algorithm for all_reduce, where it
// names one (WEFT_ALL_REDUCE_ALGO), else the cost model's choice.
OpRequest tuned(const OpRequest& r) {
    if (r.algo != "auto" || r.op != Collective::kAllReduce) return r;
    const std::string algo = knobs::text(knobs::knob("WEFT_ALL_REDUCE_ALGO"));
    if (algo.empty()) return r;
    if (!find_algorithm(r.op, algo)) {
        std::string all;
        for (const std::string& a : all_algorithms(Collective::kAllReduce)) all += (all.empty() ? "" : ", ") + a;
        throw Error("WEFT_ALL_REDUCE_ALGO names '" + algo + "', which is not an all_reduce algorithm (" + all + ")");
    }
    OpRequest out = r;
    out.algo = algo;
    return out;
}

}  // namespace

CollectiveRunner::Fitted CollectiveRunner::choose(const OpRequest& asked) const {
    const OpRequest r = tuned(asked);
    if (const Algorithm* a = find_algorithm(r.op, r.algo); a && a->native) return fit_native(r, *a);
    // auto costs lowered ops only: a transport's own ops are no candidates.
    const std::vector<std::string> algos = algorithms_on(r.op, topo_.cluster());
    if (r.algo != "auto" || algos.size() == 1) {
        const std::string algo = r.algo != "auto" ? r.algo : algos.front();
        try {
            return fit_any(r, algo);
        } catch (const Error& e) {
            if (!does_not_fit(e)) throw;
            // Say which would: the user fixed one that cannot run here.
            std::string fits;
            for (const std::string& a : algos) {
                if (a == algo) continue;
                try {
                    fit_any(r, a);
                    fits += (fits.empty() ? "" : ", ") + a;
                } catch (const Error&) {
                }
            }
            throw Error(std::string(e.what()) + " for " + collective_name(r.op) + "'s " + algo + " algorithm" +
                        (fits.empty() ? "; no algorithm fits this cluster" : "; these fit: " + fits + " (or auto)"));
        }
    }
    // Every candidate is fitted to be costed, on the first transport that
    // can carry it (the EDM where it can, under --transport auto): fitting
    // shrinks a fabric stream's messages to what the workers' L1 holds, and
    // a worker serving many peers holds each one's slots, so an op lowered
    // at full messages would be costed at a fraction of its messages. One
    // that cannot be lowered or placed here (too few worker cores, too
    // little L1) is no candidate; if none can, the error names each one's
    // reason. The cheapest runs.
    struct Candidate {
        double t;
        Fitted fitted;
    };
    std::vector<Candidate> ranked;
    std::string why_not;
    const std::vector<Via> ways = vias();
    for (const std::string& a : algos) {
        if (a == "auto") continue;
        std::string reason;
        for (Via via : ways) {
            try {
                Fitted f = fit(r, a, lower_op(r, a, message_bytes(via), via), via);
                const double t = model_.predict(r, a, f.op);
                ranked.push_back({t, std::move(f)});
                break;
            } catch (const Error& e) {
                if (reason.empty()) reason = e.what();
            }
        }
        if (ranked.empty() || ranked.back().fitted.algo != a) why_not += "\n  " + a + ": " + reason;
    }
    if (!ranked.empty()) {
        auto best = std::min_element(ranked.begin(), ranked.end(),
                                     [](const Candidate& x, const Candidate& y) { return x.t < y.t; });
        return std::move(best->fitted);
    }
    if (!fabric_plan_.empty() && workers(Via::kFabric).size() < workers_.size())
        why_not += "\n(the fabric's " + std::to_string(workers(Via::kFabric).size()) +
                   " lane(s) let that many of the board's " + std::to_string(workers_.size()) +
                   " worker cores reach its routers: raise the cluster file's fabric lanes)";
    throw Error("no " + collective_name(r.op) + " algorithm fits this cluster:" + why_not);
}

std::string CollectiveRunner::resolve(const OpRequest& r) const { return r.algo != "auto" ? r.algo : choose(r).algo; }

namespace {

void trace(const OpTiming& timing, const std::vector<Launch>& launches, const std::vector<KernelResult>& results,
           double launch_seconds, uint32_t timebase_hz, bool per_kernel) {
    double slowest = 0;
    for (const KernelResult& k : results) slowest = std::max(slowest, double(k.ticks) / timebase_hz);
    std::fprintf(stderr, "ccl %s: %zu kernels launched in %.2f ms, all done after %.2f ms, slowest kernel %.2f ms\n",
                 timing.algo.c_str(), launches.size(), launch_seconds * 1e3, timing.seconds * 1e3, slowest * 1e3);
    if (per_kernel)
        for (size_t k = 0; k < results.size(); ++k)
            std::fprintf(stderr, "   chip %u core %u %-10s %8.2f ms\n", launches[k].chip, launches[k].core,
                         launches[k].kernel->name.c_str(), double(results[k].ticks) / timebase_hz * 1e3);
}

}  // namespace

std::chrono::milliseconds CollectiveRunner::deadline(const LoweredOp& op) const {
    if (options_.timeout.count() != 0) return options_.timeout;
    // Generous: the emulated links move well over 20 MB/s even on a loaded host.
    std::set<std::pair<uint64_t, uint64_t>> cables;  // both ends, lower first
    for (const Stream& s : op.streams) {
        const uint64_t a = uint64_t(s.chip) << 32 | s.port, b = uint64_t(s.peer_chip) << 32 | s.peer_port;
        cables.insert({std::min(a, b), std::max(a, b)});
    }
    return std::chrono::milliseconds(20000 +
                                     op.bytes_on_links / (20u << 20) * 1000 / std::max<size_t>(1, cables.size()));
}

OpTiming CollectiveRunner::run(const OpRequest& r) {
    PendingOp op = start(r);
    return wait(op);
}

PendingOp CollectiveRunner::start(const OpRequest& r) {
    if (busy_) throw Error("an op is still running on these chips: wait for it before starting another");
    std::set<uint32_t>& busy = busy_chips()[&cluster_];
    for (uint32_t c : chips_)
        if (busy.count(c))
            throw Error("chip " + std::to_string(c) +
                        " is running another communicator's op: wait for it first (communicators over disjoint chips "
                        "run at once)");
    all_alive(cluster_, chips_);
    const ClusterTopology now = cluster_.topology();
    shaped_ = std::any_of(now.links().begin(), now.links().end(), [](const LinkInfo& l) { return l.shaped; });
    replan_if_cables_changed(now);
    PendingOp pending;
    OpTiming& timing = pending.timing;
    Fitted fitted = choose(r);
    const std::string& algo = fitted.algo;
    const LoweredOp& op = fitted.op;
    timing.algo = algo;
    timing.transport = fitted.via == Via::kFabric ? "fabric" : "edm";
    timing.features = CostFeatures::of(op);
    timing.bytes_on_links = op.bytes_on_links;
    timing.hops = op.hops;
    // A transport's own op has no workers: its kernels, one a chip.
    timing.workers = static_cast<uint32_t>(op.workers.empty() ? fitted.placed.launches.size() : op.workers.size());
    timing.streams = static_cast<uint32_t>(op.streams.size());
    timing.planes = op.planes;
    WEFT_INFO("ccl", "%s of %llu bytes (%s %s): algorithm %s%s over the %s, %u workers, %u streams of %u-byte messages",
              collective_name(r.op).c_str(), (unsigned long long)r.bytes, dtype_name(r.dtype).c_str(),
              redop_name(r.redop).c_str(), algo.c_str(), r.algo == "auto" ? " (auto)" : "", timing.transport.c_str(),
              timing.workers, timing.streams, fitted.message_bytes);
    if (fitted.via == Via::kFabric) ensure_fabric();
    else  // the EDM runs on the ERISC cores its routers hold
        stop_fabrics();
    PlacedOp& placed = fitted.placed;
    if (placed.launches.empty()) return pending;
    MappedChipWriter to_chips(cluster_, chips_);
    placed.memory.apply(to_chips);
    for (Launch& l : placed.launches) l.chip = chips_[l.chip];

    pending.deadline = deadline(op);
    pending.launches = std::move(placed.launches);
    pending.started = std::chrono::steady_clock::now();
    pending.launched = cluster_.launch_all(pending.launches);
    pending.launched_at = std::chrono::steady_clock::now();
    pending.waited = false;
    busy_ = true;
    busy.insert(chips_.begin(), chips_.end());
    return pending;
}

OpTiming CollectiveRunner::wait(PendingOp& op) {
    if (op.waited) return op.timing;
    op.waited = true;
    busy_ = false;
    for (uint32_t c : chips_) busy_chips()[&cluster_].erase(c);
    std::vector<KernelResult> results;
    try {
        // An interrupt knows its whole cause: no hang report.
        const Machine::Watch watch = [this] {
            if (options_.interrupted && options_.interrupted()) throw Error("interrupted: the op was stopped");
            return fabric_.empty() ? std::string() : tend_fabrics();
        };
        results = cluster_.wait_all(op.launched, op.deadline, watch);
        for (auto& f : fabric_) f->finish_move();
    } catch (const Error& e) {
        if (fabric_.empty()) throw;
        drop_fabric(e);
    }
    OpTiming& timing = op.timing;
    timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - op.started).count();
    if (const std::string level = knobs::text(knobs::knob("WEFT_CCL_TRACE")); !level.empty())
        trace(timing, op.launches, results, std::chrono::duration<double>(op.launched_at - op.started).count(),
              cluster_.board().timebase_hz, level == "2");
    return timing;
}

}  // namespace weft::ccl
