#include "fabric_model/traffic.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "ccl/collective.h"
#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"
#include "driver/topology.h"
#include "fabric_model/stuck_channels.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/live_reroute.h"

namespace weft::fabric_model {
namespace {

// Where traffic keeps its words and bytes in each chip's DRAM.
constexpr uint32_t kSem = 0;               // packets' semaphore
constexpr uint32_t kSource = 1u << 20;     // what a stream sends (its window reused)
constexpr uint32_t kWindow = 1u << 20;     // a stream's bytes land in this much, round and round
constexpr uint32_t kOutput = 4u << 20;     // a collective's buffer
constexpr uint32_t kSources = 128u << 20;  // random writes' bytes, each its own
// What a chip of a grid made in memory keeps of its DRAM (HostCluster's
// ram_bytes): the traffic above stays below it unless an op's size is
// hundreds of MB, which such a grid's share per chip never is.
constexpr uint64_t kGridDram = 192u << 20;

// "5.E": chip 5's port named E (or a port number) on a cluster of `chips`
// chips of `board`. Throws weft::Error naming the text when it is none.
std::pair<uint32_t, uint32_t> cable_end(const BoardInfo& board, uint32_t chips, const std::string& text) {
    const size_t dot = text.find('.');
    int port = -1;
    uint64_t chip = 0;
    size_t digits = 0;
    try {
        if (dot == std::string::npos) throw std::invalid_argument(text);
        chip = std::stoull(text.substr(0, dot), &digits);
        if (digits != dot) throw std::invalid_argument(text);
        port = port_named(board, text.substr(dot + 1));
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < 0 || chip >= chips)
        throw Error("'" + text + "' is not a cable end of this cluster: CHIP.PORT, as 5.E (" + std::to_string(chips) +
                    " chips)");
    return {uint32_t(chip), uint32_t(port)};
}

model::FabricModel::Plan plan_for(const ModelOptions& o) {
    return [o](model::HostCluster& cluster) {
        for (const std::string& end : o.unplugged) {
            const auto [chip, port] = cable_end(cluster.board(), cluster.chip_count(), end);
            cluster.unplug(chip, port);
        }
        FabricSpec spec = cluster.fabric_spec();
        if (o.fabric.topology != "auto") spec.topology = o.fabric.topology;
        if (o.fabric.packet_bytes) spec.packet_bytes = o.fabric.packet_bytes;
        if (o.fabric.slots) spec.slots = o.fabric.slots;
        spec.flags |= o.fabric.flags;
        spec.bubble |= o.fabric.bubble;
        spec.fallback |= o.fabric.fallback;
        spec.record_packets = o.fabric.record_packets;
        spec.table_per_chip = true;
        // As weft run plans it: a plane that lost a cable its ring needs
        // has no fabric, and the next plane's runs the op.
        const uint32_t planes = spec.record_packets ? 1 : spec.planes_on(cluster.board().planes());
        return std::move(
            transport::plane_fabrics(cluster.board(), cluster.topology(), spec, planes, "the model's fabric: ", true)
                .front());
    };
}

// On ranks, the chips this rank runs (chip_owners): it holds only their
// routers. Empty: one rank holds every chip.
std::vector<bool> held_by_this_rank(const ClusterSpec& spec, const Ranks* ranks) {
    if (!ranks || ranks->size() == 1) return {};
    const std::vector<uint32_t> owner = chip_owners(ClusterTopology::from_spec(spec), spec.num_chips, ranks->size());
    std::vector<bool> held(spec.num_chips);
    for (uint32_t c = 0; c < spec.num_chips; ++c) held[c] = owner[c] == ranks->rank();
    return held;
}

std::unique_ptr<model::FabricModel> model_for(const ModelOptions& o) {
    if (o.grid) {
        // What the routers' tables address, before a chip is mapped: a grid
        // past it would fail only once the host ran out of memory for it.
        if (o.grid->meshes > abi::kFabricMaxMeshes)
            throw Error("the model's fabric: " + std::to_string(o.grid->meshes) +
                        " meshes: a chip's L1 table holds meshes 0-" + std::to_string(abi::kFabricMaxMeshes - 1));
        if (uint64_t(o.grid->width) * o.grid->height > abi::kFabricMaxMeshChips)
            throw Error("the model's fabric: a 2D fabric's routing table holds " +
                        std::to_string(abi::kFabricMaxMeshChips) + " chips, not " +
                        std::to_string(uint64_t(o.grid->width) * o.grid->height) + " (" +
                        std::to_string(o.grid->width) + "x" + std::to_string(o.grid->height) + ")");
        ClusterSpec spec = grid_cluster_spec(*o.grid);
        const uint64_t ram_bytes = spec.board.dram.base - spec.board.ram.base + kGridDram;
        std::vector<bool> held = held_by_this_rank(spec, o.ranks);
        return std::make_unique<model::FabricModel>(std::move(spec), plan_for(o), ram_bytes, std::move(held));
    }
    ClusterSpec spec = load_cluster(paths::cluster_file(o.cluster), paths::load_built_board);
    std::vector<bool> held = held_by_this_rank(spec, o.ranks);
    return std::make_unique<model::FabricModel>(std::move(spec), plan_for(o), 0, std::move(held));
}

}  // namespace

Simulation::Simulation(const ModelOptions& options)
    : model_(model_for(options)),
      engine_(std::make_unique<TimedFabric>(*model_, options.costs, options.ranks)),
      // As the QEMU cluster's (transport::Fabric): the fabric's plane, and a
      // fallback only where the fabric has relays.
      control_(std::make_unique<transport::ControlPlane>(
          model_->cluster().board(), transport::routed_topology(model_->cluster().topology(), model_->fabric()),
          transport::routing_plane(model_->cluster().board(), model_->fabric()),
          transport::has_relays(model_->fabric()))) {
    for (const CableEvent& e : options.cable_events) {
        const auto [chip, port] = cable_end(model_->cluster().board(), chips(), e.end);
        scheduled_.push_back({e.end, chip, port, e.at_ns, e.up});
    }
    std::stable_sort(scheduled_.begin(), scheduled_.end(),
                     [](const Scheduled& a, const Scheduled& b) { return a.at_ns < b.at_ns; });
}

void Simulation::disrupt(const Scheduled& e) {
    const std::string when = e.end + " at " + std::to_string(e.at_ns) + " ns";
    if (e.up) {
        disruptions_.push_back("plugged " + when + " back in: " + restore_cable(e.chip, e.port));
        return;
    }
    const transport::RerouteDecision d = fail_cable(e.chip, e.port);
    const char* kind = d.kind == transport::RerouteDecision::kNewTables  ? "rerouted live"
                       : d.kind == transport::RerouteDecision::kFallback ? "onto its fallback relay"
                       : d.kind == transport::RerouteDecision::kCutOff   ? "the fabric is cut"
                       : d.kind == transport::RerouteDecision::kRefused  ? "refused"
                                                                         : "nothing to move";
    disruptions_.push_back("pulled " + when + ": " + kind + (d.why.empty() ? "" : ": " + d.why));
}

uint32_t Simulation::max_payload() const { return model_->router_config(0).slot_size - abi::kFabricHeaderBytes; }

void Simulation::write(uint32_t from, uint32_t to, uint64_t dst, uint64_t src, uint64_t bytes, uint64_t sem,
                       uint64_t after, uint32_t after_value) {
    if (!engine_->owns(from)) return;  // its rank queues it
    const uint32_t most = max_payload();
    bool first = true;
    do {
        const uint32_t n = uint32_t(std::min<uint64_t>(bytes, most));
        model::ModelPacket p;
        p.command = n == bytes ? abi::kFabricWriteInc : abi::kFabricWrite;
        p.dst = dst, p.src = src, p.bytes = n;
        if (n == bytes) p.sem = sem, p.inc = 1;
        if (first) p.after = after, p.after_value = after_value;
        model_->send(from, to, p);
        dst += n, src += n, bytes -= n, first = false;
    } while (bytes);
}

void Simulation::multicast(uint32_t from, uint32_t first, uint8_t count, uint64_t dst, uint64_t src, uint32_t bytes,
                           uint64_t sem) {
    if (model_->fabric().dims() != 1) throw Error("a multicast runs on a 1D fabric");
    if (bytes > max_payload())
        throw Error("a multicast of " + std::to_string(bytes) + " bytes: a packet carries " +
                    std::to_string(max_payload()));
    if (!engine_->owns(from)) return;  // its rank queues it
    model::ModelPacket p;
    p.command = abi::kFabricWriteInc;
    p.dst = dst, p.src = src, p.bytes = bytes, p.sem = sem, p.inc = 1;
    p.route.count = count;
    model_->send(from, first, p);
}

RunResult Simulation::finish(uint64_t limit_ns) {
    uint64_t events = 0;  // before the events: run's count is the last call's
    for (const Scheduled& e : scheduled_) {
        RunResult before;
        if (e.at_ns < limit_ns) before = engine_->run(e.at_ns), events += before.events;
        if (e.at_ns < limit_ns && !before.finished) {
            disrupt(e);
            engine_->wake_routers();
        } else {
            disruptions_.push_back((e.up ? "plugged " : "pulled ") + e.end + " at " + std::to_string(e.at_ns) +
                                   " ns: not done, the traffic had ended");
        }
    }
    scheduled_.clear();
    RunResult r = engine_->run(limit_ns);
    r.events += events;
    if (r.stuck && !unrouted_.empty()) {
        std::string cables;
        for (const Unrouted& u : unrouted_)
            cables += "\n  chip " + std::to_string(u.ends[0].first) + " port " + std::to_string(u.ends[0].second) +
                      ": " + u.why;
        throw Error("nothing moves at " + std::to_string(r.end_ns) +
                    " ns: packets wait on cables that died and were not routed round" + cables + "\n" +
                    stuck_report(*model_, *engine_));
    }
    if (r.stuck)
        throw Error("the fabric deadlocked at " + std::to_string(r.end_ns) + " ns: nothing moves\n" +
                    stuck_report(*model_, *engine_));
    if (!r.finished)
        throw Error("the traffic did not finish within " + std::to_string(limit_ns) + " ns of virtual time\n" +
                    stuck_report(*model_, *engine_));
    return r;
}

Simulation::CableEnds Simulation::ends_of(uint32_t chip, uint32_t port) {
    const abi::PortState& p = model_->cluster().memory(chip).control().port[port];
    return {{{chip, port}, {p.peer_chip, p.peer_port}}};
}

std::vector<std::pair<abi::FabricLinkWords*, abi::FabricLinkWords>> Simulation::share_link_words(uint32_t chip,
                                                                                                  uint32_t port) {
    std::vector<std::pair<abi::FabricLinkWords*, abi::FabricLinkWords>> stale;
    Ranks& ranks = engine_->ranks();
    if (ranks.size() == 1) return stale;
    const CableEnds ends = ends_of(chip, port);
    for (const transport::FabricRouterPlan& p : model_->fabric().routers()) {
        if (std::find(ends.begin(), ends.end(), std::pair{p.chip, p.port}) == ends.end()) continue;
        auto* w = reinterpret_cast<abi::FabricLinkWords*>(
            model_->cluster().bytes(p.chip, p.config.link_words, sizeof(abi::FabricLinkWords)));
        const bool mine = engine_->owns(p.chip);
        abi::FabricLinkWords owners{};
        for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) {
            owners.filled[v] = uint32_t(ranks.sum(mine ? w->filled[v] : 0));
            owners.acked[v] = uint32_t(ranks.sum(mine ? w->acked[v] : 0));
        }
        if (mine) continue;
        stale.push_back({w, {}});
        std::memcpy(&stale.back().second, w, sizeof *w);
        std::memcpy(w, &owners, sizeof *w);
    }
    return stale;
}

