#include "transport/fabric/fabric_dependencies.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "common/error.h"
#include "common/names.h"
#include "fabric/route.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {
namespace {

// Walks packets through a fabric's tables by the routers' own decisions,
// joining each channel a packet holds to the next it may wait for; the graph
// has a cycle only if the fabric can deadlock.
//
// It goes route by route, not pair by pair. A packet's way depends on its
// destination chip only where its route ends (hops 1: fabric::on_receive),
// and between meshes only on its destination's mesh until it enters that
// mesh. So from each chip it walks to each chip of its mesh and once per
// distinct L1 entry; where a packet bound for another mesh lands at the end
// of a route, the rest is walked once per (channel it came by, destination
// mesh), and only in the destination's mesh once per destination chip. The
// graph is the one every pair's walk makes (each walk it leaves out would
// repeat one it made, edge for edge), from about chips x (chips of a mesh +
// meshes) routes, not chips squared.
//
// With a move (a running fabric changing tables round a dead cable) the walk
// covers every mix of old and new routes a packet on its way may take: its
// source and each route's end may use either table, old before new (the
// tables change once: a router that routed it by the new ones has no old ones
// left), and where it meets the dead cable its chip's new table sends it on
// (the router's route_round). Whether a packet took a new route already is
// part of what its way depends on, so it is part of each memo's key.
class RouteWalker {
public:
    RouteWalker(const FabricBuilder& f, const TableMove* move, const std::vector<EarlierDetour>* earlier = nullptr)
        : f_(f), move_(move), earlier_(earlier), next_(size_t(f.order().back() + 1) * kChipChannels, 0) {
        for (size_t m = 0; m < f.meshes().size(); ++m) {
            if (f.meshes()[m].id >= mesh_index_.size()) mesh_index_.resize(f.meshes()[m].id + 1, UINT32_MAX);
            mesh_index_[f.meshes()[m].id] = uint32_t(m);
        }
    }

    void walk_from(uint32_t from);
    // One cycle's channels named, or none; under bubble flow control (one
    // torus) the rings of a cycle of turns.
    std::vector<std::string> find_cycle() const {
        const auto next_chip = [&](uint32_t c) { return across(c); };
        if (f_.spec().flags & abi::kFabricBubble) return find_ring_cycle(f_.meshes()[0], next_, next_chip);
        std::vector<std::string> names;
        for (uint32_t id : transport::find_cycle(next_, next_chip)) names.push_back(channel_name(id));
        return names;
    }
    const std::vector<ChannelBits>& graph() const { return next_; }

private:
    // Where a route's last cable lands: the chip, its receiving router's
    // compass, the VC the packet is on there and the channel it holds;
    // `moved`: it took a route from the new tables on its way. `dropped`: it
    // never lands (the dead cable's router found no new route for it).
    // `keeps`: a detour that keeps the escape VC into other meshes.
    struct Landing {
        uint32_t chip, compass, vc, channel;
        bool moved = false, dropped = false, keeps = false;
    };
    static constexpr uint32_t kNone = UINT32_MAX;
    static constexpr uint32_t kWalking = UINT32_MAX;  // a landing's walk not finished yet

