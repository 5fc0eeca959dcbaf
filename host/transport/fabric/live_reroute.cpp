#include "transport/fabric/live_reroute.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/names.h"
#include "transport/fabric/fabric_dependencies.h"

namespace weft::transport {
namespace {

const FabricRouterPlan* router_on(const FabricBuilder& fabric, uint32_t chip, uint32_t port) {
    for (const FabricRouterPlan& p : fabric.routers())
        if (p.chip == chip && p.port == port) return &p;
    return nullptr;
}

// The host's command to router p (FabricRouterStatus::command).
void command(Machine& m, const FabricRouterPlan& p, uint32_t c) {
    m.write(p.chip, p.config.status + offsetof(abi::FabricRouterStatus, command), &c, sizeof c);
}

// The same command to a cable's two routers, each rung: one may sleep.
void tell_both(Machine& m, const FabricRouterPlan& a, const FabricRouterPlan& b, uint32_t c,
               const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    for (const FabricRouterPlan* end : {&a, &b}) {
        command(m, *end, c);
        if (wake) wake(end->chip, end->core);
    }
}

abi::FabricRouterStatus status_of(Machine& m, const FabricRouterPlan& p) {
    abi::FabricRouterStatus s;
    m.read(p.chip, p.config.status, &s, sizeof s);
    return s;
}

// Packets the router has taken in off its cable, per VC (its link words).
std::array<uint32_t, abi::kFabricMaxVcs> filled(Machine& m, const FabricRouterPlan& p) {
    abi::FabricLinkWords w{};
    m.read(p.chip, p.config.link_words, &w, sizeof w);
    std::array<uint32_t, abi::kFabricMaxVcs> took{};
    for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) took[v] = w.filled[v];
    return took;
}

void command_reroute(Machine& m, const FabricRouterPlan& p, const std::array<uint32_t, abi::kFabricMaxVcs>& took,
                     const std::array<uint32_t, abi::kFabricMaxVcs>& freeze) {
    const uint64_t status = p.config.status;
    m.write(p.chip, status + offsetof(abi::FabricRouterStatus, peer_took), took.data(), sizeof(uint32_t) * took.size());
    m.write(p.chip, status + offsetof(abi::FabricRouterStatus, freeze_at), freeze.data(),
            sizeof(uint32_t) * freeze.size());
    command(m, p, abi::kFabricReroute);  // after the counts: the router reads them when it sees it
}

// Every router's worker lanes wait (hold != 0) or go again, each router rung:
// one may sleep, and a settle look needs each to poll.
void hold_lanes(Machine& m, const FabricBuilder& fabric, uint32_t hold,
                const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    for (const FabricRouterPlan& p : fabric.routers()) {
        if (!m.alive(p.chip)) continue;
        m.write(p.chip, p.config.status + offsetof(abi::FabricRouterStatus, hold_lanes), &hold, sizeof hold);
        if (wake) wake(p.chip, p.core);
    }
}

// The dead cable's two routers hold what they have for it (their cable is
// down) and every worker lane waits, until the packets that crossed it have
// landed (settle_move).
void start_move(Machine& m, const FabricBuilder& fabric, const FabricRouterPlan& a, PendingMove& move,
                const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    move.phase = PendingMove::kCrossing;
    move.chip = a.chip, move.port = a.port;
    move.watch.reset();
    hold_lanes(m, fabric, 1, wake);
}

// The cable's two routers settle what crossed it (counts read at both ends)
// and send the rest, and every later packet for it, round.
void send_round(Machine& m, const FabricRouterPlan& a, const FabricRouterPlan& b,
                const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const auto at_a = filled(m, a), at_b = filled(m, b);
    command_reroute(m, a, at_b, at_a);
    command_reroute(m, b, at_a, at_b);
    if (wake) wake(a.chip, a.core), wake(b.chip, b.core);
}

// The same for the cable `move` is round.
void send_round(Machine& m, const FabricBuilder& fabric, const PendingMove& move,
                const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan& a = *router_on(fabric, move.chip, move.port);
    send_round(m, a, peer_router(fabric, a), wake);
}

// The routers of `fabric` an earlier move routed round their cables (all
// but a and b), with the detour tables they hold: read back, since what they
// route by is what the check must cover. A router given none holds its chip's
// own tables there on one mesh, and nothing (0 meshes) between meshes
// (FabricBuilder::write_router), where a move writes the L1 entries too.
std::vector<EarlierDetour> earlier_detours(Machine& m, const FabricBuilder& fabric, const FabricRouterPlan& a,
                                           const FabricRouterPlan& b) {
    std::vector<EarlierDetour> earlier;
    const bool many = fabric.meshes().size() > 1;
    for (const FabricRouterPlan& p : fabric.routers()) {
        if (!p.config.detour_table || p.relay_for >= 0 || &p == &a || &p == &b) continue;
        EarlierDetour e;
        e.chip = p.chip, e.dir = static_cast<uint32_t>(p.direction);
        m.read(p.chip, p.config.detour_table, &e.table, abi::kFabricDetourTableBytes);
        e.keeps = status_of(m, p).detours_keep_vc != 0;
        if (e.table.chips == 0) continue;  // never written (a model rank's copy of another's router)
        if (many) {
            if (e.table.meshes == 0) continue;
            m.read(p.chip, p.config.detour_table + abi::kFabricDetourTableBytes, &e.table.to_mesh,
                   sizeof e.table.to_mesh);
            earlier.push_back(e);
        } else if (std::memcmp(&e.table.to, &fabric.table(p.chip).to, sizeof e.table.to) != 0) {
            earlier.push_back(e);
        }
    }
    return earlier;
}

using TableOf = std::function<const abi::FabricRouteTable&(uint32_t chip)>;

// `tables` (one per chip, by position) as a chip's lookup.
TableOf by_position(const FabricBuilder& fabric, const std::vector<abi::FabricRouteTable>& tables) {
    return [&fabric, &tables](uint32_t c) -> const abi::FabricRouteTable& { return tables[fabric.position(c)]; };
}

// Every living chip's tables, as `table_of` gives them, into the router that holds them.
void write_chip_tables(Machine& m, const FabricBuilder& fabric, const TableOf& table_of) {
    for (const FabricRouterPlan& p : fabric.routers())
        if (fabric.holds_table(p) && m.alive(p.chip))
            m.write(p.chip, p.config.route_table, &table_of(p.chip), sizeof(abi::FabricRouteTable));
}

// With an escape class the dead cable's two routers take the new tables as
// their detour tables: inside a mesh every other route stays as it was, so
// no new route mixes with the old ones. A cable between meshes changes every
// mesh's exits, so every router's chip tables change too (its exits only,
// exits_by_held_routes; without an escape class, everything).
// `detours`: what the dead cable's routers take; `main`: every chip's own
// tables, where the move rewrites them.
void write_tables(Machine& m, const FabricBuilder& fabric, const std::vector<abi::FabricRouteTable>& detours,
                  const std::vector<abi::FabricRouteTable>& main, const TableMove& move, const FabricRouterPlan& a,
                  const FabricRouterPlan& b) {
    if (fabric.spec().flags & abi::kFabricEscapeVc)
        for (const FabricRouterPlan* end : {&a, &b})
            write_detour_table(m, *end, detours[fabric.position(end->chip)], fabric.meshes().size() > 1);
    if (move.everywhere) write_chip_tables(m, fabric, by_position(fabric, main));
}

// The tables each chip of `fabric` routes by now (by position), read back
// from its routers: an earlier move between meshes rewrote every chip's, so
// the builder's may be stale. A chip whose routers hold none keeps the
// builder's, and so does one whose table reads empty: a model's rank holds
// only its own chips' routers, and another rank's never had one written.
std::vector<abi::FabricRouteTable> held_tables(Machine& m, const FabricBuilder& fabric) {
    std::vector<abi::FabricRouteTable> held;
    std::vector<bool> read(fabric.order().size());
    held.reserve(fabric.order().size());
    for (uint32_t c : fabric.order()) held.push_back(fabric.table(c));
    for (const FabricRouterPlan& p : fabric.routers()) {
        const size_t at = fabric.position(p.chip);
        if (!p.config.route_table || read[at]) continue;  // a relay holds none
        abi::FabricRouteTable t;
        m.read(p.chip, p.config.route_table, &t, sizeof t);
        if (t.chips) held[at] = t;
        read[at] = true;
    }
    return held;
}

// Every chip's tables after a move between meshes: inside its mesh the
// routes it holds now (where a dead cable crosses one, that cable's router
// detours it, as before), and toward the other meshes the exits the control
// plane now picks, reached along those same routes. The control plane's own
// tables route round every dead cable inside a mesh too, the other
// dimension first: on VC 0 beside the routes still held, those turns close
// cycles, so they stay the detours'.
std::vector<abi::FabricRouteTable> exits_by_held_routes(const FabricBuilder& fabric, const ControlPlane& control,
                                                        const std::vector<abi::FabricRouteTable>& now) {
    const RouteOf held = [&](uint32_t from, uint32_t to) -> std::string {
        if (from == to) return "";
        const abi::FabricRouteEntry& e =
            now[fabric.position(from)].to[to - control.topology().mesh_of(from).first_chip];
        return e.hops ? route_letters(e) : std::string(kNoRoute);
    };
    const ExitOf exits = [&](uint32_t from, uint32_t to_mesh) { return control.exit_route(from, to_mesh, held); };
    std::vector<abi::FabricRouteTable> tables;
    tables.reserve(fabric.order().size());
    for (uint32_t c : fabric.order()) tables.push_back(fabric.table_with(c, held, exits));
    return tables;
}

// Why moving the running fabric by `move` could deadlock or lose packets, or "" if it cannot.
std::string unsafe_move(const FabricBuilder& fabric, const TableMove& move, const std::vector<EarlierDetour>& earlier) {
    try {
        std::string unsafe;
        const DependencyVerdict v = check_table_move(fabric, move, earlier);
        for (const std::string& c : v.cycle) unsafe += (unsafe.empty() ? "could deadlock: " : " -> ") + c;
        return unsafe;
    } catch (const Error& e) {
        return std::string("could lose packets: ") + e.what();
    }
}

// `earlier` with the move's new exits where theirs differ (their routes
// inside their meshes stay); empty if none do. An earlier detour holds the
// exits of its own move, which after a move between meshes may lead back
// the way the new exits came: a loop.
std::vector<EarlierDetour> give_new_exits(const FabricBuilder& fabric, const std::vector<abi::FabricRouteTable>& next,
                                          std::vector<EarlierDetour> earlier) {
    bool any = false;
    for (EarlierDetour& e : earlier) {
        const abi::FabricRouteTable& exits = next[fabric.position(e.chip)];
        if (std::memcmp(&e.table.to_mesh, &exits.to_mesh, sizeof exits.to_mesh) == 0) continue;
        e.rewritten = e.table;
        e.rewritten->meshes = exits.meshes;
        std::memcpy(&e.rewritten->to_mesh, &exits.to_mesh, sizeof exits.to_mesh);
        any = true;
    }
    if (!any) earlier.clear();
    return earlier;
}

void write_new_exits(Machine& m, const FabricBuilder& fabric, const std::vector<EarlierDetour>& earlier) {
    for (const EarlierDetour& e : earlier) {
        if (!e.rewritten) continue;
        const int r = fabric.router_index(e.chip, compass_direction(e.dir));
        write_detour_table(m, fabric.routers()[size_t(r)], *e.rewritten, true);
    }
}

// The first way of making `move` that cannot deadlock or lose packets,
// set in move.keep_escape and, if the earlier detours take new exits, left
// in `with_new_exits` (else that is emptied); or why the first way tried
// could. Between meshes the detours keep the escape VC into the next meshes
// or fall back to VC 1 there, and the earlier detours keep their exits or
// take the new ones: some moves are safe one way only.
std::string choose_way(const FabricBuilder& fabric, TableMove& move, const std::vector<EarlierDetour>& earlier,
                       std::vector<EarlierDetour>& with_new_exits) {
    const bool escape = fabric.spec().flags & abi::kFabricEscapeVc, many = fabric.meshes().size() > 1;
    std::string first;
    for (const bool new_exits : {false, true}) {
        if (new_exits && with_new_exits.empty()) break;
        for (const bool keep : {true, false}) {
            if (keep && !(escape && many)) continue;
            move.keep_escape = keep;
            const std::string why = unsafe_move(fabric, move, new_exits ? with_new_exits : earlier);
            if (why.empty()) {
                if (!new_exits) with_new_exits.clear();
                return "";
            }
            if (first.empty()) first = why;
        }
    }
    return first;
}

// Whether the control plane already sent router p's traffic round its cable.
bool sent_round(Machine& m, const FabricRouterPlan& p) {
    uint32_t command = 0;
    m.read(p.chip, p.config.status + offsetof(abi::FabricRouterStatus, command), &command, sizeof command);
    return command == abi::kFabricReroute;
}

// Whether a's cable is the ring's wrap cable (from its last chip to its first).
bool wrap_cable(const FabricBuilder& fabric, const FabricRouterPlan& a) {
    const size_t pa = fabric.position(a.chip), pb = fabric.position(a.peer_chip), last = fabric.order().size() - 1;
    return (pa == last && pb == 0) || (pa == 0 && pb == last);
}

// The chips of `order` from position `from` up to `to`.
std::string chips_in(const std::vector<uint32_t>& order, size_t from, size_t to) {
    return chips_named(std::vector<uint32_t>(order.begin() + from, order.begin() + to));
}

// 1D: a ring's two routers of the dead cable settle what crossed it, as
// in 2D, and send the rest, and every later packet for it, back the other
// way round (Router::send_back, on the escape VC). A line is cut in two.
RerouteDecision reroute_ring(Machine& m, const FabricBuilder& fabric, const FabricRouterPlan& a, PendingMove& move,
                             const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    RerouteDecision d;
    d.chip = a.chip, d.port = a.port;
    const FabricRouterPlan& b = peer_router(fabric, a);
    const std::vector<uint32_t>& order = fabric.order();
    const size_t past = std::max(fabric.position(a.chip), fabric.position(b.chip));  // the first chip past it
    if (!fabric.ring()) {
        d.kind = RerouteDecision::kCutOff;
        d.why = "the line is cut: " + chips_in(order, 0, past) + " cannot reach " + chips_in(order, past, order.size());
        return d;
    }
    // A second dead cable cuts the ring in two: what one sends back the other
    // would send back again.
    const size_t here = wrap_cable(fabric, a) ? order.size() - 1 : past - 1;  // cable k joins order[k], order[k + 1]
    for (const FabricRouterPlan& p : fabric.routers()) {
        if (p.relay_for >= 0 || p.direction != FabricDirection::kForward || !sent_round(m, p)) continue;
        const size_t k = fabric.position(p.chip);
        if (k == here) continue;
        const size_t lo = std::min(k, here) + 1, hi = std::max(k, here) + 1;
        d.kind = RerouteDecision::kCutOff;
        d.why = "the ring is cut in two: " + chips_in(order, lo, hi) + " cannot reach the others";
        return d;
    }
    if (!(fabric.spec().flags & abi::kFabricRingEscape)) {
        d.kind = RerouteDecision::kRefused;
        d.why = "a ring under bubble flow control has no VC to send packets back round on (flow_control: dateline "
                "has); the next fabric is planned without it";
        return d;
    }
    start_move(m, fabric, a, move, wake);
    d.kind = RerouteDecision::kNewTables;
    d.why = "its packets go back the other way round the ring";
    return d;
}

}  // namespace

