#include "transport/fabric/fabric.h"

#include <stdio.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "common/error.h"
#include "common/log.h"
#include "driver/paths.h"
#include "driver/resident.h"
#include "driver/topology.h"
#include "transport/fabric/fabric_wait.h"
#include "transport/fabric/live_reroute.h"
#include "transport/fabric/router_telemetry.h"

namespace weft::transport {

FabricBuilder fabric_over(Machine& machine, bool ring, FabricSpec options, uint32_t plane) {
    return fabric_over(machine.board(), machine.topology(), ring, options, plane);
}

FabricBuilder fabric_over(const BoardInfo& board, const ClusterTopology& topology, bool ring, FabricSpec options,
                          uint32_t plane) {
    const Topology topo(topology);
    const std::vector<uint32_t> order = ring ? topo.ring_order() : topo.line_order();
    std::vector<Hop> cables;
    std::vector<std::optional<Hop>> fallbacks;
    for (size_t i = 0; i < (ring ? order.size() : order.size() - 1); ++i) {
        const uint32_t from = order[i], to = order[(i + 1) % order.size()];
        const std::vector<Hop>& c = topo.cables(from, to);
        const auto on_plane = std::find_if(c.begin(), c.end(), [&](const Hop& h) {
            return board.ports.at(h.from_port).plane == plane && board.ports.at(h.to_port).plane == plane;
        });
        if (on_plane == c.end())
            throw Error("no working cable of plane " + std::to_string(plane) + " joins chip " + std::to_string(from) +
                        " to chip " + std::to_string(to) + " for a fabric " + (ring ? "ring" : "line"));
        cables.push_back(*on_plane);
        if (!options.fallback) continue;
        const auto other = std::find_if(c.begin(), c.end(), [&](const Hop& h) {
            return board.ports.at(h.from_port).plane != plane && board.ports.at(h.to_port).plane != plane;
        });
        fallbacks.push_back(other == c.end() ? std::nullopt : std::optional<Hop>(*other));
    }
    return FabricBuilder(board, order, cables, ring, options, fallbacks);
}

namespace {

FabricBuilder fabric_of(const BoardInfo& board, const ClusterTopology& t, const FabricSpec& spec, uint32_t plane) {
    const auto& meshes = t.meshes();
    const bool grid = is_2d_grid(meshes);
    const bool several = meshes.size() > 1 && std::all_of(meshes.begin(), meshes.end(), [](const Mesh& m) {
                             return m.topology == "mesh" && m.chips() >= 2;
                         });
    if ((spec.topology == "auto" || spec.topology == "mesh") && several) {
        if (plane != 0) throw Error("a fabric of several meshes runs on plane 0 only");
        return multi_mesh_fabric(board, t, spec);
    }
    // A torus fabric rides its mesh's wrap cables: a mesh has none to ride.
    if (spec.topology == "torus" && (meshes.size() != 1 || meshes.front().topology != "torus"))
        throw Error("a torus fabric needs a cluster of one torus (its wrap cables), not " +
                    (meshes.size() == 1 ? "a " + meshes.front().topology : std::to_string(meshes.size()) + " meshes"));
    if (spec.topology == "mesh" || spec.topology == "torus" || (spec.topology == "auto" && grid))
        return mesh_fabric(board, t, spec, spec.topology != "mesh", {}, plane);
    bool ring = spec.topology == "ring";
    if (spec.topology == "auto") {
        const Topology topo(t);
        const std::vector<uint32_t> order = topo.ring_order();
        ring = order.size() >= 3 && topo.stretch(order, true) == 1.0;
    }
    return fabric_over(board, t, ring, spec, plane);
}

}  // namespace

FabricBuilder cluster_fabric(const BoardInfo& board, const ClusterTopology& topology, const FabricSpec& spec,
                             const std::string& where, uint32_t plane) {
    FabricSpec sized = spec;
    constexpr uint32_t kLargest = 16384, kSmallest = 1024;
    uint32_t payload = spec.packet_bytes ? spec.packet_bytes : kLargest;
    for (;;) {
        sized.packet_bytes = payload;
        try {
            return fabric_of(board, topology, sized, plane);
        } catch (const L1Shortage& e) {
            if (!spec.packet_bytes && payload / 2 >= kSmallest) {
                payload /= 2;
                continue;
            }
            throw Error(
                where + "the fabric's slots " + std::to_string(spec.slots) + ", packet_bytes " +
                (spec.packet_bytes ? std::to_string(payload) : "(any, down to " + std::to_string(payload) + ")") +
                " and lanes " + std::to_string(spec.lanes) + " do not fit board " + board.name + ": " + e.what() +
                "; lower slots, packet_bytes or lanes");
        } catch (const Error& e) {
            throw Error(where + e.what());
        }
    }
}

std::vector<FabricBuilder> plane_fabrics(const BoardInfo& board, const ClusterTopology& topology,
                                         const FabricSpec& spec, uint32_t planes, const std::string& where,
                                         bool first_only) {
    std::vector<FabricBuilder> fabrics;
    std::string first_error;
    for (uint32_t plane = 0; plane < planes && !(first_only && !fabrics.empty()); ++plane) {
        try {
            fabrics.push_back(cluster_fabric(board, topology, spec, where, plane));
        } catch (const Error& e) {
            if (first_error.empty()) first_error = e.what();
            WEFT_INFO("fabric", "no fabric on plane %u: %s", plane, e.what());
        }
    }
    if (fabrics.empty()) throw Error(first_error);
    return fabrics;
}

std::vector<FabricBuilder> rows_and_columns(Machine& machine, bool ring, FabricSpec options) {
    const ClusterTopology t = machine.topology();
    const auto& ms = t.meshes();
    if (ms.size() != 1 || (ms[0].topology != "mesh" && ms[0].topology != "torus"))
        throw Error("a fabric per row and column needs a cluster of one mesh or torus");
    const Mesh& m = ms[0];
    const Topology topo(t);
    const BoardInfo& board = machine.board();
    // The cable of `dir` (a port facing it, plane 0) from `from` to `to`.
    auto cable = [&](uint32_t from, uint32_t to, abi::FabricCompass dir) {
        for (const Hop& h : topo.cables(from, to))
            if (board.ports.at(h.from_port).direction == dir && board.ports.at(h.from_port).plane == 0) return h;
        throw Error("no working cable " + std::string(1, abi::fabric_letter(dir)) + " joins chip " +
                    std::to_string(from) + " to chip " + std::to_string(to));
    };
    std::vector<FabricBuilder> out;
    auto add = [&](std::vector<uint32_t> order, abi::FabricCompass dir) {
        const bool closes = ring && m.topology == "torus" && order.size() >= 3;
        std::vector<Hop> cables;
        for (size_t i = 0; i < (closes ? order.size() : order.size() - 1); ++i)
            cables.push_back(cable(order[i], order[(i + 1) % order.size()], dir));
        out.emplace_back(board, std::move(order), std::move(cables), closes, options);
    };
    for (uint32_t y = 0; y < m.height; ++y) {
        std::vector<uint32_t> row;
        for (uint32_t x = 0; x < m.width; ++x) row.push_back(t.chip_at(m.id, x, y));
        add(row, abi::kFabricEast);
    }
    for (uint32_t x = 0; x < m.width; ++x) {
        std::vector<uint32_t> column;
        for (uint32_t y = 0; y < m.height; ++y) column.push_back(t.chip_at(m.id, x, y));
        add(column, abi::kFabricSouth);
    }
    return out;
}

Fabric::Fabric(Machine& cluster, FabricBuilder builder, std::vector<uint32_t> chips)
    : cluster_(cluster),
      builder_(std::move(builder)),
      chips_(std::move(chips)),
      control_(cluster.board(),
               routed_topology(chips_.empty() ? cluster.topology() : cluster.topology().among(chips_), builder_),
               routing_plane(cluster.board(), builder_), has_relays(builder_)) {}

uint32_t Fabric::index_of(uint32_t cluster_chip) const {
    if (chips_.empty()) return cluster_chip;
    for (uint32_t i = 0; i < chips_.size(); ++i)
        if (chips_[i] == cluster_chip) return i;
    throw Error("chip " + std::to_string(cluster_chip) + " is not a chip of this fabric");
}

std::unique_ptr<Fabric> Fabric::start(Machine& cluster, FabricBuilder builder, std::chrono::milliseconds timeout,
                                      std::vector<uint32_t> chips) {
    std::unique_ptr<Fabric> fabric(new Fabric(cluster, std::move(builder), std::move(chips)));
    const KernelImage& image = kernel_at(paths::firmware_dir(cluster.board().name) + "/resident/fabric_router.elf");
    const FabricBuilder& b = fabric->builder_;
    for (size_t r = 0; r < b.routers().size(); ++r) {
        const FabricRouterPlan& plan = b.routers()[r];
        auto configure = [&](ChipWriter& memory, uint32_t, Region free) {
            if (free.base != plan.l1.base + abi::kResidentControlBytes)
                throw Error(fabric->router_name(plan) + " was given L1 the builder did not place it in");
            MappedChipWriter mapped(memory, fabric->chips_);
            b.write_router(fabric->chips_.empty() ? memory : mapped, r);
            return plan.config_address;
        };
        resident::start(cluster, fabric->chip_id(plan.chip), plan.core, image, b.l1_bytes(), configure, timeout);
        fabric->started_ = r + 1;
    }
    WEFT_INFO("fabric", "%zu routers started; deadlock avoidance: %s", fabric->builder().routers().size(),
              deadlock_avoidance(fabric->builder().spec().flags).c_str());
    return fabric;
}

namespace {

// The channel of `status` whose head packet has not moved the longest, and for how long (us).
std::pair<uint32_t, uint32_t> most_stuck(const abi::FabricRouterConfig& c, const abi::FabricRouterStatus& status) {
    std::pair<uint32_t, uint32_t> worst{0, 0};
    for (uint32_t i = 0; i < c.num_senders && i < abi::kFabricMaxSenders; ++i)
        if (status.senders[i].stuck_us > worst.second) worst = {i, status.senders[i].stuck_us};
    for (uint32_t v = 0; v < c.num_vcs && v < abi::kFabricMaxVcs; ++v)
        if (status.receivers[v].stuck_us > worst.second) worst = {c.num_senders + v, status.receivers[v].stuck_us};
    return worst;
}

}  // namespace

std::string Fabric::router_name(const FabricRouterPlan& p) const {
    return "the fabric router on chip " + std::to_string(chip_id(p.chip)) + " port " +
           port_name(cluster_.board(), p.port) + " (core " + std::to_string(p.core) + ")";
}

// "the cable chip 0.E <-> chip 1.W": the router's cable, as its chip's port state names the far end.
std::string Fabric::cable_name(const FabricRouterPlan& p, const abi::PortState& port) const {
    const BoardInfo& board = cluster_.board();
    return "the cable chip " + std::to_string(chip_id(p.chip)) + "." + port_name(board, p.port) + " <-> chip " +
           std::to_string(port.peer_chip) + "." + port_name(board, port.peer_port);
}

std::string Fabric::fault() const {
    for (size_t r = 0; r < started_; ++r) {
        const FabricRouterPlan& plan = builder_.routers()[r];
        const uint32_t chip = chip_id(plan.chip);
        if (!cluster_.alive(chip)) return router_name(plan) + " is gone: chip " + std::to_string(chip) + " died";
        const abi::HartStatus& hart = cluster_.control(chip).hart[plan.core];
        if (resident_name(cluster_, chip, plan.core).empty() || hart.state != abi::kHartRunning)
            return router_name(plan) + " is not running" +
                   (hart.state == abi::kHartFault ? ": " + cluster_.describe_fault(chip, plan.core) : "");
        const abi::PortState& port = cluster_.control(chip).port[plan.port];
        if (port.state == abi::kLinkUp || !plan.config.timeout_us || settling(plan)) continue;
        abi::FabricRouterStatus status;
        cluster_.read(chip, plan.config.status, &status, sizeof status);
        const auto [channel, us] = most_stuck(plan.config, status);
        if (us < plan.config.timeout_us) continue;
        char held[32];
        snprintf(held, sizeof held, "%.1f s", us / 1e6);
        return cable_name(plan, port) + " is down: " + router_name(plan) +
               " has held the head packet of its " + fabric_channel_name(plan.config, channel) + " for " + held;
    }
    return "";
}

// Whether `plan` is one of the two routers a move round their dead cable
// holds on purpose until the fabric settles (settle has its own deadline).
bool Fabric::settling(const FabricRouterPlan& plan) const {
    if (moving_.phase != PendingMove::kCrossing) return false;
    if (plan.chip == moving_.chip && plan.port == moving_.port) return true;
    return plan.peer_chip == moving_.chip &&
           cluster_.control(chip_id(plan.chip)).port[plan.port].peer_port == moving_.port;
}

// Rings a router (in the fabric's chip numbers) that may sleep: the control
// plane's commands are written into its status, which rings nothing.
std::function<void(uint32_t chip, uint32_t core)> Fabric::wake_router() {
    return [this](uint32_t chip, uint32_t core) { cluster_.ring_core(chip_id(chip), core); };
}

// A fabric over some chips is rerouted in its own numbers: its control plane
// holds the cables among them, and reads and writes go to the chips they stand for.
void Fabric::in_own_numbers(const std::function<void(Machine&)>& act) {
    if (chips_.empty()) return act(cluster_);
    MappedMachine mapped(cluster_, chips_, control_.topology());
    act(mapped);
}

std::string Fabric::tend() {
    in_own_numbers([this](Machine& machine) {
        if (settle(machine)) return;
        // A return between meshes holds the lanes too: a move waits for it.
        const bool holding =
            std::any_of(returning_.begin(), returning_.end(), [](const auto& r) { return r.second.back.holding; });
        if (!holding) reroute_dead_cables(machine);
        if (moving_.phase == PendingMove::kNone) rejoin_returned_cables(machine);
    });
    check_dropped();
    return fault();
}

void Fabric::finish_move() {
    in_own_numbers([this](Machine& machine) {
        while (settle(machine)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
}

// One step of a move under way; true while it goes on. One that has not
// settled in kSettleWait (a socket's reader that stopped reading keeps a
// packet that crossed from landing) goes round now, its order unkept.
bool Fabric::settle(Machine& machine) {
    constexpr std::chrono::seconds kSettleWait(5);
    if (moving_.phase == PendingMove::kNone) return false;
    if (!settle_move(machine, builder_, moving_, wake_router())) {
        WEFT_INFO("fabric", "the move round chip %u port %u settled: its lanes go on", chip_id(moving_.chip),
                  moving_.port);
        return false;
    }
    if (std::chrono::steady_clock::now() - moving_since_ < kSettleWait) return true;
    WEFT_INFO("fabric",
              "the move round chip %u port %u did not settle in %lld s: its routers go round now, "
              "and a lane's packets may land out of order",
              chip_id(moving_.chip), moving_.port, static_cast<long long>(kSettleWait.count()));
    end_move(machine, builder_, moving_, wake_router());
    return false;
}

// Starts the move round the first dead cable not yet decided; the next
// waits for it to end.
void Fabric::reroute_dead_cables(Machine& machine) {
    for (size_t r = 0; r < started_ && moving_.phase == PendingMove::kNone; ++r) {
        const FabricRouterPlan& plan = builder_.routers()[r];
        const uint32_t chip = chip_id(plan.chip);
        // A router with a fallback relay moves onto it by itself, and the
        // control plane only notes it; a relay's cable is noted too (its
        // router's cable, lost after it, gets tables round it).
        if (rerouted_.count({plan.chip, plan.port}) || !cluster_.alive(chip) ||
            cluster_.control(chip).port[plan.port].state == abi::kLinkUp)
            continue;
        const RerouteDecision d =
            reroute_live(machine, builder_, control_, plan.chip, plan.port, moving_, wake_router());
        moving_since_ = std::chrono::steady_clock::now();
        const abi::PortState& port = cluster_.control(chip).port[plan.port];
        rerouted_.insert({plan.chip, plan.port});  // decided once: fault() reports what was not rerouted
        rerouted_.insert({index_of(port.peer_chip), port.peer_port});
        const std::string cable = cable_name(plan, port);
        WEFT_INFO("fabric", "%s is down under the fabric: %s%s", cable.c_str(),
                  d.kind == RerouteDecision::kNewTables || d.kind == RerouteDecision::kFallback ? "" : "not rerouted: ",
                  d.why.c_str());
        // No route round it at all: say so now, not once its packets have
        // waited out their timeout; the cause is known, so no hang report.
        if (d.kind == RerouteDecision::kCutOff || d.kind == RerouteDecision::kRefused)
            throw Error(cable + " is down and the fabric cannot route round it: " + d.why);
    }
}

// Each router on its fallback relay whose cable is up at both ends again
// goes back onto it with its peer, whether or not a wait saw the cable go
// (a short pull between two looks). A router told already is rung: it hears
// no ring when its cable returns, and may have lost it again since.
void Fabric::rejoin_returned_cables(Machine& machine) {
    for (size_t r = 0; r < started_; ++r) {
        const FabricRouterPlan& plan = builder_.routers()[r];
        const uint32_t chip = chip_id(plan.chip);
        if (plan.relay_for >= 0 || !cluster_.alive(chip) || kept_round_.count(r)) continue;
        uint32_t state = 0, command = 0;
        cluster_.read(chip, plan.config.status + offsetof(abi::FabricRouterStatus, state), &state, sizeof state);
        cluster_.read(chip, plan.config.status + offsetof(abi::FabricRouterStatus, command), &command, sizeof command);
        const abi::PortState& port = cluster_.control(chip).port[plan.port];
        if (port.state != abi::kLinkUp || cluster_.control(port.peer_chip).port[port.peer_port].state != abi::kLinkUp) {
            if (auto back = returning_.find(r); back != returning_.end()) {
                // gone again while its routers paused: back to the detours
                resume_detours(machine, builder_, plan.chip, plan.port, back->second.back, wake_router());
                returning_.erase(back);
            }
            continue;
        }
        if (command == abi::kFabricReroute || returning_.count(r)) {
            // One return per cable: while a return between meshes holds the
            // lanes, both its routers still go round (commanded kFabricReroute).
            const size_t peer = size_t(&peer_router(builder_, plan) - builder_.routers().data());
            if (!returning_.count(r) && returning_.count(peer)) continue;
            return_from_tables(machine, r);
            continue;
        }
        if (state != abi::kFabricRouterRerouted || !plan.config.fallback[0].slots) continue;
        if (command == abi::kFabricRejoin) {
            cluster_.ring_core(chip, plan.core);
            continue;
        }
        const std::string cable = cable_name(plan, port);
        const std::string why = rejoin_live(machine, builder_, control_, plan.chip, plan.port, wake_router());
        if (!why.empty()) {
            WEFT_INFO("fabric", "%s is back, but not under this fabric: %s", cable.c_str(), why.c_str());
            continue;
        }
        WEFT_INFO("fabric", "%s is back under the fabric: its routers leave their fallbacks for it", cable.c_str());
        rerouted_.erase({plan.chip, plan.port});
        rerouted_.erase({index_of(port.peer_chip), port.peer_port});
    }
}

// One step of the return of router r's cable, which the control plane
// routed round by tables: its routers pause until what they sent round is
// delivered, then take the cable again (return_from_detours). A drain that
// does not come within kReturnWait (traffic round other dead cables keeps
// the escape VC busy) resumes the detours until the next fabric.
void Fabric::return_from_tables(Machine& machine, size_t r) {
    constexpr std::chrono::seconds kReturnWait(5);
    const FabricRouterPlan& plan = builder_.routers()[r];
    const abi::PortState& port = cluster_.control(chip_id(plan.chip)).port[plan.port];
    const std::string cable = cable_name(plan, port);
    const auto wake = wake_router();
    Returning& back = returning_.try_emplace(r, Returning{std::chrono::steady_clock::now(), {}}).first->second;
    switch (return_from_detours(machine, builder_, control_, plan.chip, plan.port, back.back, wake)) {
        case ReturnStep::kPaused:
            WEFT_INFO("fabric", "%s is back: its routers pause until what they sent round it arrives", cable.c_str());
            return;
        case ReturnStep::kWaiting:
            if (std::chrono::steady_clock::now() - back.since < kReturnWait) return;
            resume_detours(machine, builder_, plan.chip, plan.port, back.back, wake);
            WEFT_INFO("fabric", "%s is back, but the detours round it did not drain: they stay until the next fabric",
                      cable.c_str());
            break;
        case ReturnStep::kRejoined:
            WEFT_INFO("fabric", "%s is back under the fabric: its routers leave their detours for it", cable.c_str());
            rerouted_.erase({plan.chip, plan.port});
            rerouted_.erase({index_of(port.peer_chip), port.peer_port});
            returning_.erase(r);
            return;
        case ReturnStep::kRefused:
            WEFT_INFO("fabric", "%s is back, but its detours stay until the next fabric: taking it again %s",
                      cable.c_str(), back.back.why.c_str());
            break;
    }
    returning_.erase(r);
    kept_round_.insert(r);
    kept_round_.insert(size_t(&peer_router(builder_, plan) - builder_.routers().data()));
}

// A packet a router dropped (no route on or round a dead cable, a
// corrupt header, its TTL spent) never arrives, so the op cannot complete:
// say so now, not at its deadline. The cause is known: no hang report.
void Fabric::check_dropped() const {
    for (size_t r = 0; r < started_; ++r) {
        const FabricRouterPlan& plan = builder_.routers()[r];
        const uint32_t chip = chip_id(plan.chip);
        if (!cluster_.alive(chip)) continue;
        uint32_t dropped = 0;
        cluster_.read(chip, plan.config.status + offsetof(abi::FabricRouterStatus, dropped), &dropped, sizeof dropped);
        if (dropped)
            throw Error(router_name(plan) + " dropped " + std::to_string(dropped) +
                        " packet(s) it could not pass on (weft status names each: routing_error, "
                        "dropped_packet), so the op cannot complete");
    }
}

std::string Fabric::stop(std::chrono::milliseconds timeout) {
    std::string forced;
    for (; started_ > 0; --started_) {
        const FabricRouterPlan& plan = builder_.routers()[started_ - 1];
        const uint32_t chip = chip_id(plan.chip);
        if (resident_name(cluster_, chip, plan.core).empty()) continue;  // stopped by someone else
        const std::string how = resident::stop(cluster_, chip, plan.core, timeout);
        if (!how.empty()) forced += (forced.empty() ? "" : "\n") + how;
    }
    return forced;
}

Fabric::~Fabric() {
    try {
        if (const std::string forced = stop(); !forced.empty())
            fprintf(stderr, "weft: stopping the fabric: %s\n", forced.c_str());
    } catch (const std::exception& e) {
        fprintf(stderr, "weft: stopping the fabric: %s\n", e.what());
    }
}

}  // namespace weft::transport