transport::RerouteDecision Simulation::fail_cable(uint32_t chip, uint32_t port) {
    engine_->set_cable(chip, port, false);
    const auto stale = share_link_words(chip, port);
    const transport::RerouteDecision d =
        transport::reroute_live(model_->cluster(), model_->fabric(), *control_, chip, port, moving_);
    // Another rank's chips keep the copy they had: this rank neither runs
    // nor counts them (the held packets of its quiet()).
    for (const auto& [w, old] : stale) std::memcpy(w, &old, sizeof old);
    engine_->wake_routers();  // the host wrote their tables and commands
    settle_move();
    if (d.kind == transport::RerouteDecision::kRefused || d.kind == transport::RerouteDecision::kCutOff)
        unrouted_.push_back({ends_of(chip, port), d.why});
    return d;
}

// The move round a dead cable settles as a host's would (settle_move), a
// look every few cable latencies of virtual time; the cable's two routers
// read each other's counts across ranks when they go round.
void Simulation::settle_move() {
    Ranks& ranks = engine_->ranks();
    const transport::AllRanks all = [&ranks](bool here) { return ranks.min(here ? 1 : 0) == 1; };
    const uint64_t look_ns = std::max<uint64_t>(2000, 4 * engine_->costs().cable_latency_ns);
    uint64_t t = engine_->now_ns();
    for (int looks = 0; moving_.phase != transport::PendingMove::kNone; ++looks) {
        t += look_ns;
        engine_->run(t);
        const auto stale = share_link_words(moving_.chip, moving_.port);
        if (looks == kSettleLooks) {
            transport::end_move(model_->cluster(), model_->fabric(), moving_);
            disruptions_.push_back("the move did not settle in " + std::to_string(kSettleLooks) +
                                   " looks: its routers went round at once, order unkept");
        } else {
            transport::settle_move(model_->cluster(), model_->fabric(), moving_, {}, all);
        }
        for (const auto& [w, old] : stale) std::memcpy(w, &old, sizeof old);
        engine_->wake_routers(t);  // a rank whose queue ran dry stands before t
    }
}

