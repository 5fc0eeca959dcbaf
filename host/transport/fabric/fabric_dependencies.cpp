#include "transport/fabric/fabric_dependencies.h"

#include <algorithm>
#include <unordered_map>
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
    if (abi::fabric_crosses_dateline(out->config.dateline, flags)) vc = 1;
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

// The walk without a move, each route once. A packet's way depends on its
// destination chip only where its route ends (hops 1: fabric::on_receive),
// and between meshes only on its destination's mesh until it enters that
// mesh. So the walk goes route by route: from each chip, a walk to each chip
// of its mesh and one per distinct L1 entry; where a packet bound for
// another mesh lands at the end of a route, the rest is walked once per
// (channel it came by, destination mesh), and only in the destination's
// mesh once per destination chip. The graph is the one every pair's walk
// makes (each walk it leaves out would repeat one it made, edge for edge),
// from about chips x (chips of a mesh + meshes) routes, not chips squared.
class RouteWalker {
public:
    explicit RouteWalker(const FabricBuilder& f) : f_(f), next_(size_t(f.order().back() + 1) * 8, 0) {
        for (size_t m = 0; m < f.meshes().size(); ++m) {
            if (f.meshes()[m].id >= mesh_index_.size()) mesh_index_.resize(f.meshes()[m].id + 1, UINT32_MAX);
            mesh_index_[f.meshes()[m].id] = uint32_t(m);
        }
    }

    void walk_from(uint32_t from);
    std::vector<uint32_t> find_cycle() const {
        return transport::find_cycle(next_, [&](uint32_t c) { return across(c); });
    }

private:
    // Where a route's last cable lands: the chip, its receiving router's
    // compass, the VC the packet is on there and the channel it holds.
    struct Landing {
        uint32_t chip, compass, vc, channel;
    };
    static constexpr uint32_t kNone = UINT32_MAX;
    static constexpr uint32_t kWalking = UINT32_MAX;  // a landing's walk not finished yet

    const FabricRouterPlan* router(uint32_t chip, uint32_t dir) const {
        const int r = f_.router_index(chip, compass_direction(dir));
        return r < 0 ? nullptr : &f_.routers()[size_t(r)];
    }
    uint32_t across(uint32_t channel) const { return router(channel / 8, channel / 2 % 4)->peer_chip; }
    fabric::Hop hop_at(uint32_t chip, uint32_t compass) const {
        const bool classes = f_.spec().flags & abi::kFabricMeshClasses;
        return fabric::Hop{2, compass, f_.node(chip), classes ? &f_.table(chip) : nullptr};
    }
    const Mesh& mesh(uint16_t id) const { return f_.meshes()[mesh_index_.at(id)]; }
    std::string pair(const abi::FabricPacketHeader& h, bool any_chip) const {
        return "the packet from " + chip_name(mesh(h.src.mesh).first_chip + h.src.chip) + " to " +
               (any_chip ? "mesh " + std::to_string(h.dst.mesh) : chip_name(mesh(h.dst.mesh).first_chip + h.dst.chip));
    }
    Landing follow(abi::FabricPacketHeader& h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool any_chip);
    uint32_t land(abi::FabricPacketHeader h, const Landing& l);
    uint32_t land_bound_elsewhere(const abi::FabricPacketHeader& h, const Landing& l);

    const FabricBuilder& f_;
    std::vector<uint8_t> next_;
    std::vector<uint32_t> mesh_index_;  // by mesh id
    // Per (channel, destination mesh) a packet bound for another mesh landed
    // on at a route's end: the TTL its way on uses at most, or kWalking.
    std::unordered_map<uint64_t, uint32_t> landed_;
};

// Crosses the cables of h's route from `chip`'s router facing `dir`, on `vc`,
// holding `held` (kNone at its source), joining each channel to the next;
// h is updated as each router updates it, up to its last cable.
RouteWalker::Landing RouteWalker::follow(abi::FabricPacketHeader& h, uint32_t chip, uint32_t dir, uint32_t vc,
                                         uint32_t held, bool any_chip) {
    const uint32_t flags = f_.spec().flags;
    for (;;) {
        const FabricRouterPlan* out = router(chip, dir);
        if (!out)
            throw Error(pair(h, any_chip) + " needs " + chip_name(chip) + "'s cable " + abi::fabric_letter(dir) +
                        ", which the fabric does not have");
        const uint32_t channel = channel_id(chip, dir, vc);
        if (held != kNone) next_[held] |= uint8_t(1u << (channel % 8));
        if (abi::fabric_crosses_dateline(out->config.dateline, flags)) vc = 1;
        const uint32_t at = out->peer_chip, compass = dir ^ 2;
        if (h.hops <= 1) return {at, compass, vc, channel};
        const fabric::Decision d = fabric::on_receive(h, hop_at(at, compass));  // on along its route
        if (d.expired) throw Error(pair(h, any_chip) + " circles until its TTL runs out: the tables have a loop");
        dir = d.next, vc = fabric::vc_after_turn(vc, d.next, compass, flags), held = channel, chip = at;
    }
}