const FabricRouterPlan& peer_router(const FabricBuilder& fabric, const FabricRouterPlan& a) {
    const FabricDirection back =
        fabric.dims() == 1
            ? (a.direction == FabricDirection::kForward ? FabricDirection::kBackward : FabricDirection::kForward)
            : compass_direction(static_cast<uint32_t>(a.direction) ^ 2);
    const int b = fabric.router_index(a.peer_chip, back);
    if (b < 0) throw Error("the fabric's router on chip " + std::to_string(a.chip) + " has no peer router");
    return fabric.routers()[size_t(b)];
}

std::vector<abi::FabricRouteTable> control_plane_tables(const FabricBuilder& fabric, const ControlPlane& control) {
    const RouteOf routes = [&](uint32_t from, uint32_t to) {
        const Mesh& m = control.topology().mesh_of(from);
        return control.l0_route(m, from - m.first_chip, to - m.first_chip);
    };
    ExitOf exits;
    if (fabric.meshes().size() > 1)
        exits = [&](uint32_t from, uint32_t to_mesh) { return control.exit_route(from, to_mesh); };
    std::vector<abi::FabricRouteTable> tables;
    for (uint32_t c : fabric.order()) tables.push_back(fabric.table_with(c, routes, exits));
    return tables;
}

// A fallback relay's cable died. It carries its chip's router's traffic only
// while that router's own cable is down: the control plane notes it (the
// router's own cable, lost later, is routed round by tables, not onto it),
// and a relay that was carrying traffic leaves it no cable.
RerouteDecision relay_cable_down(const FabricBuilder& fabric, ControlPlane& control, const FabricRouterPlan& relay) {
    RerouteDecision d = control.cable_down(relay.chip, relay.port);
    const FabricRouterPlan& router = fabric.routers()[size_t(relay.relay_for)];
    const std::string whose = "chip " + std::to_string(router.chip) + " port " + std::to_string(router.port);
    d.kind = control.is_down(router.chip, router.port) ? RerouteDecision::kRefused : RerouteDecision::kNone;
    const std::string refused = "the fallback relay's cable for " + whose +
                                " died too: its traffic has no cable left; the next fabric is planned without both";
    d.why = d.kind == RerouteDecision::kRefused ? refused
                                                : "an idle fallback relay's cable: " + whose +
                                                      " keeps its own, and if it loses that too, tables round it";
    return d;
}