std::string Simulation::restore_cable(uint32_t chip, uint32_t port) {
    const CableEnds ends = ends_of(chip, port);
    std::erase_if(unrouted_, [&](const Unrouted& u) { return u.ends[0] == ends[0] || u.ends[0] == ends[1]; });
    engine_->set_cable(chip, port, true);
    if (engine_->ranks().size() > 1) {  // a return reads both ends' routers, which two ranks may run
        control_->cable_up(chip, port);
        return "on MPI ranks its routers keep their way round it until the next fabric";
    }
    for (const transport::FabricRouterPlan& p : model_->fabric().routers()) {
        if (p.chip != chip || p.port != port || p.relay_for >= 0) continue;
        uint32_t command = 0;
        model_->cluster().read(chip, p.config.status + offsetof(abi::FabricRouterStatus, command), &command,
                               sizeof command);
        if (command == abi::kFabricReroute) return return_from_detours(chip, port);
    }
    const std::string why = transport::rejoin_live(model_->cluster(), model_->fabric(), *control_, chip, port);
    engine_->wake_routers();
    if (why.empty()) return "its routers leave their fallback relays for it";
    control_->cable_up(chip, port);  // its routers never left it
    return "it is up";
}

// As weft run's control plane takes such a cable back: its routers pause
// (between meshes every lane waits instead) until what they sent round is
// delivered and, between meshes, the fabric has settled, then take it
// again; a look every few cable latencies.
std::string Simulation::return_from_detours(uint32_t chip, uint32_t port) {
    const uint64_t look_ns = std::max<uint64_t>(2000, 4 * engine_->costs().cable_latency_ns);
    transport::PendingReturn back;
    uint64_t t = engine_->now_ns();
    for (int looks = 0;; ++looks) {
        const transport::ReturnStep step =
            transport::return_from_detours(model_->cluster(), model_->fabric(), *control_, chip, port, back);
        engine_->wake_routers(t);  // the host wrote their commands (and tables)
        if (step == transport::ReturnStep::kRejoined) return "its routers leave their detours for it";
        if (step == transport::ReturnStep::kRefused)
            return "its detours stay until the next fabric, as weft run's do: taking it again " + back.why;
        if (looks == kSettleLooks) {
            transport::resume_detours(model_->cluster(), model_->fabric(), chip, port, back);
            engine_->wake_routers(t);
            return "the detours round it did not drain in " + std::to_string(kSettleLooks) +
                   " looks: they stay until the next fabric";
        }
        t += look_ns;
        engine_->run(t);
    }
}

