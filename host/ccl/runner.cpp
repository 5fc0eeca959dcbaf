#include "ccl/runner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "ccl/fabric_ops.h"
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

CollectiveRunner::CollectiveRunner(Cluster& cluster, RunnerOptions options)
    : cluster_(cluster),
      options_(options),
      topo_(cluster.topology()),
      ring_(topo_.ring_order()),
      line_(topo_.line_order()),
      workers_(cluster.board().cores_with_role(CoreRole::kWorker)),
      model_(CostModel::for_cluster(cluster.info().value("name", std::string()))) {
    cluster.apply_wake_override();
    if (options_.slot_size == 0) options_.slot_size = fits_board_slot_size(cluster.board(), options_.slots);
    if (options_.transport == "fabric") {
        fabric_plan_ = std::make_unique<transport::FabricBuilder>(plan_fabric());
    } else if (options_.transport != "edm") {
        throw Error("unknown transport '" + options_.transport + "': edm or fabric");
    }
}

CollectiveRunner::~CollectiveRunner() = default;

// The cluster file's fabric: section (its defaults when absent). A stream's
// message is at most one packet.
transport::FabricBuilder CollectiveRunner::plan_fabric() {
    const nlohmann::json f = cluster_.info().value("fabric", nlohmann::json::object());
    transport::FabricOptions fo;
    fo.slots = f.value("slots", fo.slots);
    fo.slot_size = f.value("packet_bytes", fo.slot_size - abi::kFabricHeaderBytes) + abi::kFabricHeaderBytes;
    fo.lanes = f.value("lanes", fo.lanes);
    fo.timeout_us = f.value("router_timeout_ms", fo.timeout_us / 1000) * 1000;
    const std::string topology = f.value("topology", std::string("auto"));
    const uint32_t payload = fo.slot_size - abi::kFabricHeaderBytes;
    options_.fabric_streams.message_bytes = std::min(options_.fabric_streams.message_bytes, payload);
    // auto: 2D on one mesh or torus of at least 2x2; else a ring where the
    // ring order closes over a cable, else a line.
    const ClusterTopology cluster_topology = cluster_.topology();
    const auto& meshes = cluster_topology.meshes();
    const bool grid = meshes.size() == 1 && (meshes[0].topology == "mesh" || meshes[0].topology == "torus") &&
                      meshes[0].width >= 2 && meshes[0].height >= 2;
    if (topology == "mesh" || topology == "torus" || (topology == "auto" && grid))
        return transport::mesh_fabric(cluster_.board(), cluster_topology, fo, topology != "mesh");
    const bool ring = topology == "ring" ||
                      (topology == "auto" && ring_.size() >= 3 && topo_.stretch(ring_, true) == 1.0);
    return transport::fabric_over(cluster_, ring, fo);
}

void CollectiveRunner::ensure_fabric() {
    if (fabric_plan_ && !fabric_)
        fabric_ = transport::Fabric::start(cluster_, *fabric_plan_, std::chrono::milliseconds(10000));
}

OpLayout CollectiveRunner::layout(const OpRequest& r) const {
    const Region& d = cluster_.board().dram;
    return layout_op(r, static_cast<uint32_t>(cluster_.size()), Span::bytes(d.base, d.size));
}

transport::EdmOptions CollectiveRunner::edm_options() const {
    transport::EdmOptions eo;
    eo.termination = abi::kEdmMessageCount;
    eo.slots = options_.slots;
    eo.slot_size = options_.slot_size;
    return eo;
}

std::unique_ptr<transport::Transport> CollectiveRunner::make_transport(transport::L1Allocator& mem) {
    if (fabric_plan_)
        return std::make_unique<transport::FabricTransport>(fabric_->builder(), cluster_.board(), mem,
                                                            options_.fabric_streams);
    return std::make_unique<transport::EdmTransport>(topo_, cluster_.board(), mem, edm_options());
}

LoweredOp CollectiveRunner::lower_op(const OpRequest& r, const std::string& algo) const {
    const OpLayout l = layout(r);
    const PlanContext ctx{r, l, topo_, ring_, line_, CtringTuning::from_env()};
    const Plan plan = build_plan(ctx, algo);
    LoweringOptions lo;
    const uint32_t message = fabric_plan_ ? options_.fabric_streams.message_bytes : options_.slot_size;
    const uint32_t slots = fabric_plan_ ? options_.fabric_streams.slots : options_.slots;
    lo.message_bytes = message;
    lo.piece_bytes = plan.piece_bytes ? plan.piece_bytes : uint64_t(slots) * message;
    lo.element_size = l.element;
    lo.reduce_arg = uint32_t(r.redop) | uint32_t(r.dtype) << 16;
    lo.workers_per_link = options_.workers_per_link;
    lo.planes = options_.planes;
    lo.scratch = l.scratch;
    if (fabric_plan_) return lower(plan, transport::FabricRouting(*fabric_plan_), workers_, lo);
    return lower(plan, transport::CableRouting(topo_), workers_, lo);
}