    // The tables `chip` holds before the move.
    const abi::FabricRouteTable& table_now(uint32_t chip) const {
        return move_ && move_->now ? move_->now(chip) : f_.table(chip);
    }
    const FabricRouterPlan* router(uint32_t chip, uint32_t dir) const {
        const int r = f_.router_index(chip, compass_direction(dir));
        return r < 0 ? nullptr : &f_.routers()[size_t(r)];
    }
    uint32_t across(uint32_t channel) const { return router(channel_chip(channel), channel_dir(channel))->peer_chip; }
    // Routers that route a packet on by their tables where its route ends
    // short of its destination: between meshes, or past a header's hops.
    bool tables() const { return f_.spec().flags & (abi::kFabricMeshClasses | abi::kFabricLongRoutes); }
    // Whether the router on (chip, dir) is one of this move's dead cable's two.
    bool moving(uint32_t chip, uint32_t dir) const {
        return (chip == move_->chip && dir == move_->dir) || (chip == move_->peer_chip && dir == (move_->dir ^ 2));
    }
    // The earlier detour the router on (chip, dir) holds, if any.
    const EarlierDetour* earlier_at(uint32_t chip, uint32_t dir) const {
        if (earlier_)
            for (const EarlierDetour& e : *earlier_)
                if (e.chip == chip && e.dir == dir) return &e;
        return nullptr;
    }
    // The tables the router on (chip, dir) may route a packet for its cable
    // by, if the cable is dead, into `out`; how many. This move's new ones,
    // or an earlier detour's: if this move rewrites its exits, the new ones
    // and, for a packet that took no new route yet, the old (it may have
    // come by before the move; once round, it took a new route).
    size_t detours(uint32_t chip, uint32_t dir, bool moved, const abi::FabricRouteTable* out[2]) const {
        if (!move_) return 0;
        if (moving(chip, dir)) {
            out[0] = move_->detours ? &move_->detours(chip) : &move_->next(chip);
            return 1;
        }
        const EarlierDetour* e = earlier_at(chip, dir);
        if (!e) return 0;
        out[0] = e->rewritten && moved ? &*e->rewritten : &e->table;
        if (!e->rewritten || moved) return 1;
        out[1] = &*e->rewritten;
        return 2;
    }
    // Whether the packets that router sends round keep the escape VC into other meshes.
    bool detour_keeps(uint32_t chip, uint32_t dir) const {
        if (moving(chip, dir)) return move_->keep_escape;
        const EarlierDetour* e = earlier_at(chip, dir);
        return e && e->keeps;
    }
    // The tables a packet may be routed by where a route ends at a chip: the
    // old (unless it moved already) and, during a move, the new; `is_new`
    // says which. The old alone when only the dead cable's routers take new
    // ones, as detours. One mesh of short routes: none, its
    // routes end only at their destinations. At most two, kept in place: the
    // walk asks at every route's end.
    struct Choice {
        const abi::FabricRouteTable* table;
        bool is_new;
    };
    struct Choices {
        Choice at[2];
        size_t count = 0;
        const Choice* begin() const { return at; }
        const Choice* end() const { return at + count; }
    };
    Choices tables_at(uint32_t chip, bool moved) const {
        Choices c;
        if (!tables()) c.at[c.count++] = {nullptr, false};
        else if (move_ && !move_->everywhere)
            c.at[c.count++] = {&table_now(chip), false};
        else {
            if (!moved) c.at[c.count++] = {&table_now(chip), false};
            if (move_) c.at[c.count++] = {&move_->next(chip), true};
        }
        return c;
    }
    const Mesh& mesh(uint16_t id) const { return f_.meshes()[mesh_index_.at(id)]; }
    std::string pair(const abi::FabricPacketHeader& h, bool any_chip) const {
        return "the packet from " + chip_name(mesh(h.src.mesh).first_chip + h.src.chip) + " to " +
               (any_chip ? "mesh " + std::to_string(h.dst.mesh) : chip_name(mesh(h.dst.mesh).first_chip + h.dst.chip));
    }
    void walk_route(const abi::FabricPacketHeader& h, const abi::FabricRouteTable& table, uint32_t from, bool moved,
                    const std::vector<uint16_t>& meshes);
    Landing follow(abi::FabricPacketHeader& h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool any_chip,
                   bool moved, bool keeps);
    // Where a router holds two detour tables, follow walks the first and
    // leaves the second's landing (with the header as it lands) in forks_;
    // its caller goes on from each fork as from the first landing.
    struct Fork {
        abi::FabricPacketHeader h;
        Landing l;
    };
    void fork(const abi::FabricPacketHeader& h, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held, bool any_chip,
              const abi::FabricRouteTable& table);
    std::vector<Fork> take_forks() { return std::exchange(forks_, {}); }
    uint32_t land(const abi::FabricPacketHeader& h, const Landing& l);
    uint32_t land_bound_elsewhere(const abi::FabricPacketHeader& h, const Landing& l);