namespace {

// Chip to chip over the fabric: a chip does not send to itself through it.
void check_pair(const Simulation& sim, uint32_t from, uint32_t to) {
    for (uint32_t chip : {from, to})
        if (chip >= sim.chips())
            throw Error("chip " + std::to_string(chip) + " is not in the cluster (chips 0-" +
                        std::to_string(sim.chips() - 1) + ")");
    if (from == to) throw Error("chip " + std::to_string(from) + " to itself does not cross the fabric");
}

// The cables crossed so far: every router's packets sent on its cable (one
// packet alone in the fabric: its hops, whatever meshes it crossed, where a
// table's entry counts only the hops to its own mesh's exit).
uint32_t cables_crossed(Simulation& sim) {
    const model::FabricModel& m = sim.model();
    uint64_t sent = 0;
    for (size_t r = 0; r < m.router_count(); ++r) {
        if (!sim.engine().owns(m.router_chip(r))) continue;  // its rank counts it
        const abi::FabricRouterStatus& s = m.router_status(r);
        for (uint32_t vc = 0; vc < abi::kFabricMaxVcs; ++vc) sent += s.vc_packets_sent[vc];
    }
    return uint32_t(sim.engine().ranks().sum(sent));
}

}  // namespace

Latency packet_latency(const ModelOptions& options, uint32_t from, uint32_t to, uint32_t payload_bytes) {
    Simulation sim(options);
    check_pair(sim, from, to);
    if (payload_bytes > sim.max_payload())
        throw Error("a packet carries at most " + std::to_string(sim.max_payload()) + " bytes here");
    model::FabricModel& m = sim.model();
    sim.write(from, to, m.dram(kOutput), m.dram(kSource), payload_bytes, m.dram(kSem));
    const size_t landed = sim.engine().watch(to, m.dram(kSem), 1);
    sim.finish();
    return {cables_crossed(sim), sim.engine().latest({landed})};
}