std::string rejoin_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                        uint32_t port, const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan* a = router_on(fabric, chip, port);
    if (!a || a->relay_for >= 0) return "the running fabric has no router of its own on it";
    const FabricRouterPlan& b = peer_router(fabric, *a);
    for (const FabricRouterPlan* end : {a, &b}) {
        // A router hears no ring when its cable returns: told before, it would sleep on.
        if (machine.control(end->chip).port[end->port].state != abi::kLinkUp) return "it is still down";
        if (!end->config.fallback[0].slots || sent_round(machine, *end))
            return "its routers route round it by tables: they return by return_from_detours";
    }
    control.cable_up(chip, port);
    tell_both(machine, *a, b, abi::kFabricRejoin, wake);
    return "";
}

namespace {

// The escape class's VC: the detours' in 2D, the packets sent back round a ring in 1D.
uint32_t escape_vc(const FabricBuilder& fabric) {
    return fabric.dims() == 2 ? abi::fabric_escape_vc(fabric.spec().flags) : abi::kFabricMaxVcs - 1;
}

}  // namespace

bool escape_drained(Machine& machine, const FabricBuilder& fabric, uint64_t& seen) {
    const uint32_t esc = escape_vc(fabric);
    uint64_t sent = 0, received = 0;
    bool idle = true;
    for (const FabricRouterPlan& p : fabric.routers()) {
        if (p.relay_for >= 0 || esc >= p.config.num_vcs) continue;
        const abi::FabricRouterStatus s = status_of(machine, p);
        sent += s.vc_packets_sent[esc];
        received += s.receivers[esc].done;
        idle &= s.receivers[esc].done == s.receivers[esc].freed;  // a delivered packet's slot read: its write done
        for (uint32_t i = 0; i < p.config.num_senders; ++i) {
            if (p.config.senders[i].vc != esc || !p.config.senders[i].slots) continue;
            uint32_t written = 0;
            machine.read(p.chip, p.config.senders[i].written, &written, sizeof written);
            idle &= written == s.senders[i].done;
        }
    }
    const uint64_t look = (sent << 32 | (received & 0xffffffff)) + 1;  // never 0, the caller's start
    const bool drained = idle && sent == received && look == seen;
    seen = idle && sent == received ? look : 0;
    return drained;
}