    const FabricBuilder& f_;
    const TableMove* move_;
    const std::vector<EarlierDetour>* earlier_;
    std::vector<ChannelBits> next_;
    std::vector<uint32_t> mesh_index_;  // by mesh id
    // Per (channel, destination mesh, keeps, moved) a packet bound for another mesh
    // landed on at a route's end: the TTL its way on uses at most, or kWalking.
    std::unordered_map<uint64_t, uint32_t> landed_;
    std::vector<Fork> forks_;
    uint32_t fork_depth_ = 0;
};

// Crosses the cables of h's route from `chip`'s router facing `dir`, on `vc`,
// holding `held` (kNone at its source), joining each channel to the next;
// h is updated as each router updates it, up to its last cable.
RouteWalker::Landing RouteWalker::follow(abi::FabricPacketHeader& h, uint32_t chip, uint32_t dir, uint32_t vc,
                                         uint32_t held, bool any_chip, bool moved, bool keeps) {
    const uint32_t flags = f_.spec().flags;
    uint32_t detours_here = 0;  // new routes given on this chip without crossing a cable
    for (;;) {
        const abi::FabricRouteTable* round[2];
        if (const size_t tables = detours(chip, dir, moved, round)) {  // a new route from its router (route_round)
            if (tables > 1) fork(h, chip, dir, vc, held, any_chip, *round[1]);
            const abi::FabricRouteEntry e = abi::fabric_route_entry(*round[0], f_.node(chip).mesh, h.dst);
            if (e.hops == 0 || e.first == dir) return {chip, 0, vc, held, true, true};  // dropped, holding nothing more
            if (++detours_here > 4)  // more new routes on one chip than it has cables: they lead into each other
                throw Error(pair(h, any_chip) + " is sent round between " + chip_name(chip) +
                            "'s dead cables: their detours have a loop");
            h.hops = e.hops, h.route = e.route, keeps = detour_keeps(chip, dir);
            dir = e.first, vc = fabric::vc_round_dead_cable(vc, f_.spec().flags), moved = true;
            continue;
        }
        const FabricRouterPlan* out = router(chip, dir);
        if (!out)
            throw Error(pair(h, any_chip) + " needs " + chip_name(chip) + "'s cable " + abi::fabric_letter(dir) +
                        ", which the fabric does not have");
        const uint32_t channel = channel_id(chip, dir, vc);
        if (held != kNone) next_[held] |= channel_bit(dir, vc);
        if (abi::fabric_crosses_dateline(out->config.dateline, flags, vc, keeps)) vc = 1;
        const uint32_t at = out->peer_chip, compass = dir ^ 2;
        detours_here = 0;
        if (h.hops <= 1) return {at, compass, vc, channel, moved, false, keeps};
        // On along its route: a table only says how the TTL counts (routes, not receptions).
        const fabric::Decision d =
            fabric::on_receive(h, fabric::Hop{2, compass, f_.node(at), tables() ? &table_now(at) : nullptr});
        if (d.expired) throw Error(pair(h, any_chip) + " circles until its TTL runs out: the tables have a loop");
        dir = d.next, vc = fabric::vc_after_turn(vc, d.next, compass, flags), held = channel, chip = at;
    }
}

void RouteWalker::fork(const abi::FabricPacketHeader& at, uint32_t chip, uint32_t dir, uint32_t vc, uint32_t held,
                       bool any_chip, const abi::FabricRouteTable& table) {
    const abi::FabricRouteEntry e = abi::fabric_route_entry(table, f_.node(chip).mesh, at.dst);
    if (e.hops == 0 || e.first == dir) return;  // dropped, as follow drops it
    if (++fork_depth_ > 8)
        throw Error(pair(at, any_chip) + " is sent round dead cables by their detours without end: they have a loop");
    abi::FabricPacketHeader h = at;
    h.hops = e.hops, h.route = e.route;
    const Landing l = follow(h, chip, e.first, fabric::vc_round_dead_cable(vc, f_.spec().flags), held, any_chip, true,
                             detour_keeps(chip, dir));
    --fork_depth_;
    forks_.push_back({h, l});
}

// The rest of the way of a packet bound for one chip, from where a route
// landed it; returns the TTL it uses.
uint32_t RouteWalker::land(const abi::FabricPacketHeader& at_landing, const Landing& l) {
    if (l.dropped) return 0;
    uint32_t used = 0;
    for (const auto& [table, is_new] : tables_at(l.chip, l.moved)) {
        abi::FabricPacketHeader h = at_landing;
        const fabric::Decision d = fabric::on_receive(h, fabric::Hop{2, l.compass, f_.node(l.chip), table});
        if (d.expired) throw Error(pair(h, false) + " circles until its TTL runs out: the tables have a loop");
        if (d.lost) {
            if (move_) continue;  // dropped and reported in the move; not a dependency
            throw Error(pair(h, false) + " reaches " + chip_name(l.chip) + ", whose tables do not route it on");
        }
        if (!d.forward) {
            if (!(h.dst.mesh == f_.node(l.chip).mesh && h.dst.chip == f_.node(l.chip).chip))
                throw Error(pair(h, false) + " is delivered at " + chip_name(l.chip));
            continue;
        }
        const uint32_t vc = fabric::vc_after_turn(l.vc, d.next, l.compass, f_.spec().flags);
        const Landing next = follow(h, l.chip, d.next, vc, l.channel, false, l.moved || is_new, l.keeps);
        std::vector<Fork> forks = take_forks();
        used = std::max(used, at_landing.ttl - h.ttl + land(h, next));
        for (const Fork& f : forks) used = std::max(used, at_landing.ttl - f.h.ttl + land(f.h, f.l));
    }
    return used;
}

// The same for a packet bound for any chip of another mesh than its own
// (h.dst.chip stands for them all), once per channel, destination mesh and
// whether it moved.
uint32_t RouteWalker::land_bound_elsewhere(const abi::FabricPacketHeader& h, const Landing& l) {
    if (l.dropped) return 0;
    const uint64_t key = uint64_t(l.channel) << 18 | uint64_t(h.dst.mesh) << 2 | uint64_t(l.keeps) << 1 | l.moved;
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
        for (const auto& [table, is_new] : tables_at(l.chip, l.moved)) {
            abi::FabricPacketHeader on = h;
            const fabric::Decision d = fabric::on_receive(on, fabric::Hop{2, l.compass, f_.node(l.chip), table});
            if (d.expired) throw Error(pair(h, true) + " circles until its TTL runs out: the tables have a loop");
            if (move_ && d.lost) continue;
            if (d.lost || !d.forward)
                throw Error(pair(h, true) + " reaches " + chip_name(l.chip) + ", whose tables do not route it on");
            const uint32_t vc = fabric::vc_after_turn(l.vc, d.next, l.compass, f_.spec().flags);
            const Landing next = follow(on, l.chip, d.next, vc, l.channel, true, l.moved || is_new, l.keeps);
            std::vector<Fork> forks = take_forks();
            used = std::max(used, h.ttl - on.ttl + land_bound_elsewhere(on, next));
            for (const Fork& f : forks) used = std::max(used, h.ttl - f.h.ttl + land_bound_elsewhere(f.h, f.l));
        }
    }
    landed_[key] = used;  // not `it`: the walk may have grown the map
    return used;
}