Stream stream(const ModelOptions& options, uint32_t from, uint32_t to, uint64_t bytes, uint32_t payload_bytes) {
    Simulation sim(options);
    check_pair(sim, from, to);
    model::FabricModel& m = sim.model();
    if (bytes == 0) throw Error("a stream of 0 bytes sends nothing: give --size");
    if (payload_bytes > sim.max_payload())
        throw Error("a packet carries at most " + std::to_string(sim.max_payload()) + " bytes here");
    const uint32_t payload = payload_bytes ? payload_bytes : sim.max_payload();
    Stream s;
    for (uint64_t sent = 0; sent < bytes; sent += payload, ++s.packets) {
        const uint32_t n = uint32_t(std::min<uint64_t>(payload, bytes - sent));
        model::ModelPacket p;
        p.command = abi::kFabricWriteInc;
        p.dst = m.dram(kOutput + uint32_t(sent % kWindow)), p.src = m.dram(kSource), p.bytes = n;
        p.sem = m.dram(kSem), p.inc = 1;
        m.send(from, to, p);
    }
    const size_t landed = sim.engine().watch(to, m.dram(kSem), uint32_t(s.packets));
    sim.finish();
    s.bytes = bytes;
    s.ns = sim.engine().latest({landed});
    return s;
}

void check_collective(const std::string& op) {
    if (op != "all_gather" && op != "reduce_scatter" && op != "all_reduce")
        throw Error("the model runs all_gather, reduce_scatter and all_reduce, not '" + op + "'");
}

double OpTime::busbw() const {
    if (op == "shift") return algbw();
    return algbw() * ccl::bus_factor(ccl::parse_collective(op), chips);
}

OpTime ring_collective(const ModelOptions& options, const std::string& op, uint64_t bytes) {
    check_collective(op);
    Simulation sim(options);
    return ring_collective(sim, op, bytes);
}

// The traffic's buffer on each chip: `bytes` from kOutput on, inside the DRAM.
void check_fits(Simulation& sim, const std::string& op, uint64_t bytes) {
    const BoardInfo& board = sim.model().cluster().board();
    const uint64_t kept = sim.model().cluster().memory(0).memory().size - (board.dram.base - board.ram.base);
    const uint64_t dram = std::min(board.dram.size, kept);  // a grid's chips keep less than the board has
    if (bytes > dram - kOutput)
        throw Error(op + " of " + std::to_string(bytes) + " bytes does not fit a chip's DRAM (" +
                    std::to_string(dram >> 20) + " MiB; its buffer starts at " + std::to_string(kOutput >> 20) +
                    " MiB)");
}