namespace {

// A return between meshes ends, either way: the lanes it held go again.
void release_lanes(Machine& m, const FabricBuilder& fabric, PendingReturn& back,
                   const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    if (back.holding) hold_lanes(m, fabric, 0, wake);
    back.holding = false;
}

}  // namespace

void resume_detours(Machine& machine, const FabricBuilder& fabric, uint32_t chip, uint32_t port, PendingReturn& back,
                    const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan* a = router_on(fabric, chip, port);
    if (!a) return;
    tell_both(machine, *a, peer_router(fabric, *a), abi::kFabricReroute, wake);  // its path stays round: it may send
    release_lanes(machine, fabric, back, wake);
}

namespace {

// Whether a's cable is the only one of the fabric routed round (by tables
// or onto a relay): then the tables the fabric was built with, which count
// on every other cable, are the ones to go back to.
bool only_cable_round(Machine& m, const FabricBuilder& fabric, const FabricRouterPlan& a, const FabricRouterPlan& b) {
    for (const FabricRouterPlan& p : fabric.routers()) {
        if (&p == &a || &p == &b || !m.alive(p.chip)) continue;
        if (sent_round(m, p) || status_of(m, p).state == abi::kFabricRouterRerouted) return false;
    }
    return true;
}

// The cable of a and b, between meshes, returns while other cables are
// routed round by tables: every chip takes the exits the control plane
// picks with it up and the others still dead, reached along the routes it
// holds inside its mesh, and the others' detours take those exits too. The
// fabric has settled before they are written (nothing of the old exits on
// its way), so the check walks the tables after alone: as a move round the
// first other cable whose old and new tables are the same. Fills back.after
// and back.exits; returns why it could deadlock, or "".
std::string plan_return(Machine& m, const FabricBuilder& fabric, const ControlPlane& control, const FabricRouterPlan& a,
                        const FabricRouterPlan& b, PendingReturn& back) {
    const char* built = "needs the tables the fabric was built with, which count on a cable still routed round";
    if (!(fabric.spec().flags & abi::kFabricEscapeVc) || (fabric.spec().flags & abi::kFabricLongRoutes)) return built;
    for (const FabricRouterPlan& p : fabric.routers())
        if (&p != &a && &p != &b && m.alive(p.chip) && !sent_round(m, p) &&
            status_of(m, p).state == abi::kFabricRouterRerouted)
            return "beside a cable whose routers are on their fallback relays is left to the next fabric";
    std::vector<EarlierDetour> round = earlier_detours(m, fabric, a, b);
    if (round.empty()) return built;
    ControlPlane after = control;
    after.cable_up(a.chip, a.port);
    std::vector<abi::FabricRouteTable> round_all;  // the detours' exits route round every dead cable, as a move's
    try {
        round_all = control_plane_tables(fabric, after);
    } catch (const Error& e) {
        return std::string("needs cables the running fabric does not use: ") + e.what();
    }
    back.after = exits_by_held_routes(fabric, after, held_tables(m, fabric));
    back.exits = give_new_exits(fabric, round_all, round);
    const std::vector<EarlierDetour>& others = back.exits.empty() ? round : back.exits;
    const EarlierDetour& first = others.front();
    const FabricRouterPlan& d = fabric.routers()[size_t(fabric.router_index(first.chip, compass_direction(first.dir)))];
    const FabricRouterPlan& e = peer_router(fabric, d);
    std::vector<EarlierDetour> rest;
    const abi::FabricRouteTable* detour_at[2] = {nullptr, nullptr};
    for (const EarlierDetour& x : others) {
        const bool at_d = x.chip == d.chip && x.dir == uint32_t(d.direction);
        const bool at_e = x.chip == e.chip && x.dir == uint32_t(e.direction);
        if (at_d || at_e) detour_at[at_d ? 0 : 1] = x.rewritten ? &*x.rewritten : &x.table;
        else
            rest.push_back(x);
    }
    if (!detour_at[0] || !detour_at[1]) return built;  // a cable routed round at one end only: none is
    const TableOf tables = by_position(fabric, back.after);
    TableMove move{tables, d.chip, static_cast<uint32_t>(d.direction), e.chip, true, tables};
    move.detours = [&](uint32_t c) -> const abi::FabricRouteTable& { return *detour_at[c == d.chip ? 0 : 1]; };
    move.keep_escape = first.keeps;
    const std::string unsafe = unsafe_move(fabric, move, rest);
    if (!unsafe.empty()) back.after.clear(), back.exits.clear();
    return unsafe;
}

}  // namespace