// The walks that start at `from` by `table` (the old one, or during a move
// the new one: `moved`): one per chip of its own mesh, one per distinct L1
// entry for the other meshes.
void RouteWalker::walk_route(const abi::FabricPacketHeader& h0, const abi::FabricRouteTable& table, uint32_t from,
                             bool moved, const std::vector<uint16_t>& meshes) {
    abi::FabricPacketHeader h = h0;
    const abi::FabricRouteEntry e = abi::fabric_route_entry(table, f_.node(from).mesh, h.dst);
    if (e.hops == 0) return;  // a pair with no route exchanges no traffic (a chip taken out)
    h.hops = e.hops, h.route = e.route;
    if (meshes.empty()) {
        const Landing l = follow(h, from, e.first, 0, kNone, false, moved, false);
        std::vector<Fork> forks = take_forks();
        land(h, l);
        for (const Fork& f : forks) land(f.h, f.l);
        return;
    }
    const Landing l = follow(h, from, e.first, 0, kNone, true, moved, false);
    std::vector<Fork> forks = take_forks();
    forks.push_back({h, l});
    for (uint16_t m : meshes)
        for (Fork& f : forks) {
            f.h.dst.mesh = m;
            if (land_bound_elsewhere(f.h, f.l) > f.h.ttl)
                throw Error(pair(f.h, true) + " circles until its TTL runs out: the tables have a loop");
        }
}