std::pair<std::string, LoweredOp> CollectiveRunner::choose(const OpRequest& r) const {
    if (is_fabric_algorithm(r.op, r.algo)) {
        if (!fabric_plan_)
            throw Error(collective_name(r.op) + "'s " + r.algo +
                        " algorithm runs on the fabric: use --transport fabric");
        return {r.algo, LoweredOp{}};  // no streams: the routers carry it
    }
    std::vector<std::string> algos = algorithms(r.op);
    if (is_grid(topo_.cluster()))
        for (const std::string& a : grid_algorithms(r.op)) algos.push_back(a);
    if (r.algo != "auto" || algos.size() == 1) {
        const std::string algo = r.algo != "auto" ? r.algo : algos.front();
        try {
            return {algo, lower_op(r, algo)};
        } catch (const WorkerShortage& e) {
            // Say which would: the user fixed one that cannot run here.
            std::string fit;
            for (const std::string& a : algos) {
                if (a == algo) continue;
                try {
                    lower_op(r, a);
                    fit += (fit.empty() ? "" : ", ") + a;
                } catch (const Error&) {
                }
            }
            throw Error(std::string(e.what()) + " for " + collective_name(r.op) + "'s " + algo + " algorithm" +
                        (fit.empty() ? "; no algorithm fits this cluster" : "; these fit: " + fit + " (or auto)"));
        }
    }
    // Every candidate is lowered to be costed; the winner's lowering is kept.
    // One that cannot be lowered here (too few worker cores for it, say) is
    // no candidate; if none can, the error names each one's reason.
    std::pair<std::string, LoweredOp> best;
    double best_t = 0;
    std::string why_not;
    for (const std::string& a : algos) {
        if (a == "auto") continue;
        LoweredOp op;
        try {
            op = lower_op(r, a);
        } catch (const Error& e) {
            why_not += "\n  " + a + ": " + e.what();
            continue;
        }
        const double t = model_.predict(r, a, op);
        if (best.first.empty() || t < best_t) best = {a, std::move(op)}, best_t = t;
    }
    if (best.first.empty()) throw Error("no " + collective_name(r.op) + " algorithm fits this cluster:" + why_not);
    return best;
}

std::string CollectiveRunner::resolve(const OpRequest& r) const { return r.algo != "auto" ? r.algo : choose(r).first; }

namespace {

// More lanes, more channels on one ERISC: an L1 refusal then names the knob.
PlacedOp place_with_hint(const LoweredOp& op, transport::Transport& transport, transport::L1Allocator& mem,
                         const BoardInfo& board, uint32_t workers_per_link) {
    try {
        return place_op(op, transport, mem, &kernel_named(board, "ccl_worker"));
    } catch (const Error& e) {
        if (workers_per_link <= 1) throw;
        throw Error(std::string(e.what()) + " (workers_per_link " + std::to_string(workers_per_link) +
                    " stripes each link over that many streams; lower WEFT_CCL_WORKERS_PER_LINK, WEFT_CCL_SLOTS or"
                    " WEFT_CCL_SLOT_SIZE)");
    }
}

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
    if (busy_) throw Error("an op is still running on this cluster: wait for it before starting another");
    PendingOp pending;
    OpTiming& timing = pending.timing;
    auto [algo, op] = choose(r);
    timing.algo = algo;
    timing.transport = options_.transport;
    timing.features = CostFeatures::of(op);
    timing.bytes_on_links = op.bytes_on_links;
    timing.hops = op.hops;
    timing.workers = static_cast<uint32_t>(op.workers.size());
    timing.streams = static_cast<uint32_t>(op.streams.size());
    timing.planes = op.planes;
    WEFT_INFO("ccl", "%s of %llu bytes (%s %s): algorithm %s%s over the %s, %u workers, %u streams",
              collective_name(r.op).c_str(), (unsigned long long)r.bytes, dtype_name(r.dtype).c_str(),
              redop_name(r.redop).c_str(), algo.c_str(), r.algo == "auto" ? " (auto)" : "", options_.transport.c_str(),
              timing.workers, timing.streams);
    ensure_fabric();
    if (is_fabric_algorithm(r.op, algo)) {  // the multicast kernels run to completion here
        const OpLayout l = layout(r);
        timing.bytes_on_links = l.elements * l.element * (l.ranks - 1);  // the vector crosses n - 1 cables
        timing.seconds = run_fabric_multicast(cluster_, *fabric_plan_, r, l,
                                              options_.timeout.count()
                                                  ? options_.timeout
                                                  : std::chrono::milliseconds(20000 + l.output_bytes / 20000));
        timing.workers = l.ranks;
        return pending;
    }
    transport::L1Allocator mem(cluster_.board());
    for (const resident::Running& r : resident::list(cluster_)) mem.keep_out(r.chip, r.core, r.l1);
    const auto transport = make_transport(mem);
    PlacedOp placed = place_with_hint(op, *transport, mem, cluster_.board(), options_.workers_per_link);
    if (placed.launches.empty()) return pending;
    placed.memory.apply(cluster_);

    pending.deadline = deadline(op);
    pending.launches = std::move(placed.launches);
    pending.started = std::chrono::steady_clock::now();
    pending.launched = cluster_.launch_all(pending.launches);
    pending.launched_at = std::chrono::steady_clock::now();
    pending.waited = false;
    busy_ = true;
    return pending;
}

OpTiming CollectiveRunner::wait(PendingOp& op) {
    if (op.waited) return op.timing;
    op.waited = true;
    busy_ = false;
    const std::vector<KernelResult> results = cluster_.wait_all(op.launched, op.deadline);
    OpTiming& timing = op.timing;
    timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - op.started).count();
    if (const std::string level = knobs::text(knobs::knob("WEFT_CCL_TRACE")); !level.empty())
        trace(timing, op.launches, results, std::chrono::duration<double>(op.launched_at - op.started).count(),
              cluster_.board().timebase_hz, level == "2");
    return timing;
}

}  // namespace weft::ccl