// The rest of the way of a packet bound for one chip, from where a route
// landed it; returns the TTL it uses.
uint32_t RouteWalker::land(abi::FabricPacketHeader h, const Landing& l) {
    const uint8_t ttl = h.ttl;
    const fabric::Decision d = fabric::on_receive(h, hop_at(l.chip, l.compass));
    if (d.expired) throw Error(pair(h, false) + " circles until its TTL runs out: the tables have a loop");
    if (d.lost) throw Error(pair(h, false) + " reaches " + chip_name(l.chip) + ", whose tables do not route it on");
    if (!d.forward) {
        if (!(h.dst.mesh == f_.node(l.chip).mesh && h.dst.chip == f_.node(l.chip).chip))
            throw Error(pair(h, false) + " is delivered at " + chip_name(l.chip));
        return ttl - h.ttl;
    }
    const uint32_t flags = f_.spec().flags;
    const Landing next =
        follow(h, l.chip, d.next, fabric::vc_after_turn(l.vc, d.next, l.compass, flags), l.channel, false);
    const uint8_t before = h.ttl;
    return ttl - before + land(h, next);
}

// The same for a packet bound for any chip of another mesh than its own
// (h.dst.chip stands for them all), once per channel and destination mesh.
uint32_t RouteWalker::land_bound_elsewhere(const abi::FabricPacketHeader& h, const Landing& l) {
    const uint64_t key = uint64_t(l.channel) << 16 | h.dst.mesh;
    const auto [it, fresh] = landed_.emplace(key, kWalking);
    if (!fresh) {
        if (it->second == kWalking || it->second > h.ttl)
            throw Error(pair(h, true) + " circles until its TTL runs out: the tables have a loop");
        return it->second;
    }
    uint32_t used = 0;
    if (f_.node(l.chip).mesh == h.dst.mesh) {  // in its destination's mesh: each chip's own way
        abi::FabricPacketHeader one = h;
        for (uint32_t c = 0; c < mesh(h.dst.mesh).chips(); ++c) {
            one.dst.chip = static_cast<uint16_t>(c);
            used = std::max(used, land(one, l));
        }
    } else {
        abi::FabricPacketHeader on = h;
        const fabric::Decision d = fabric::on_receive(on, hop_at(l.chip, l.compass));
        if (d.expired) throw Error(pair(h, true) + " circles until its TTL runs out: the tables have a loop");
        if (d.lost || !d.forward)
            throw Error(pair(h, true) + " reaches " + chip_name(l.chip) + ", whose tables do not route it on");
        const Landing next = follow(on, l.chip, d.next, fabric::vc_after_turn(l.vc, d.next, l.compass, f_.spec().flags),
                                    l.channel, true);
        used = h.ttl - on.ttl + land_bound_elsewhere(on, next);
    }
    landed_[key] = used;  // not `it`: the walk may have grown the map
    return used;
}

void RouteWalker::walk_from(uint32_t from) {
    const abi::FabricNodeId self = f_.node(from);
    const abi::FabricRouteTable& table = f_.table(from);
    // Its own mesh: a walk per chip.
    for (uint32_t c = 0; c < mesh(self.mesh).chips(); ++c) {
        abi::FabricPacketHeader h = abi::fabric_unicast_write(self, {self.mesh, uint16_t(c)}, 0, 0, 0, 0);
        const abi::FabricRouteEntry e = abi::fabric_route_entry(table, self.mesh, h.dst);
        if (c == self.chip || e.hops == 0) continue;  // a pair with no route exchanges no traffic
        h.hops = e.hops, h.route = e.route;
        land(h, follow(h, from, e.first, 0, kNone, false));
    }
    // Other meshes: their L1 entries, each distinct one's route walked once.
    std::vector<std::pair<abi::FabricRouteEntry, std::vector<uint16_t>>> entries;
    for (const Mesh& m : f_.meshes()) {
        if (m.id == self.mesh) continue;
        const abi::FabricRouteEntry e = abi::fabric_route_entry(table, self.mesh, {uint16_t(m.id), 0});
        if (e.hops == 0) continue;
        auto same = std::find_if(entries.begin(), entries.end(), [&](const auto& x) {
            return x.first.hops == e.hops && x.first.first == e.first && x.first.route == e.route;
        });
        if (same == entries.end()) same = entries.insert(entries.end(), {e, {}});
        same->second.push_back(uint16_t(m.id));
    }
    for (const auto& [e, meshes] : entries) {
        abi::FabricPacketHeader h = abi::fabric_unicast_write(self, {meshes[0], 0}, 0, 0, 0, 0);
        h.hops = e.hops, h.route = e.route;
        const Landing l = follow(h, from, e.first, 0, kNone, true);
        for (uint16_t m : meshes) {
            h.dst.mesh = m;
            if (land_bound_elsewhere(h, l) > h.ttl)
                throw Error(pair(h, true) + " circles until its TTL runs out: the tables have a loop");
        }
    }
}

DependencyVerdict verdict_of(const std::vector<uint32_t>& cycle) {
    DependencyVerdict v;
    for (uint32_t id : cycle) v.cycle.push_back(channel_name(id));
    v.acyclic = v.cycle.empty();
    return v;
}

}  // namespace

DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric) {
    RouteWalker walker(fabric);
    for (uint32_t from : fabric.order()) walker.walk_from(from);
    return verdict_of(walker.find_cycle());
}

// A move's mixes of old and new tables are walked pair by pair (Walker):
// live reroutes run on fabrics of a size that allows it.
DependencyVerdict check_table_move(const FabricBuilder& fabric, const TableMove& move) {
    Walker walker(fabric, &move);
    for (uint32_t from : fabric.order())
        for (uint32_t to : fabric.order())
            if (from != to) walker.walk(from, to);
    return verdict_of(walker.find_cycle());
}

}  // namespace weft::transport
