#include "transport/fabric/live_reroute.h"

#include <array>
#include <cstddef>

#include "common/error.h"

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
    return {w.filled[0], w.filled[1]};
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

}  // namespace

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
    for (uint32_t c : fabric.order()) {
        const Mesh& m = control.topology().mesh_of(c);
        const abi::FabricRouteTable t = fabric.table_with(c, [&](uint32_t from, uint32_t to) {
            return control.l0_route(m, from - m.first_chip, to - m.first_chip);
        });
        for (const FabricRouterPlan& p : fabric.routers())
            if (p.chip == c && p.config.route_table) machine.write(c, p.config.route_table, &t, sizeof t);
    }
    const auto at_a = filled(machine, *a), at_b = filled(machine, b);
    command_reroute(machine, *a, at_b, at_a);
    command_reroute(machine, b, at_a, at_b);
    if (wake) wake(a->chip, a->core), wake(b.chip, b.core);
    return d;
}

}  // namespace weft::transport
