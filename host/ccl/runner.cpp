#include "ccl/runner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "common/error.h"
#include "common/knobs.h"
#include "driver/kernel_args.h"

namespace weft::ccl {

RunnerOptions RunnerOptions::from_env() {
    RunnerOptions o;
    // The knobs' ranges keep every value within 32 bits.
    o.slots = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_SLOTS")));
    o.slot_size = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_SLOT_SIZE")));
    o.workers_per_link = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_WORKERS_PER_LINK")));
    o.planes = static_cast<uint32_t>(knobs::integer(knobs::knob("WEFT_CCL_PLANES")));
    return o;
}

CollectiveRunner::CollectiveRunner(Cluster& cluster, RunnerOptions options)
    : cluster_(cluster),
      options_(options),
      topo_(static_cast<uint32_t>(cluster.size()), cluster.links()),
      ring_(topo_.ring_order()),
      line_(topo_.line_order()),
      workers_(cluster.board().cores_with_role(CoreRole::kWorker)),
      model_(CostModel::for_cluster(cluster.info().value("name", std::string()))) {
    cluster.apply_wake_override();
}

OpLayout CollectiveRunner::layout(const OpRequest& r) const {
    const Region& d = cluster_.board().dram;
    return layout_op(r, static_cast<uint32_t>(cluster_.size()), Span::bytes(d.base, d.size));
}

LoweredOp CollectiveRunner::lower_op(const OpRequest& r, const std::string& algo) const {
    const OpLayout l = layout(r);
    const PlanContext ctx{r, l, topo_, ring_, line_, CtringTuning::from_env()};
    const Plan plan = build_plan(ctx, algo);
    LoweringOptions lo;
    lo.slot_size = options_.slot_size;
    lo.piece_bytes = plan.piece_bytes ? plan.piece_bytes : uint64_t(options_.slots) * options_.slot_size;
    lo.element_size = l.element;
    lo.reduce_arg = uint32_t(r.redop) | uint32_t(r.dtype) << 16;
    lo.workers_per_link = options_.workers_per_link;
    lo.planes = options_.planes;
    lo.scratch = l.scratch;
    return lower(plan, topo_, workers_, lo);
}

std::pair<std::string, LoweredOp> CollectiveRunner::choose(const OpRequest& r) const {
    const auto& algos = algorithms(r.op);
    if (r.algo != "auto" || algos.size() == 1) {
        const std::string algo = r.algo != "auto" ? r.algo : algos.front();
        return {algo, lower_op(r, algo)};
    }
    // Every candidate is lowered to be costed; the winner's lowering is kept.
    std::pair<std::string, LoweredOp> best;
    double best_t = 0;
    for (const std::string& a : algos) {
        LoweredOp op = lower_op(r, a);
        const double t = model_.predict(r, a, op);
        if (best.first.empty() || t < best_t) best = {a, std::move(op)}, best_t = t;
    }
    return best;
}

std::string CollectiveRunner::resolve(const OpRequest& r) const {
    return r.algo != "auto" ? r.algo : choose(r).first;
}

OpTiming CollectiveRunner::run(const OpRequest& r) {
    OpTiming timing;
    auto [algo, op] = choose(r);
    timing.algo = algo;
    timing.features = CostFeatures::of(op);
    const BoardInfo& board = cluster_.board();
    L1Allocator mem(board);
    EdmOptions eo;
    eo.termination = abi::kEdmMessageCount;
    eo.slots = options_.slots;
    eo.slot_size = options_.slot_size;

    // One EDM builder per cable that carries a stream, both directions together.
    std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<EdmLinkBuilder>> links;
    // Per worker, its EDM connections in the order of its ports (CclInstr::connection).
    std::vector<std::vector<uint64_t>> connections_of(op.workers.size());
    for (size_t w = 0; w < op.workers.size(); ++w) connections_of[w].assign(op.workers[w].ports.size(), 0);
    auto connection_slot = [&](size_t w, uint32_t port) -> uint64_t& {
        const uint32_t c = op.workers[w].connection_of(port);
        if (c == op.workers[w].ports.size()) throw Error("internal: a stream on a port its worker does not serve");
        return connections_of[w][c];
    };
    std::map<std::pair<uint32_t, uint32_t>, size_t> worker_at;  // (chip, core) -> worker
    for (size_t w = 0; w < op.workers.size(); ++w) worker_at[{op.workers[w].chip, op.workers[w].core}] = w;
    auto cable_of = [](const Stream& s) -> std::pair<uint64_t, uint64_t> {  // by value: minmax returns references
        const uint64_t a = uint64_t(s.chip) << 32 | s.port, b = uint64_t(s.peer_chip) << 32 | s.peer_port;
        return {std::min(a, b), std::max(a, b)};
    };
    std::map<std::pair<uint64_t, uint64_t>, size_t> channels_on;  // cable -> its streams, both ways
    for (const Stream& s : op.streams) ++channels_on[cable_of(s)];
    for (const Stream& s : op.streams) {
        const uint64_t a = uint64_t(s.chip) << 32 | s.port;
        const auto key = cable_of(s);
        auto& link = links[key];
        if (!link) {
            const PortRef first{uint32_t(key.first >> 32), uint32_t(key.first)};
            const PortRef second{uint32_t(key.second >> 32), uint32_t(key.second)};
            link = std::make_unique<EdmLinkBuilder>(mem, board, first, second, eo);
        }
        const int from_end = a == key.first ? 0 : 1;
        ChannelInterface ch, rx;
        try {
            ch = link->add_sender_channel(from_end, {s.sender_core}, s.messages);
            rx = link->add_receiver_channel(ch.id, {s.receiver_core});
        } catch (const Error& e) {
            // More lanes, more channels on one ERISC: say which knob made them.
            if (options_.workers_per_link <= 1) throw;
            throw Error(std::string(e.what()) + " (workers_per_link " + std::to_string(options_.workers_per_link) +
                        " gives this link " + std::to_string(channels_on[key]) +
                        " EDM channels; lower WEFT_CCL_WORKERS_PER_LINK, WEFT_CCL_SLOTS or WEFT_CCL_SLOT_SIZE)");
        }
        connection_slot(worker_at.at({s.chip, s.sender_core}), s.port) = ch.senders.at(0).connection;
        connection_slot(worker_at.at({s.peer_chip, s.receiver_core}), s.peer_port) = rx.receivers.at(0).connection;
    }

    // Programs and signal semaphores in each worker's L1, then the signal addresses.
    std::vector<uint64_t> program_at(op.workers.size()), signals_at(op.workers.size()), table_at(op.workers.size(), 0);
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> signals_of;  // (chip, worker index)
    for (size_t w = 0; w < op.workers.size(); ++w) {
        const WorkerProgram& p = op.workers[w];
        const std::string what = "CCL program of " + std::to_string(p.code.size()) + " instructions";
        program_at[w] = mem.allocate(p.chip, p.core, p.code.size() * sizeof(abi::CclInstr), 64, what);
        signals_at[w] = mem.allocate(p.chip, p.core, 4 * abi::kCclMaxProducers, 16, "CCL signal semaphores");
        if (!connections_of[w].empty())
            table_at[w] = mem.allocate(p.chip, p.core, 8 * connections_of[w].size(), 8, "CCL EDM connection table");
        signals_of[{p.chip, p.index}] = signals_at[w];
    }
    std::vector<Launch> launches;
    for (auto& [key, link] : links) {
        link->write(cluster_);
        launches.push_back(link->edm_launch(0));
        launches.push_back(link->edm_launch(1));
    }
    const KernelImage& worker_kernel = kernel_named("ccl_worker");
    for (size_t w = 0; w < op.workers.size(); ++w) {
        WorkerProgram p = op.workers[w];
        for (abi::CclInstr& in : p.code)
            if (in.opcode == abi::kCclSignal) {
                in.dst.base = signals_of.at({p.chip, in.arg}) + 4ull * p.index;
                in.arg = p.index;
            }
        Chip& chip = cluster_.chip(p.chip);
        if (!p.code.empty()) chip.write(program_at[w], p.code.data(), p.code.size() * sizeof(abi::CclInstr));
        const uint32_t zero[abi::kCclMaxProducers] = {};
        chip.write(signals_at[w], zero, sizeof zero);
        if (table_at[w]) chip.write(table_at[w], connections_of[w].data(), 8 * connections_of[w].size());
        launches.push_back({p.chip, p.core, &worker_kernel,
                            KernelArgWords()
                                .u64(program_at[w])
                                .u32(static_cast<uint32_t>(p.code.size()))
                                .u64(signals_at[w])
                                .u64(table_at[w])
                                .u32(static_cast<uint32_t>(connections_of[w].size()))});
    }
    timing.bytes_on_links = op.bytes_on_links;
    timing.hops = op.hops;
    timing.workers = static_cast<uint32_t>(op.workers.size());
    timing.streams = static_cast<uint32_t>(op.streams.size());
    timing.planes = op.planes;
    if (launches.empty()) return timing;

    // Generous: the emulated links move well over 20 MB/s even on a loaded host.
    auto timeout = options_.timeout;
    if (timeout.count() == 0)
        timeout = std::chrono::milliseconds(20000 + op.bytes_on_links / (20u << 20) * 1000 / std::max<size_t>(1, links.size()));
    const auto t0 = std::chrono::steady_clock::now();
    const auto launched = cluster_.launch_all(launches);
    const auto t1 = std::chrono::steady_clock::now();
    const std::vector<KernelResult> results = cluster_.wait_all(launched, timeout);
    timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (const std::string trace = knobs::text(knobs::knob("WEFT_CCL_TRACE")); !trace.empty()) {
        double slowest = 0;
        for (const KernelResult& k : results) slowest = std::max(slowest, double(k.ticks) / board.timebase_hz);
        std::fprintf(stderr, "ccl %s: %zu kernels launched in %.2f ms, all done after %.2f ms, slowest kernel %.2f ms\n",
                     timing.algo.c_str(), launches.size(),
                     std::chrono::duration<double>(t1 - t0).count() * 1e3, timing.seconds * 1e3, slowest * 1e3);
        if (trace == "2")
            for (size_t k = 0; k < results.size(); ++k)
                std::fprintf(stderr, "   chip %u core %u %-10s %8.2f ms\n", launches[k].chip, launches[k].core,
                             launches[k].kernel->name.c_str(), double(results[k].ticks) / board.timebase_hz * 1e3);
    }
    return timing;
}

}  // namespace weft::ccl