ReturnStep return_from_detours(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                               uint32_t port, PendingReturn& back,
                               const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan* a = router_on(fabric, chip, port);
    if (!a || a->relay_for >= 0) return ReturnStep::kRefused;
    const FabricRouterPlan& b = peer_router(fabric, *a);
    if (!back.started) {
        if (!sent_round(machine, *a)) return ReturnStep::kRefused;
        back = PendingReturn{};
        back.started = true;
        back.holding = fabric.dims() == 2 && moves_every_table(fabric, a->chip, b.chip);
        if (back.holding && !only_cable_round(machine, fabric, *a, b)) {
            back.why = plan_return(machine, fabric, control, *a, b, back);
            if (!back.why.empty()) return ReturnStep::kRefused;
        }
        // Holding every lane, the two go on sending round until the fabric
        // has settled: paused, they held what the other cables' detours
        // sent their way, and the detours never drained.
        if (back.holding) hold_lanes(machine, fabric, 1, wake);
        else
            tell_both(machine, *a, b, abi::kFabricPause, wake);
        return ReturnStep::kPaused;
    }
    // Paused (or every lane held, and the fabric settling), the two send
    // nothing more, so one read of each serves: what they sent round is in
    // another router's channel only once their NoC has written it there
    // (every slot they sent from given back), and their packets sent on the
    // cable per VC say where each one's sending stands.
    const FabricRouterPlan* ends[2] = {a, &b};
    const abi::FabricRouterStatus at[2] = {status_of(machine, *a), status_of(machine, b)};
    for (size_t e = 0; e < 2; ++e)
        for (uint32_t i = 0; i < ends[e]->config.num_senders; ++i)
            if (at[e].senders[i].done != at[e].senders[i].freed) return ReturnStep::kWaiting;
    if (!escape_drained(machine, fabric, back.seen)) return ReturnStep::kWaiting;
    if (back.holding) {
        const bool settled = back.watch.look(machine, fabric);
        if (back.watch.rings_due()) hold_lanes(machine, fabric, 1, wake);  // each router polls before the next look
        if (!settled) return ReturnStep::kWaiting;
        if (back.after.empty()) {
            write_chip_tables(machine, fabric,
                              [&fabric](uint32_t c) -> const abi::FabricRouteTable& { return fabric.table(c); });
        } else {
            write_chip_tables(machine, fabric, by_position(fabric, back.after));
            write_new_exits(machine, fabric, back.exits);
        }
    }
    for (size_t e = 0; e < 2; ++e) {  // each receives from where the other's sending stands
        std::array<uint32_t, abi::kFabricMaxVcs> sent{};
        for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) sent[v] = at[1 - e].vc_packets_sent[v];
        machine.write(ends[e]->chip, ends[e]->config.status + offsetof(abi::FabricRouterStatus, freeze_at), sent.data(),
                      sizeof(uint32_t) * sent.size());
    }
    tell_both(machine, *a, b, abi::kFabricRejoin, wake);
    control.cable_up(chip, port);
    release_lanes(machine, fabric, back, wake);
    return ReturnStep::kRejoined;
}

