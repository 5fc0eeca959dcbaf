#include "transport/fabric/live_reroute.h"

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
    const uint32_t command = abi::kFabricReroute;  // after the counts: the router reads them when it sees it
    m.write(p.chip, status + offsetof(abi::FabricRouterStatus, command), &command, sizeof command);
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

// With an escape class the dead cable's two routers take the new tables as
// their detour tables: inside a mesh every other route stays as it was, so
// no new route mixes with the old ones. A cable between meshes changes every
// mesh's exits, and (as on a torus) every router's chip tables change too.
void write_tables(Machine& m, const FabricBuilder& fabric, const std::vector<abi::FabricRouteTable>& next,
                  const TableMove& move, const FabricRouterPlan& a, const FabricRouterPlan& b) {
    if (fabric.spec().flags & abi::kFabricEscapeVc)
        for (const FabricRouterPlan* end : {&a, &b})
            write_detour_table(m, *end, next[fabric.position(end->chip)], fabric.meshes().size() > 1);
    if (!move.everywhere) return;
    for (const FabricRouterPlan& p : fabric.routers())
        if (p.config.route_table)
            m.write(p.chip, p.config.route_table, &next[fabric.position(p.chip)], sizeof(abi::FabricRouteTable));
}

}  // namespace

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

RerouteDecision reroute_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                             uint32_t port, const std::function<void(uint32_t chip, uint32_t core)>& wake) {
    const FabricRouterPlan* a = router_on(fabric, chip, port);
    if (!a || fabric.dims() != 2) {
        RerouteDecision d;
        d.why = "the running fabric has no 2D router on chip " + std::to_string(chip) + " port " + std::to_string(port);
        return d;
    }
    const int b_index = fabric.router_index(a->peer_chip, compass_direction(static_cast<uint32_t>(a->direction) ^ 2));
    if (b_index < 0) throw Error("the fabric's router on chip " + std::to_string(chip) + " has no peer router");
    const FabricRouterPlan& b = fabric.routers()[size_t(b_index)];
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
    const TableMove move{[&](uint32_t c) -> const abi::FabricRouteTable& { return next[fabric.position(c)]; }, chip,
                         static_cast<uint32_t>(a->direction), b.chip, moves_every_table(fabric, chip, b.chip)};
    std::vector<EarlierDetour> earlier;
    if (fabric.spec().flags & abi::kFabricEscapeVc) earlier = earlier_detours(machine, fabric, *a, b);
    std::string unsafe;
    try {
        const DependencyVerdict v = check_table_move(fabric, move, earlier);
        for (const std::string& c : v.cycle) unsafe += (unsafe.empty() ? "could deadlock: " : " -> ") + c;
    } catch (const Error& e) {
        unsafe = std::string("could lose packets: ") + e.what();
    }
    if (!unsafe.empty()) {
        d.kind = RerouteDecision::kRefused;
        d.why = "moving the running fabric's traffic onto tables without it " + unsafe +
                "; the next fabric is planned without it";
        return d;
    }
    write_tables(machine, fabric, next, move, *a, b);
    const auto at_a = filled(machine, *a), at_b = filled(machine, b);
    command_reroute(machine, *a, at_b, at_a);
    command_reroute(machine, b, at_a, at_b);
    if (wake) wake(a->chip, a->core), wake(b.chip, b.core);
    return d;
}

}  // namespace weft::transport