OpTime ring_collective(Simulation& sim, const std::string& op, uint64_t bytes) {
    check_collective(op);
    check_fits(sim, op, bytes);
    model::FabricModel& m = sim.model();
    const std::vector<uint32_t> order = Topology(m.cluster().topology()).ring_order();
    const uint32_t n = uint32_t(order.size());
    const uint64_t chunk = bytes / n;
    if (chunk == 0) throw Error("the size must be at least one byte per chip (" + std::to_string(n) + ")");
    const uint32_t steps = op == "all_reduce" ? 2 * (n - 1) : n - 1;
    for (uint32_t p = 0; p < n; ++p) {
        uint8_t* own = m.bytes(order[p], m.dram(kOutput + uint32_t(p * chunk)), chunk);
        std::fill(own, own + chunk, uint8_t(p * 37 + 1));
    }
    // Step k sends the chunk that arrived at step k - 1 (its own at step 0).
    for (uint32_t p = 0; p < n; ++p)
        for (uint32_t k = 0; k < steps; ++k) {
            const uint64_t at = kOutput + ((p + n - k % n) % n) * chunk;
            sim.write(order[p], order[(p + 1) % n], m.dram(uint32_t(at)), m.dram(uint32_t(at)), chunk, m.dram(kSem),
                      k ? m.dram(kSem) : 0, k);
        }
    std::vector<size_t> done;
    for (uint32_t c : order) done.push_back(sim.engine().watch(c, m.dram(kSem), steps));
    const RunResult r = sim.finish();
    OpTime t{op, "", n, bytes, 0, r.events, "", sim.disruptions()};
    t.ns = sim.engine().latest(done);
    std::string wrong;  // each rank checks its own chips
    if (op == "all_gather")
        for (uint32_t c : order)
            for (uint32_t p = 0; p < n && wrong.empty() && sim.engine().owns(c); ++p) {
                const uint8_t* got = m.bytes(c, m.dram(kOutput + uint32_t(p * chunk)), chunk);
                if (std::any_of(got, got + chunk, [&](uint8_t b) { return b != uint8_t(p * 37 + 1); }))
                    wrong = "all_gather in the model: chip " + std::to_string(c) + " holds a wrong chunk " +
                            std::to_string(p);
            }
    if (sim.engine().ranks().max(wrong.empty() ? 0 : 1))
        throw Error(wrong.empty() ? "all_gather in the model: another rank's chip holds a wrong chunk" : wrong);
    return t;
}

namespace {

// A random write's place: each lands in a slot of its own on the receiver,
// filled with a byte that names it, and adds 1 to the receiver's semaphore.
struct RandomWrite {
    uint32_t from, to, bytes;
    uint8_t fill;
};

// What arrived wrong on this rank's chips ("" if nothing), in the order
// one rank would find it: each rank checks the chips it runs.
std::string wrong_random(Simulation& sim, const std::vector<RandomWrite>& writes, uint32_t slot) {
    model::FabricModel& m = sim.model();
    std::vector<uint32_t> expected(m.chips(), 0);
    for (size_t i = 0; i < writes.size(); ++i) {
        const RandomWrite& w = writes[i];
        ++expected[w.to];
        if (!sim.engine().owns(w.to)) continue;
        const uint8_t* got = m.bytes(w.to, m.dram(kOutput + uint32_t(i) * slot), w.bytes);
        const uint8_t* wrong = std::find_if(got, got + w.bytes, [&](uint8_t b) { return b != w.fill; });
        if (wrong != got + w.bytes)
            return "random write " + std::to_string(i) + " from chip " + std::to_string(w.from) + " to chip " +
                   std::to_string(w.to) + " (" + std::to_string(w.bytes) + " bytes) arrived wrong: byte " +
                   std::to_string(wrong - got) + " is " + std::to_string(*wrong) + ", not " + std::to_string(w.fill);
    }
    for (uint32_t c = 0; c < m.chips(); ++c)
        if (sim.engine().owns(c) && m.word(c, m.dram(kSem)) != expected[c])
            return "chip " + std::to_string(c) + " counted " + std::to_string(m.word(c, m.dram(kSem))) +
                   " writes, not " + std::to_string(expected[c]);
    return "";
}

// Every rank's text, in rank order, on every rank (all reach the same result).
std::string from_every_rank(Ranks& ranks, const std::string& mine) {
    const std::vector<uint8_t> all = from_every_rank(ranks, std::vector<uint8_t>(mine.begin(), mine.end()));
    return std::string(all.begin(), all.end());
}

}  // namespace