RerouteDecision reroute_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                             uint32_t port, PendingMove& pending,
                             const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan* a = router_on(fabric, chip, port);
    if (!a) {
        RerouteDecision d;
        d.why = "the running fabric has no router on chip " + std::to_string(chip) + " port " + std::to_string(port);
        return d;
    }
    if (a->relay_for >= 0) return relay_cable_down(fabric, control, *a);
    // A router with a relay moves onto it by itself while the relay's cable
    // is up (kFallback: nothing to write); in 2D the control plane's
    // decision below says so, a ring asks it here.
    if (fabric.dims() == 1) {
        if (a->config.fallback[0].slots)
            if (RerouteDecision d = control.cable_down(chip, port); d.kind == RerouteDecision::kFallback) return d;
        return reroute_ring(machine, fabric, *a, pending, wake);
    }
    const FabricRouterPlan& b = peer_router(fabric, *a);
    RerouteDecision d = control.cable_down(chip, port);
    if (d.kind != RerouteDecision::kNewTables) return d;
    std::vector<abi::FabricRouteTable> next;
    try {
        next = control_plane_tables(fabric, control);
    } catch (const Error& e) {  // a fabric planned narrower than the cluster (a torus run as a mesh)
        d.kind = RerouteDecision::kRefused;
        d.why = std::string("the control plane's tables without it need cables the running fabric does not use: ") +
                e.what();
        return d;
    }
    const std::vector<abi::FabricRouteTable> now = held_tables(machine, fabric);
    const bool escape = fabric.spec().flags & abi::kFabricEscapeVc;
    const bool everywhere = moves_every_table(fabric, chip, b.chip);
    // Between meshes with an escape class: the chips keep their routes
    // inside their meshes and take new exits; the detours route round
    // every dead cable. (A route longer than a table entry is held only in
    // part: those fabrics take the control plane's tables everywhere.)
    const bool keep_inside = everywhere && escape && fabric.meshes().size() > 1 &&
                             !(fabric.spec().flags & abi::kFabricLongRoutes);
    std::vector<abi::FabricRouteTable> kept;
    if (keep_inside) kept = exits_by_held_routes(fabric, control, now);
    const std::vector<abi::FabricRouteTable>& main = keep_inside ? kept : next;
    TableMove move{by_position(fabric, main), chip, static_cast<uint32_t>(a->direction), b.chip, everywhere,
                   by_position(fabric, now)};
    if (keep_inside) move.detours = by_position(fabric, next);
    // Earlier detours keep the tables they were given, or between meshes
    // may take the new exits too (give_new_exits); the check walks what
    // each holds, and the packets they sent already carry their routes.
    std::vector<EarlierDetour> earlier;
    if (escape) earlier = earlier_detours(machine, fabric, *a, b);
    std::vector<EarlierDetour> with_new_exits;
    if (keep_inside) with_new_exits = give_new_exits(fabric, next, earlier);
    const std::string unsafe = choose_way(fabric, move, earlier, with_new_exits);
    if (!unsafe.empty()) {
        d.kind = RerouteDecision::kRefused;
        d.why = "moving the running fabric's traffic onto tables without it " + unsafe +
                "; the next fabric is planned without it";
        return d;
    }
    for (const FabricRouterPlan* end : {a, &b}) {
        const uint32_t keep = move.keep_escape;
        machine.write(end->chip, end->config.status + offsetof(abi::FabricRouterStatus, detours_keep_vc), &keep,
                      sizeof keep);
    }
    write_tables(machine, fabric, next, main, move, *a, b);
    if (!with_new_exits.empty()) write_new_exits(machine, fabric, with_new_exits);
    start_move(machine, fabric, *a, pending, wake);
    return d;
}

bool settle_move(Machine& machine, const FabricBuilder& fabric, PendingMove& move,
                 const std::function<void(uint32_t chip, uint32_t core)>& wake, const AllRanks& all) {
    if (move.phase == PendingMove::kNone) return false;
    const bool settled = move.watch.look(machine, fabric, all);
    if (settled && move.phase == PendingMove::kGoingRound) {
        end_move(machine, fabric, move, wake);
        return false;
    }
    if (settled) {
        send_round(machine, fabric, move, wake);
        move.phase = PendingMove::kGoingRound;
        move.watch.reset();
    }
    if (move.watch.rings_due()) hold_lanes(machine, fabric, 1, wake);  // each router polls before the next look
    return true;
}

void end_move(Machine& machine, const FabricBuilder& fabric, PendingMove& move,
              const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    if (move.phase == PendingMove::kCrossing) send_round(machine, fabric, move, wake);
    if (move.phase != PendingMove::kNone) hold_lanes(machine, fabric, 0, wake);
    move.phase = PendingMove::kNone;
}

}  // namespace weft::transport
