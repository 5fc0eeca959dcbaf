#include "transport/fabric/fabric_dependencies.h"

#include <utility>

#include "common/error.h"
#include "common/names.h"
#include "fabric/route.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {
namespace {

class Walker {
public:
    explicit Walker(const FabricBuilder& f) : f_(f), next_(size_t(f.order().back() + 1) * 8, 0) {}

    void walk(uint32_t from, uint32_t to);
    std::vector<uint32_t> find_cycle() const;

private:
    // The router of `chip` facing `dir`, or null.
    const FabricRouterPlan* router(uint32_t chip, uint32_t dir) const {
        const int r = f_.router_index(chip, compass_direction(dir));
        return r < 0 ? nullptr : &f_.routers()[size_t(r)];
    }
    uint32_t across(uint32_t channel) const { return router(channel / 8, channel / 2 % 4)->peer_chip; }

    const FabricBuilder& f_;
    std::vector<uint8_t> next_;
};

void Walker::walk(uint32_t from, uint32_t to) {
    const uint32_t flags = f_.spec().flags;
    const auto pair = [&] { return "the packet from " + chip_name(from) + " to " + chip_name(to); };
    abi::FabricPacketHeader h = abi::fabric_unicast_write(f_.node(from), f_.node(to), 0, 0, 0, 0);
    const abi::FabricRouteEntry e = abi::fabric_route_entry(f_.table(from), h.src.mesh, h.dst);
    if (e.hops == 0) return;  // a pair with no route exchanges no traffic (a chip taken out)
    h.hops = e.hops;
    h.route = e.route;
    uint32_t chip = from, dir = e.first, vc = 0, held = UINT32_MAX;
    for (;;) {
        const FabricRouterPlan* out = router(chip, dir);
        if (!out) throw Error(pair() + " needs " + chip_name(chip) + "'s cable " + abi::fabric_letter(dir) + ", which the fabric does not have");
        const uint32_t channel = channel_id(chip, dir, vc);
        if (held != UINT32_MAX) next_[held] |= uint8_t(1u << (channel % 8));
        held = channel;
        if (out->config.dateline && !(flags & abi::kFabricNoDateline)) vc = 1;
        chip = out->peer_chip;
        const uint32_t compass = dir ^ 2;  // the receiving router's
        const fabric::Hop at{2, compass, f_.node(chip), (flags & abi::kFabricMeshClasses) ? &f_.table(chip) : nullptr};
        const fabric::Decision d = fabric::on_receive(h, at);
        if (d.expired) throw Error(pair() + " circles until its TTL runs out: the tables have a loop");
        if (d.lost) throw Error(pair() + " reaches " + chip_name(chip) + ", whose tables do not route it on");
        if (!d.forward) break;
        vc = fabric::vc_after_turn(vc, d.next, compass, flags);
        dir = d.next;
    }
    if (chip != to) throw Error(pair() + " is delivered at " + chip_name(chip));
}

std::vector<uint32_t> Walker::find_cycle() const {
    return transport::find_cycle(next_, [&](uint32_t c) { return across(c); });
}

}  // namespace

DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric) {
    Walker walker(fabric);
    for (uint32_t from : fabric.order())
        for (uint32_t to : fabric.order())
            if (from != to) walker.walk(from, to);
    DependencyVerdict v;
    for (uint32_t id : walker.find_cycle()) v.cycle.push_back(channel_name(id));
    v.acyclic = v.cycle.empty();
    return v;
}

}  // namespace weft::transport
