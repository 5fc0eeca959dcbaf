#include "transport/fabric/fabric_dependencies.h"

#include <utility>

#include "common/error.h"
#include "common/names.h"
#include "fabric/route.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {
namespace {

// Walks packets through a fabric's tables by the routers' own decisions,
// joining each channel a packet holds to the next it may wait for. With a
// move, the walk covers every mix of old and new routes a packet on its way
// may take: its source and each mesh entry may use either table (old ones
// before new ones: the tables change once), and where it meets the dead cable
// its chip's new table sends it on (route_round).
class Walker {
public:
    Walker(const FabricBuilder& f, const TableMove* move)
        : f_(f), move_(move), next_(size_t(f.order().back() + 1) * 8, 0) {}

    void walk(uint32_t from, uint32_t to);
    std::vector<uint32_t> find_cycle() const {
        return transport::find_cycle(next_, [&](uint32_t c) { return across(c); });
    }

private:
    // The router of `chip` facing `dir`, or null.
    const FabricRouterPlan* router(uint32_t chip, uint32_t dir) const {
        const int r = f_.router_index(chip, compass_direction(dir));
        return r < 0 ? nullptr : &f_.routers()[size_t(r)];
    }
    uint32_t across(uint32_t channel) const { return router(channel / 8, channel / 2 % 4)->peer_chip; }
    bool dead(uint32_t chip, uint32_t dir) const {
        return move_ &&
               ((chip == move_->chip && dir == move_->dir) || (chip == move_->peer_chip && dir == (move_->dir ^ 2)));
    }
    // `moved`: it took a route from the new tables already, so it meets no old one again
    // (the tables change once: a router that routed it by the new ones has no old ones left).
    void go(abi::FabricPacketHeader h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool moved);
    std::string pair() const { return "the packet from " + chip_name(from_) + " to " + chip_name(to_); }

    const FabricBuilder& f_;
    const TableMove* move_;
    std::vector<uint8_t> next_;
    uint32_t from_ = 0, to_ = 0;
};

void Walker::walk(uint32_t from, uint32_t to) {
    from_ = from, to_ = to;
    abi::FabricPacketHeader h = abi::fabric_unicast_write(f_.node(from), f_.node(to), 0, 0, 0, 0);
    for (int table = 0; table < (move_ ? 2 : 1); ++table) {
        const abi::FabricRouteEntry e =
            abi::fabric_route_entry(table ? move_->next(from) : f_.table(from), h.src.mesh, h.dst);
        if (e.hops == 0) continue;  // a pair with no route exchanges no traffic (a chip taken out)
        h.hops = e.hops;
        h.route = e.route;
        go(h, from, e.first, 0, UINT32_MAX, table == 1);
    }
}

// From `chip`, out of its router facing `dir` on `vc`, holding `held`.
void Walker::go(abi::FabricPacketHeader h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool moved) {
    const uint32_t flags = f_.spec().flags;
    const bool classes = flags & abi::kFabricMeshClasses;
    if (dead(chip, dir)) {  // its router gives it a new route by the new table (route_round)
        const abi::FabricRouteEntry e = abi::fabric_route_entry(move_->next(chip), f_.node(chip).mesh, h.dst);
        if (e.hops == 0 || e.first == dir) return;  // dropped there, holding nothing more
        h.hops = e.hops;
        h.route = e.route;
        return go(h, chip, e.first, classes ? vc : 0, held, true);
    }
    const FabricRouterPlan* out = router(chip, dir);
    if (!out)
        throw Error(pair() + " needs " + chip_name(chip) + "'s cable " + abi::fabric_letter(dir) +
                    ", which the fabric does not have");
    const uint32_t channel = channel_id(chip, dir, vc);
    if (held != UINT32_MAX) next_[held] |= uint8_t(1u << (channel % 8));
    if (out->config.dateline && !(flags & abi::kFabricNoDateline)) vc = 1;
    const uint32_t at = out->peer_chip, compass = dir ^ 2;  // the receiving router's
    for (int table = moved ? 1 : 0; table < (move_ && classes ? 2 : 1); ++table) {
        abi::FabricPacketHeader next = h;
        const abi::FabricRouteTable* t = !classes ? nullptr : table ? &move_->next(at) : &f_.table(at);
        const fabric::Decision d = fabric::on_receive(next, fabric::Hop{2, compass, f_.node(at), t});
        if (d.expired) throw Error(pair() + " circles until its TTL runs out: the tables have a loop");
        if (d.lost) {
            if (move_) continue;  // dropped and reported in the move; not a dependency
            throw Error(pair() + " reaches " + chip_name(at) + ", whose tables do not route it on");
        }
        if (!d.forward) {
            if (at != to_) throw Error(pair() + " is delivered at " + chip_name(at));
            continue;
        }
        go(next, at, d.next, fabric::vc_after_turn(vc, d.next, compass, flags), channel, moved || table == 1);
    }
}

DependencyVerdict verdict_of(const FabricBuilder& fabric, const TableMove* move) {
    Walker walker(fabric, move);
    for (uint32_t from : fabric.order())
        for (uint32_t to : fabric.order())
            if (from != to) walker.walk(from, to);
    DependencyVerdict v;
    for (uint32_t id : walker.find_cycle()) v.cycle.push_back(channel_name(id));
    v.acyclic = v.cycle.empty();
    return v;
}

}  // namespace

DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric) { return verdict_of(fabric, nullptr); }

DependencyVerdict check_table_move(const FabricBuilder& fabric, const TableMove& move) {
    return verdict_of(fabric, &move);
}

}  // namespace weft::transport