RandomRun random_traffic(const ModelOptions& options, uint64_t seed, uint32_t count, uint32_t failures) {
    Simulation sim(options);
    Ranks& ranks = sim.engine().ranks();
    model::FabricModel& m = sim.model();
    std::mt19937_64 rng(seed);
    const uint32_t slot = 4 * sim.max_payload();
    if (uint64_t(count) * slot > (64u << 20))
        throw Error("at most " + std::to_string((64u << 20) / slot) + " random writes at a time");
    std::vector<RandomWrite> writes;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t from = uint32_t(rng() % m.chips());
        const uint32_t to = (from + 1 + uint32_t(rng() % (m.chips() - 1))) % m.chips();
        const RandomWrite w{from, to, 1 + uint32_t(rng() % slot), uint8_t(1 + rng() % 255)};
        uint8_t* src = m.bytes(from, m.dram(kSources + i * slot), w.bytes);
        std::fill(src, src + w.bytes, w.fill);
        sim.write(w.from, w.to, m.dram(kOutput + i * slot), m.dram(kSources + i * slot), w.bytes, m.dram(kSem));
        writes.push_back(w);
    }
    RandomRun r;
    const ClusterTopology topology = m.cluster().topology();
    if (failures > topology.links().size())
        throw Error("--fail " + std::to_string(failures) + ": the cluster has " +
                    std::to_string(topology.links().size()) + " cables");
    std::vector<bool> failed(topology.links().size());
    for (uint32_t f = 0; f < failures; ++f) {
        const uint64_t at = ranks.max(sim.engine().now_ns()) + 1000 + rng() % 20000;
        if (sim.engine().run(at).finished) break;
        size_t pick = rng() % topology.links().size();
        while (failed[pick]) pick = (pick + 1) % failed.size();  // each cable fails once
        failed[pick] = true;
        const LinkInfo& cable = topology.links()[pick];
        const transport::RerouteDecision d = sim.fail_cable(cable.chip_a, cable.port_a);
        r.failed.push_back("chip " + std::to_string(cable.chip_a) + " port " + std::to_string(cable.port_a) + ": " +
                           d.why);
    }
    RunResult end;
    std::string wrong;
    try {
        end = sim.finish();
        const std::string mine = wrong_random(sim, writes, slot);
        wrong = from_every_rank(ranks, mine.empty() ? "" : mine + "\n");
    } catch (const Error& e) {
        wrong = std::string(e.what()) + "\n";  // finish() throws on every rank alike
    }
    if (!wrong.empty()) {
        std::string failed;
        for (const std::string& f : r.failed) failed += "  after failing " + f + "\n";
        throw Error(wrong + failed + from_every_rank(ranks, drop_report(m, sim.engine())));
    }
    r.writes = count;
    r.ns = end.end_ns;
    r.events = ranks.sum(sim.engine().events_run());
    return r;
}

OpTime ring_shift(Simulation& sim, uint32_t distance, uint64_t bytes) {
    model::FabricModel& m = sim.model();
    const std::vector<uint32_t> order = Topology(m.cluster().topology()).ring_order();
    const uint32_t n = uint32_t(order.size());
    const uint64_t chunk = bytes / n;
    if (chunk == 0) throw Error("the size must be at least one byte per chip (" + std::to_string(n) + ")");
    check_fits(sim, "a shift's share per chip", chunk);  // each chip's buffer holds its share, not the whole
    if (distance % n == 0)
        throw Error("a shift by " + std::to_string(distance) + " of " + std::to_string(n) +
                    " chips sends every chip's bytes to itself");
    std::vector<size_t> landed;
    for (uint32_t p = 0; p < n; ++p) {
        const uint32_t to = order[(p + distance) % n];
        sim.write(order[p], to, m.dram(kOutput), m.dram(kSource), chunk, m.dram(kSem));
        landed.push_back(sim.engine().watch(to, m.dram(kSem), 1));
    }
    const RunResult r = sim.finish();
    OpTime t{"shift", "", n, bytes, 0, r.events, "", sim.disruptions()};
    t.ns = sim.engine().latest(landed);
    return t;
}

}  // namespace weft::fabric_model