void RouteWalker::walk_from(uint32_t from) {
    const abi::FabricNodeId self = f_.node(from);
    // The new table only where it differs: a packet that starts by the same
    // route as the old table's takes, from there, a subset of the old walk's
    // ways. When only the dead cable's routers take them no packet starts by
    // the new tables.
    std::vector<std::pair<const abi::FabricRouteTable*, bool>> tables = {{&table_now(from), false}};
    if (move_ && move_->everywhere &&
        std::memcmp(&move_->next(from), &table_now(from), sizeof(abi::FabricRouteTable)) != 0)
        tables.push_back({&move_->next(from), true});
    for (const auto& [table, is_new] : tables) {
        for (uint32_t c = 0; c < mesh(self.mesh).chips(); ++c) {
            if (c == self.chip) continue;
            walk_route(abi::fabric_unicast_write(self, {self.mesh, uint16_t(c)}, 0, 0, 0, 0), *table, from, is_new, {});
        }
        // Other meshes: their L1 entries, each distinct one's route walked once.
        std::vector<std::pair<abi::FabricRouteEntry, std::vector<uint16_t>>> entries;
        for (const Mesh& m : f_.meshes()) {
            if (m.id == self.mesh) continue;
            const abi::FabricRouteEntry e = abi::fabric_route_entry(*table, self.mesh, {uint16_t(m.id), 0});
            if (e.hops == 0) continue;
            auto same = std::find_if(entries.begin(), entries.end(), [&](const auto& x) {
                return x.first.hops == e.hops && x.first.first == e.first && x.first.route == e.route;
            });
            if (same == entries.end()) same = entries.insert(entries.end(), {e, {}});
            same->second.push_back(uint16_t(m.id));
        }
        for (const auto& [e, meshes] : entries)
            walk_route(abi::fabric_unicast_write(self, {meshes[0], 0}, 0, 0, 0, 0), *table, from, is_new, meshes);
    }
}

DependencyVerdict verdict_of(std::vector<std::string> cycle) {
    DependencyVerdict v;
    v.cycle = std::move(cycle);
    v.acyclic = v.cycle.empty();
    return v;
}

RouteWalker walk_all(const FabricBuilder& fabric, const TableMove* move,
                     const std::vector<EarlierDetour>* earlier = nullptr) {
    RouteWalker walker(fabric, move, earlier);
    for (uint32_t from : fabric.order()) walker.walk_from(from);
    return walker;
}

}  // namespace

bool moves_every_table(const FabricBuilder& fabric, uint32_t chip, uint32_t peer_chip) {
    return !(fabric.spec().flags & abi::kFabricEscapeVc) || fabric.node(chip).mesh != fabric.node(peer_chip).mesh;
}

DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric) {
    return verdict_of(walk_all(fabric, nullptr).find_cycle());
}

DependencyVerdict check_table_move(const FabricBuilder& fabric, const TableMove& move,
                                   const std::vector<EarlierDetour>& earlier) {
    return verdict_of(walk_all(fabric, &move, &earlier).find_cycle());
}

std::vector<ChannelBits> table_move_dependencies(const FabricBuilder& fabric, const TableMove& move) {
    return walk_all(fabric, &move).graph();
}

}  // namespace weft::transport
