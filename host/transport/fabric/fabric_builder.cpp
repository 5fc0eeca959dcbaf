#include "transport/fabric/fabric_builder.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/names.h"
#include "driver/resident.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_dependencies.h"
#include "transport/fabric/fabric_wait.h"
#include "weft/abi/resident.h"

namespace weft::transport {
namespace {

uint64_t align64(uint64_t v) { return (v + 63) & ~uint64_t(63); }

// Where a router's parts sit in its kept L1, from the base. The counters
// its fallback relay writes: fallback_words (fallback_in's written per VC,
// then fallback's freed per VC).
struct Layout {
    uint64_t config, link_words, status, written, forward_freed, fallback_words, fallback_stage, route_table,
        detour_table, receivers, fallback_in, senders, end;
};

// The senders' channels: `lanes` worker lanes of lane_bytes each, then the
// pass-through ones of channel_bytes (bubble flow control makes those deeper).
struct Channels {
    uint32_t lanes = 0;
    uint64_t lane_bytes = 0, channel_bytes = 0;
    uint64_t sender(uint32_t s) const {
        return s < lanes ? s * lane_bytes : lanes * lane_bytes + (s - lanes) * channel_bytes;
    }
};

// A relay's senders are all pass-through; a router's lanes keep spec.slots.
Channels channels_of(const FabricSpec& spec, uint32_t slots, bool relay) {
    return {relay ? 0 : spec.lanes, uint64_t(spec.slots) * spec.slot_bytes(), uint64_t(slots) * spec.slot_bytes()};
}

Layout layout_of(uint32_t num_vcs, uint32_t num_senders, const Channels& ch, uint32_t fallback_in = 0) {
    const uint64_t channel_bytes = ch.channel_bytes;
    Layout l{};
    l.config = abi::kResidentControlBytes;
    l.link_words = l.config + align64(sizeof(abi::FabricRouterConfig));
    l.status = l.link_words + align64(sizeof(abi::FabricLinkWords));
    l.written = l.status + align64(sizeof(abi::FabricRouterStatus));
    l.forward_freed = l.written + 4 * abi::kFabricMaxSenders;
    l.fallback_words = l.forward_freed + 4 * abi::kFabricMaxDirections * abi::kFabricMaxVcs;
    l.fallback_stage = align64(l.fallback_words + 8 * abi::kFabricMaxVcs);
    l.route_table = l.fallback_stage + abi::kFabricHeaderBytes;
    l.detour_table = l.route_table + sizeof(abi::FabricRouteTable);
    l.receivers = align64(l.detour_table + sizeof(abi::FabricRouteTable));
    l.fallback_in = l.receivers + num_vcs * channel_bytes;
    l.senders = l.fallback_in + fallback_in * channel_bytes;
    l.end = l.senders + ch.sender(num_senders);
    return l;
}

// Where T's pass-through channel from the router facing `from` starts among
// its senders: after the lanes, one run of VCs per group (abi::fabric_pass_group).
uint32_t pass_through_index(uint32_t lanes, uint32_t num_vcs, uint32_t t_compass, uint32_t from, uint32_t flags) {
    return lanes + abi::fabric_pass_group(t_compass, from, flags) * num_vcs;
}

}  // namespace

FabricBuilder::FabricBuilder(const BoardInfo& board, std::vector<uint32_t> order, std::vector<Hop> cables, bool ring,
                             FabricSpec spec, const std::vector<std::optional<Hop>>& fallbacks)
    : board_(board), order_(std::move(order)), cables_(std::move(cables)), ring_(ring), spec_(std::move(spec)) {
    const size_t n = order_.size();
    if (n < 2) throw Error("a fabric needs at least two chips, not " + std::to_string(n));
    if (n > 255) throw Error("a 1D fabric spans at most 255 chips, not " + std::to_string(n));
    if (ring && n < 3) throw Error("a fabric ring needs at least three chips (two cannot wrap on distinct ports)");
    if (cables_.size() != (ring ? n : n - 1))
        throw Error("a fabric " + std::string(ring ? "ring" : "line") + " of " + std::to_string(n) + " chips needs " +
                    std::to_string(ring ? n : n - 1) + " cables, not " + std::to_string(cables_.size()));
    for (size_t i = 0; i < n; ++i)
        if (std::count(order_.begin(), order_.end(), order_[i]) > 1)
            throw Error(chip_name(order_[i]) + " appears twice in the fabric's order");
    if (spec_.bubble) spec_.flags |= abi::kFabricBubble;
    // A ring's dateline takes VC 1; VC 2 carries what a dead cable's routers
    // send back the other way round (kFabricRingEscape). Not under bubble
    // flow control, whose one VC has every VC's slots.
    if (ring && !(spec_.flags & abi::kFabricBubble)) spec_.flags |= abi::kFabricRingEscape;
    check_spec();
    register_fabric_wait_decoder();
    index_chips();
    use_vcs(!ring ? 1 : (spec_.flags & abi::kFabricRingEscape) ? 3 : 2);
    fallback_ = std::any_of(fallbacks.begin(), fallbacks.end(), [](const auto& f) { return f.has_value(); });
    l1_bytes_ =
        layout_of(num_vcs_, spec_.lanes + num_vcs_, channels_of(spec_, slots_, false), fallback_ ? num_vcs_ : 0).end +
        record_bytes();

    forward_.assign(n, -1);
    backward_.assign(n, -1);
    for (size_t i = 0; i < cables_.size(); ++i) {
        const Hop& c = cables_[i];
        const uint32_t from = order_[i], to = order_[(i + 1) % n];
        if (c.from_chip != from || c.to_chip != to)
            throw Error("fabric cable " + std::to_string(i) + " joins chip " + std::to_string(c.from_chip) +
                        " to chip " + std::to_string(c.to_chip) + ", not " + chip_name(from) + " to " + chip_name(to));
        for (auto [chip, port, dir, pos] : {std::tuple{from, c.from_port, FabricDirection::kForward, i},
                                            std::tuple{to, c.to_port, FabricDirection::kBackward, (i + 1) % n}}) {
            if (port >= board_.ports.size())
                throw Error(chip_name(chip) + " has no port " + std::to_string(port) + " for the fabric");
            FabricRouterPlan r;
            r.chip = chip;
            r.port = port;
            r.core = board_.ports[port].core;
            r.direction = dir;
            (dir == FabricDirection::kForward ? forward_ : backward_)[pos] = static_cast<int>(routers_.size());
            routers_.push_back(r);
        }
    }
    for (size_t i = 0; i < n; ++i)
        if (forward_[i] >= 0 && backward_[i] >= 0 && routers_[forward_[i]].port == routers_[backward_[i]].port)
            throw Error(chip_name(order_[i]) + " would need port " + std::to_string(routers_[forward_[i]].port) +
                        " both ways along the fabric");
    for (size_t i = 0; i < cables_.size(); ++i) cable_routers_.push_back({forward_[i], backward_[(i + 1) % n]});
    const size_t primaries = routers_.size();
    if (fallback_) add_relays(fallbacks);
    for (FabricRouterPlan& r : routers_) place(r);
    for (size_t r = primaries; r < routers_.size(); r += 2) link_relays(r);
    for (size_t i = 0; i < n; ++i) {
        const bool last = i + 1 == n;
        if (forward_[i] >= 0) {
            const int peer = backward_[(i + 1) % n];
            link(routers_[forward_[i]], &routers_[peer], backward_[i] >= 0 ? &routers_[backward_[i]] : nullptr,
                 ring_ && last);
        }
        if (backward_[i] >= 0) {
            const int peer = forward_[(i + n - 1) % n];
            link(routers_[backward_[i]], &routers_[peer], forward_[i] >= 0 ? &routers_[forward_[i]] : nullptr,
                 ring_ && i == 0);
        }
    }
}

namespace {

Mesh numbered_from_zero(Mesh mesh) {
    mesh.first_chip = 0;
    return mesh;
}

}  // namespace

FabricBuilder::FabricBuilder(const BoardInfo& board, const Mesh& mesh, std::vector<Hop> cables, FabricSpec spec,
                             const RouteOf& routes, const std::vector<std::optional<Hop>>& fallbacks)
    : FabricBuilder(board, std::vector<Mesh>{numbered_from_zero(mesh)}, std::move(cables), std::move(spec), routes, {},
                    fallbacks) {}

FabricBuilder::FabricBuilder(const BoardInfo& board, std::vector<Mesh> meshes, std::vector<Hop> cables, FabricSpec spec,
                             const RouteOf& routes, const ExitOf& exits,
                             const std::vector<std::optional<Hop>>& fallbacks)
    : board_(board), cables_(std::move(cables)), ring_(false), spec_(std::move(spec)), meshes_(std::move(meshes)) {
    check_meshes();
    const bool many = meshes_.size() > 1;
    if (many) spec_.flags |= abi::kFabricMeshClasses;
    if (spec_.bubble) spec_.flags |= abi::kFabricBubble;
    if (std::none_of(meshes_.begin(), meshes_.end(), [](const Mesh& m) { return m.wraps(); }))
        spec_.flags |= abi::kFabricEscapeVc;
    else if (!many && !(spec_.flags & (abi::kFabricBubble | abi::kFabricNoDateline)))
        spec_.flags |= abi::kFabricEscapeVc | abi::kFabricRingEscape;  // a torus: VC 2, above its datelines'
    check_spec();
    register_fabric_wait_decoder();
    for (const Mesh& m : meshes_)
        for (uint32_t i = 0; i < m.chips(); ++i) order_.push_back(m.first_chip + i);
    std::sort(order_.begin(), order_.end());
    index_chips();
    // VC 1: a torus's dateline, the class of packets from another mesh, or
    // on one mesh the escape class; VC 2: the escape class between meshes or
    // on a torus.
    use_vcs((spec_.flags & abi::kFabricEscapeVc) ? abi::fabric_escape_vc(spec_.flags) + 1 : 2);
    fallback_ = std::any_of(fallbacks.begin(), fallbacks.end(), [](const auto& f) { return f.has_value(); });
    l1_bytes_ = layout_of(num_vcs_, spec_.lanes + abi::fabric_pass_groups(2, spec_.flags) * num_vcs_,
                          channels_of(spec_, slots_, false), fallback_ ? num_vcs_ : 0)
                    .end +
                record_bytes();
    router_at_.assign(size_t(order_.back() + 1) * 4, -1);
    routers_.reserve(2 * cables_.size());  // a router at each end (relays after): no copies of thousands
    for (const Hop& c : cables_) add_cable_2d(c);
    const size_t primaries = routers_.size();
    if (fallback_) add_relays(fallbacks);
    const RouteOf route = routes ? routes : RouteOf([&](uint32_t a, uint32_t b) {
        const Mesh& m = mesh_of(a);
        return dor_route(m, a - m.first_chip, b - m.first_chip);
    });
    if (!many) check_deadlock(route);
    fill_tables(route, exits);
    for (FabricRouterPlan& r : routers_) place(r);
    if (spec_.table_per_chip) share_tables();
    for (size_t r = 0; r < primaries; ++r) link_2d(routers_[r]);
    for (size_t r = primaries; r < routers_.size(); r += 2) link_relays(r);
    if (many) check_deadlock(route);
}

void FabricBuilder::check_meshes() const {
    if (meshes_.empty()) throw Error("a 2D fabric needs at least one mesh");
    uint32_t chips = 0;
    for (const Mesh& m : meshes_) {
        const std::string name = meshes_.size() > 1 ? "mesh " + std::to_string(m.id) + ": " : "";
        chips += m.chips();
        if (m.chips() > abi::kFabricMaxMeshChips)
            throw Error(name + "a 2D fabric's routing table holds " + std::to_string(abi::kFabricMaxMeshChips) +
                        " chips, not " + std::to_string(m.chips()));
        if (m.wraps() && (m.width == 2 || m.height == 2))
            throw Error(
                "a torus needs at least three chips in each dimension it wraps (two would wrap on the same pair)");
        if (meshes_.size() > 1 && m.wraps())
            throw Error(name + "a fabric of several meshes runs each as a mesh, not a " + m.topology);
        if (meshes_.size() > 1 && m.id >= abi::kFabricMaxMeshes)
            throw Error(name + "a chip's L1 table holds meshes 0-" + std::to_string(abi::kFabricMaxMeshes - 1));
    }
    if (chips < 2) throw Error("a 2D fabric needs at least two chips, not " + std::to_string(chips));
}

void FabricBuilder::index_chips() {
    const uint32_t top = order_.empty() ? 0 : *std::max_element(order_.begin(), order_.end());
    position_of_.assign(size_t(top) + 1, kNotHere);
    for (size_t i = 0; i < order_.size(); ++i) position_of_[order_[i]] = static_cast<uint32_t>(i);
    mesh_index_.assign(position_of_.size(), kNotHere);
    for (size_t m = 0; m < meshes_.size(); ++m)
        for (uint32_t i = 0; i < meshes_[m].chips(); ++i)
            if (uint32_t& at = mesh_index_[meshes_[m].first_chip + i]; at == kNotHere) at = uint32_t(m);  // the first
}

const Mesh& FabricBuilder::mesh_of(uint32_t chip) const {
    if (chip >= mesh_index_.size() || mesh_index_[chip] == kNotHere)
        throw Error(chip_name(chip) + " is not in the fabric");
    return meshes_[mesh_index_[chip]];
}

abi::FabricNodeId FabricBuilder::node(uint32_t chip) const {
    if (meshes_.empty()) return {0, static_cast<uint16_t>(chip)};
    const Mesh& m = mesh_of(chip);
    return {static_cast<uint16_t>(m.id), static_cast<uint16_t>(chip - m.first_chip)};
}

// A cable inside a mesh faces its neighbour; one between meshes leaves its
// port's way out of one mesh and enters the other the opposite way.
void FabricBuilder::add_cable_2d(const Hop& c) {
    const Mesh& a = mesh_of(c.from_chip);
    const Mesh& b = mesh_of(c.to_chip);
    uint32_t compass = 4;
    bool wrap = false;
    if (&a == &b) {
        for (uint32_t d = 0; d < 4 && compass == 4; ++d)
            if (neighbor(a, c.from_chip - a.first_chip, static_cast<abi::FabricCompass>(d), &wrap) ==
                static_cast<int>(c.to_chip - a.first_chip))
                compass = d;
        if (compass == 4)
            throw Error("fabric cable from chip " + std::to_string(c.from_chip) + " to chip " +
                        std::to_string(c.to_chip) + " does not join neighbours of the " + std::to_string(a.width) +
                        "x" + std::to_string(a.height) + (a.wraps() ? " torus" : " mesh"));
    } else {
        if (c.from_port >= board_.ports.size() || c.to_port >= board_.ports.size())
            throw Error("the cable between " + chip_name(c.from_chip) + " and " + chip_name(c.to_chip) +
                        " names a port the board does not have");
        compass = board_.ports[c.from_port].direction;
        const uint32_t local = c.from_chip - a.first_chip;
        if (neighbor(a, local, static_cast<abi::FabricCompass>(compass)) >= 0 ||
            board_.ports[c.to_port].direction != abi::fabric_opposite(static_cast<abi::FabricCompass>(compass)))
            throw Error("the cable from " + chip_name(c.from_chip) + " (mesh " + std::to_string(a.id) + ") to " +
                        chip_name(c.to_chip) + " (mesh " + std::to_string(b.id) +
                        ") must leave the edge of one mesh on a port facing out and enter the other facing back");
        wrap = true;  // its packets move to the inter-mesh VC
    }
    add_router_2d(c.from_chip, c.from_port, compass, c.to_chip, wrap);
    add_router_2d(c.to_chip, c.to_port, abi::fabric_opposite(static_cast<abi::FabricCompass>(compass)), c.from_chip,
                  wrap);
    const int last = static_cast<int>(routers_.size()) - 1;
    cable_routers_.push_back({last - 1, last});
}

void FabricBuilder::check_deadlock(const RouteOf& route) const {
    const Mesh& m = meshes_[0];
    const bool bubble = spec_.flags & abi::kFabricBubble;
    const bool datelines = m.wraps() && !(spec_.flags & abi::kFabricNoDateline) && !bubble;
    const DependencyVerdict verdict = meshes_.size() == 1 ? check_dependencies(m, route, datelines, bubble)
                                                          : check_fabric_dependencies(*this);
    if (verdict.acyclic) return;
    std::string cycle;
    for (const std::string& c : verdict.cycle) cycle += (cycle.empty() ? "" : " -> ") + c;
    throw Error("the fabric's routes can deadlock: their channel dependency graph has the cycle " + cycle);
}

// A route in letters as a table entry, its cables checked.
// A route longer than a header holds keeps its first cables, where the
// fabric routes on from tables (kFabricLongRoutes).
abi::FabricRouteEntry FabricBuilder::entry_of(uint32_t from, uint32_t to, const std::string& way) const {
    if (way.size() > abi::kFabricMaxRouteHops && !(spec_.flags & abi::kFabricLongRoutes))
        throw Error("the route from chip " + std::to_string(from) + " to chip " + std::to_string(to) + " takes " +
                    std::to_string(way.size()) + " hops; a packet header holds " +
                    std::to_string(abi::kFabricMaxRouteHops) +
                    ", and this fabric's routers were built for routes that fit one (they do not route on)");
    check_cables_of(from, to, way);
    abi::FabricRouteEntry e{};
    const size_t hops = std::min<size_t>(way.size(), abi::kFabricMaxRouteHops);
    e.hops = static_cast<uint8_t>(hops);
    for (size_t h = 0; h < hops; ++h) {
        const auto d = abi::fabric_compass_of(way[h]);
        if (h == 0) e.first = static_cast<uint8_t>(d);
        else
            e.route |= d << (2 * (h - 1));
    }
    return e;
}

abi::FabricRouteTable FabricBuilder::table_with(uint32_t chip, const RouteOf& routes, const ExitOf& exits) const {
    abi::FabricRouteTable t = table(chip);
    const Mesh& m = mesh_of(chip);
    for (uint32_t i = 0; i < m.chips(); ++i) {
        const std::string way = routes(chip, m.first_chip + i);
        t.to[i] = way == kNoRoute ? abi::FabricRouteEntry{} : entry_of(chip, m.first_chip + i, way);
    }
    if (!exits) return t;
    for (const Mesh& other : meshes_) {
        if (&other == &m) continue;
        const std::string way = exits(chip, other.id);
        t.to_mesh[other.id] = way == kNoRoute ? abi::FabricRouteEntry{} : entry_of(chip, other.first_chip, way);
    }
    return t;
}

// Before the routers are placed: their configs take the flags.
void FabricBuilder::note_length(const std::string& way) {
    if (way.size() > abi::kFabricMaxRouteHops) spec_.flags |= abi::kFabricLongRoutes;
}

void FabricBuilder::fill_tables(const RouteOf& route, const ExitOf& exits) {
    tables_.assign(order_.size(), abi::FabricRouteTable{});
    for (uint32_t from : order_) {
        const Mesh& m = mesh_of(from);
        abi::FabricRouteTable& t = tables_[position(from)];
        t.chips = m.chips();
        for (uint32_t i = 0; i < m.chips(); ++i) {
            const std::string way = route(from, m.first_chip + i);
            if (way == kNoRoute) continue;  // a chip taken out: no entry
            note_length(way);
            t.to[i] = entry_of(from, m.first_chip + i, way);
        }
        if (meshes_.size() == 1) continue;
        for (const Mesh& other : meshes_) {
            t.meshes = std::max(t.meshes, other.id + 1);
            if (&other == &m) continue;
            const std::string way = exits(from, other.id);
            if (way == kNoRoute) continue;
            note_length(way);
            t.to_mesh[other.id] = entry_of(from, other.first_chip, way);
        }
    }
}

// Cable i's fallback: a relay at each end, after every other router (their
// index pairs: from's, then to's), each told its chip's router on cable i.
void FabricBuilder::add_relays(const std::vector<std::optional<Hop>>& fallbacks) {
    if (fallbacks.size() != cables_.size())
        throw Error("a fabric's fallbacks name " + std::to_string(fallbacks.size()) + " cables for its " +
                    std::to_string(cables_.size()));
    for (size_t i = 0; i < cables_.size(); ++i) {
        if (!fallbacks[i]) continue;
        const Hop& f = *fallbacks[i];
        const Hop& c = cables_[i];
        if (f.from_chip != c.from_chip || f.to_chip != c.to_chip || f.from_port == c.from_port ||
            f.to_port == c.to_port)
            throw Error("fabric cable " + std::to_string(i) + "'s fallback must join " + chip_name(c.from_chip) +
                        " to " + chip_name(c.to_chip) + " on other ports");
        const auto [from_end, to_end] = cable_routers_.at(i);
        for (auto [chip, port, peer, primary] : {std::tuple{f.from_chip, f.from_port, f.to_chip, from_end},
                                                 std::tuple{f.to_chip, f.to_port, f.from_chip, to_end}}) {
            if (port >= board_.ports.size())
                throw Error(chip_name(chip) + " has no port " + std::to_string(port) + " for a fabric fallback");
            for (const FabricRouterPlan& r : routers_)
                if (r.chip == chip && r.port == port)
                    throw Error(chip_name(chip) + " port " + std::to_string(port) + " would carry two routers");
            FabricRouterPlan r;
            r.chip = chip;
            r.port = port;
            r.core = board_.ports[port].core;
            r.direction = routers_[size_t(primary)].direction;
            r.peer_chip = peer;
            r.relay_for = primary;
            routers_.push_back(r);
        }
    }
}

// Relays r and r + 1 face each other across their cable; each passes what
// it receives to its chip's router's fallback_in and sends what that router
// puts in its senders.
void FabricBuilder::link_relays(size_t r) {
    const uint64_t channel_bytes = uint64_t(slots_) * spec_.slot_bytes();
    for (size_t k : {r, r + 1}) {
        FabricRouterPlan& relay = routers_[k];
        link(relay, &routers_[k == r ? r + 1 : r], nullptr, false);
        FabricRouterPlan& primary = routers_[size_t(relay.relay_for)];
        abi::FabricRouterConfig& p = primary.config;
        const Layout lp = layout_of(num_vcs_, p.num_senders, channels_of(spec_, slots_, false), num_vcs_);
        const Layout lr = layout_of(num_vcs_, relay.config.num_senders, channels_of(spec_, slots_, true));
        for (uint32_t v = 0; v < num_vcs_; ++v) {
            abi::FabricRing& out = relay.config.senders[v];
            out.freed = primary.l1.base + lp.fallback_words + 4 * (abi::kFabricMaxVcs + v);
            p.fallback[v] = out;
            p.fallback_in[v] = {primary.l1.base + lp.fallback_in + v * channel_bytes,
                                primary.l1.base + lp.fallback_words + 4 * v, relay.l1.base + lr.forward_freed + 4 * v,
                                slots_, v};
            relay.config.forward[0][v] = p.fallback_in[v];
        }
        p.fallback_port = relay.port;
        p.fallback_stage = primary.l1.base + lp.fallback_stage;
    }
}

// Every cable a route takes must be one of the fabric's: a missing one is
// fine only where no route needs it (the control plane routed around it).
void FabricBuilder::check_cables_of(uint32_t from, uint32_t to, const std::string& way) const {
    uint32_t at = from;
    for (char letter : way) {
        const uint32_t d = abi::fabric_compass_of(letter);
        const int r = d < 4 ? router_at_[at * 4 + d] : -1;
        if (r < 0)
            throw Error("the route " + way + " from chip " + std::to_string(from) + " to chip " + std::to_string(to) +
                        " needs " + chip_name(at) + "'s fabric cable " + letter + ", which the fabric does not have");
        at = routers_[r].peer_chip;
    }
}

void FabricBuilder::add_router_2d(uint32_t chip, uint32_t port, uint32_t compass, uint32_t peer, bool dateline) {
    const std::string where = chip_name(chip) + " port " + std::to_string(port);
    if (port >= board_.ports.size()) throw Error(chip_name(chip) + " has no port " + std::to_string(port));
    if (board_.ports[port].direction != compass)
        throw Error("the fabric's cable " + std::string(1, abi::fabric_letter(compass)) + " of " + chip_name(chip) +
                    " is on port " + std::to_string(port) + ", which faces " +
                    abi::fabric_letter(board_.ports[port].direction));
    if (router_at_[chip * 4 + compass] >= 0)
        throw Error(chip_name(chip) + " has two fabric cables " + abi::fabric_letter(compass) +
                    " (a routing plane takes one per direction)");
    FabricRouterPlan r;
    r.chip = chip;
    r.port = port;
    r.core = board_.ports[port].core;
    r.direction = compass_direction(compass);
    r.peer_chip = peer;
    r.dateline = dateline;
    router_at_[chip * 4 + compass] = static_cast<int>(routers_.size());
    routers_.push_back(r);
}

// A 2D router's peer across the cable, and the pass-through channel it fills
// in each other router of its chip (whose slots that router frees into our L1).
void FabricBuilder::link_2d(FabricRouterPlan& r) {
    abi::FabricRouterConfig& c = r.config;
    const uint32_t compass = static_cast<uint32_t>(r.direction);
    const FabricRouterPlan& peer = routers_[router_at_[r.peer_chip * 4 + (compass ^ 2)]];
    c.dateline = r.dateline;
    c.peer_link_words = peer.config.link_words;
    for (uint32_t v = 0; v < num_vcs_; ++v) c.peer_receivers[v] = peer.config.receivers[v].buffer;
    const uint64_t forward_freed = r.l1.base + layout_of(num_vcs_, c.num_senders, {}).forward_freed;
    const bool loopback = abi::fabric_pass_groups(2, spec_.flags) == 4;
    for (uint32_t d = 0; d < 4; ++d) {
        const int t = router_at_[r.chip * 4 + d];
        if ((d == compass && !loopback) || t < 0) continue;
        abi::FabricRouterConfig& target = routers_[t].config;
        const uint32_t first = pass_through_index(spec_.lanes, num_vcs_, d, compass, spec_.flags);
        for (uint32_t v = 0; v < num_vcs_; ++v) {
            abi::FabricRing& pass = target.senders[first + v];
            const uint64_t freed = forward_freed + 4 * (d * abi::kFabricMaxVcs + v);
            c.forward[d][v] = {pass.buffer, pass.written, freed, pass.slots, v};
            pass.freed = freed;
        }
    }
}

// Under bubble flow control every packet rides VC 0, so VC 0's channels
// take the slots the other VCs would have had: the same L1, deeper buffers.
// The worker lanes keep theirs: they were VC 0's already.
void FabricBuilder::use_vcs(uint32_t vcs) {
    const bool bubble = spec_.flags & abi::kFabricBubble;
    num_vcs_ = bubble ? 1 : vcs;
    slots_ = bubble ? std::min(spec_.slots * vcs, abi::kFabricMaxSlots) : spec_.slots;
}

uint32_t FabricBuilder::senders_of(const FabricRouterPlan& r) const {
    if (r.relay_for >= 0) return num_vcs_;  // one per VC, filled by its chip's router
    return spec_.lanes + abi::fabric_pass_groups(dims(), spec_.flags) * num_vcs_;
}

void FabricBuilder::check_spec() const {
    if (spec_.slots == 0 || spec_.slots > abi::kFabricMaxSlots)
        throw Error("fabric slots must be 1-" + std::to_string(abi::kFabricMaxSlots) + ", not " +
                    std::to_string(spec_.slots));
    if (spec_.payload_bytes() % 64 || spec_.payload_bytes() > (1u << 20) - abi::kFabricHeaderBytes)
        throw Error("a fabric packet_bytes must be a multiple of 64, at most 1 MiB with its 64-byte header, not " +
                    std::to_string(spec_.payload_bytes()));
    if (spec_.record_packets > kMaxRecordedPackets)
        throw Error("a router's packet log holds at most " + std::to_string(kMaxRecordedPackets) + " packets, not " +
                    std::to_string(spec_.record_packets));
    if (spec_.lanes == 0 || spec_.lanes > abi::kFabricMaxLanes)
        throw Error("fabric worker lanes must be 1-" + std::to_string(abi::kFabricMaxLanes) + ", not " +
                    std::to_string(spec_.lanes));
    if ((spec_.flags & abi::kFabricBubble) && dims() == 2) {
        if (meshes_.size() > 1)
            throw Error("bubble flow control runs on a ring, a line or a torus; a fabric of several meshes keeps VC 1 "
                        "for the packets from another mesh (keep the cluster file's flow_control: dateline)");
        if (!meshes_[0].wraps())
            throw Error("bubble flow control keeps a free slot in each ring of a ring or torus; a mesh has no rings");
    }
    if ((spec_.flags & abi::kFabricBubble) && spec_.slots < 2)
        throw Error("bubble flow control needs at least 2 slots a channel (a packet enters the ring only while 2 are "
                    "free), not " +
                    std::to_string(spec_.slots));
}

// The channels' own addresses; those of its peer and opposite router come in link().
void FabricBuilder::place(FabricRouterPlan& r) const {
    r.l1 = resident::kept_l1(board_, r.chip, r.core, l1_bytes_);
    const uint32_t num_senders = senders_of(r);
    const bool relay = r.relay_for >= 0;
    const Channels ch = channels_of(spec_, slots_, relay);
    const uint64_t channel_bytes = ch.channel_bytes;
    const Layout l = layout_of(num_vcs_, num_senders, ch, fallback_ && !relay ? num_vcs_ : 0);
    const uint64_t base = r.l1.base;
    abi::FabricRouterConfig& c = r.config;
    c.magic = abi::kFabricRouterMagic;
    c.port = r.port;
    c.self = node(r.chip);
    c.num_vcs = num_vcs_;
    c.slot_size = spec_.slot_bytes();
    c.num_senders = num_senders;
    c.timeout_us = spec_.router_timeout_ms * 1000;
    c.flags = spec_.flags | (relay ? uint32_t(abi::kFabricRelay) : 0u);
    c.dims = relay ? 1 : dims();  // a relay passes everything to one router: no routes of its own
    if (!relay && ring_ && (spec_.flags & abi::kFabricRingEscape)) c.ring_chips = static_cast<uint32_t>(order_.size());
    if (c.dims == 2) {
        c.compass = static_cast<uint32_t>(r.direction);
        c.mesh_width = mesh_of(r.chip).width;
        c.route_table = base + l.route_table;
        if (spec_.flags & abi::kFabricEscapeVc) c.detour_table = base + l.detour_table;
    }
    c.link_words = base + l.link_words;
    c.status = base + l.status;
    for (uint32_t v = 0; v < num_vcs_; ++v) c.receivers[v] = {base + l.receivers + v * channel_bytes, 0, 0, slots_, v};
    for (uint32_t s = 0; s < num_senders; ++s) {
        const uint32_t vc = relay ? s : s < spec_.lanes ? 0 : (s - spec_.lanes) % num_vcs_;
        c.senders[s] = {base + l.senders + ch.sender(s), base + l.written + 4 * s, 0,
                        s < ch.lanes ? spec_.slots : slots_, vc};
    }
    if (spec_.record_packets) {  // after this router's channels: within l1_bytes_, which counts the most
        c.records = base + align64(l.end);
        c.record_slots = spec_.record_packets;
    }
    r.config_address = base + l.config;
}

void FabricBuilder::link(FabricRouterPlan& r, const FabricRouterPlan* peer, FabricRouterPlan* opposite,
                         bool dateline) const {
    abi::FabricRouterConfig& c = r.config;
    c.dateline = dateline;
    r.dateline = dateline;
    r.peer_chip = peer->chip;
    c.peer_link_words = peer->config.link_words;
    for (uint32_t v = 0; v < num_vcs_; ++v) c.peer_receivers[v] = peer->config.receivers[v].buffer;
    if (!opposite) return;
    const uint64_t forward_freed = r.l1.base + layout_of(num_vcs_, c.num_senders, {}).forward_freed;
    for (uint32_t v = 0; v < num_vcs_; ++v) {
        const abi::FabricRing& pass = opposite->config.senders[spec_.lanes + v];
        c.forward[0][v] = {pass.buffer, pass.written, forward_freed + 4 * v, pass.slots, v};
    }
    // It frees the pass-through slots we fill into our counters.
    for (uint32_t v = 0; v < num_vcs_; ++v) opposite->config.senders[spec_.lanes + v].freed = c.forward[0][v].freed;
}

// Every router of a chip reads the first's copy of its tables.
void FabricBuilder::share_tables() {
    std::vector<uint64_t> first(order_.size(), 0);
    for (FabricRouterPlan& r : routers_) {
        if (!r.config.route_table) continue;
        uint64_t& at = first[position(r.chip)];
        if (!at) at = r.config.route_table;
        r.config.route_table = at;
    }
}

void FabricBuilder::write_router(ChipWriter& memory, size_t index) const {
    const FabricRouterPlan& r = routers_.at(index);
    memory.write(r.chip, r.config_address, &r.config, sizeof r.config);
    const Layout l = layout_of(num_vcs_, r.config.num_senders, {});
    memory.clear(r.chip, r.l1.base + l.link_words, l.route_table - l.link_words);
    if (holds_table(r)) memory.write(r.chip, r.config.route_table, &table(r.chip), sizeof(abi::FabricRouteTable));
    // On one mesh the detour table starts as the chip's own. Between meshes
    // a move writes all of it (its L1 entries too) before the router reads
    // it; until then it holds no meshes, so the control plane knows it for
    // none (not an earlier fabric's detour, left in the same L1).
    if (!r.config.detour_table) return;
    if (meshes_.size() == 1) return write_detour_table(memory, r, table(r.chip), false);
    memory.clear(r.chip, r.config.detour_table, offsetof(abi::FabricRouteTable, to));
}

void write_detour_table(ChipWriter& memory, const FabricRouterPlan& r, const abi::FabricRouteTable& table, bool whole) {
    if (whole) return memory.write(r.chip, r.config.detour_table, &table, sizeof table);
    abi::FabricRouteTable one_mesh = table;
    one_mesh.meshes = 0;
    memory.write(r.chip, r.config.detour_table, &one_mesh, abi::kFabricDetourTableBytes);
}

int FabricBuilder::router_index(uint32_t chip, FabricDirection direction) const {
    const uint32_t p = position(chip);
    if (dims() == 2) {
        if (direction > FabricDirection::kWest) return -1;
        return router_at_[chip * 4 + static_cast<uint32_t>(direction)];
    }
    if (direction > FabricDirection::kBackward) return -1;
    return (direction == FabricDirection::kForward ? forward_ : backward_)[p];
}

uint32_t FabricBuilder::position(uint32_t chip) const {
    if (chip >= position_of_.size() || position_of_[chip] == kNotHere)
        throw Error(chip_name(chip) + " is not in the fabric");
    return position_of_[chip];
}

FabricRoute FabricBuilder::route(uint32_t from, uint32_t to) const {
    const uint32_t n = static_cast<uint32_t>(order_.size());
    const uint32_t a = position(from), b = position(to);
    if (dims() == 2) {
        const abi::FabricRouteEntry e = abi::fabric_route_entry(tables_[a], node(from).mesh, node(to));
        return {compass_direction(e.first), e.hops, e.route};
    }
    if (!ring_)
        return b >= a ? FabricRoute{FabricDirection::kForward, b - a} : FabricRoute{FabricDirection::kBackward, a - b};
    const uint32_t ahead = (b + n - a) % n;
    if (ahead <= n - ahead) return {FabricDirection::kForward, ahead};
    return {FabricDirection::kBackward, n - ahead};
}

uint8_t FabricBuilder::connection_slot(FabricDirection direction) const {
    if (dims() == 2) return static_cast<uint8_t>(direction);
    return direction == FabricDirection::kBackward ? 1 : 0;
}

void FabricBuilder::connect_every_way(ChipWriter& memory, L1Allocator& l1, uint32_t chip, uint32_t lane,
                                      uint32_t worker_core, uint64_t (&slots)[4]) const {
    for (uint32_t i = 0; i < (dims() == 2 ? 4u : 2u); ++i) {
        const FabricDirection d = dims() == 2 ? compass_direction(i)
                                  : i         ? FabricDirection::kBackward
                                              : FabricDirection::kForward;
        slots[connection_slot(d)] = router_index(chip, d) >= 0 ? connect(memory, l1, chip, d, lane, worker_core) : 0;
    }
}

uint64_t FabricBuilder::connect(ChipWriter& memory, L1Allocator& l1, uint32_t chip, FabricDirection direction,
                                uint32_t lane, uint32_t worker_core) const {
    const int index = router_index(chip, direction);
    static const char* const kWays[] = {"north", "east", "south", "west", "forward", "backward"};
    const char* way = kWays[static_cast<uint32_t>(direction) % kFabricDirections];
    if (index < 0)
        throw Error(chip_name(chip) + (dims() == 2 ? " is on the fabric's edge" : " ends the fabric's line") +
                    ": it has no router " + way);
    if (lane >= spec_.lanes)
        throw Error("fabric lane " + std::to_string(lane) + " does not exist: routers have " +
                    std::to_string(spec_.lanes));
    if (worker_core >= board_.cores.size() || board_.cores[worker_core].role != CoreRole::kWorker)
        throw Error(chip_name(chip) + " core " + std::to_string(worker_core) + " is not a worker core");
    const FabricRouterPlan& r = routers_[index];
    const std::string what = "fabric connection " + std::string(way) + " lane " + std::to_string(lane);
    const uint64_t at = l1.allocate(chip, worker_core, sizeof(abi::FabricWorkerConnection), 64, what);
    const uint64_t freed = l1.allocate(chip, worker_core, 4, 64, what + " counter");
    const uint64_t headers =
        l1.allocate(chip, worker_core, uint64_t(abi::kFabricHeaderBytes) * slots_, 64, what + " headers");
    abi::FabricWorkerConnection c{};
    c.lane = r.config.senders[lane];
    c.lane.freed = freed;
    c.headers = headers;
    c.router_lane = r.config_address + offsetof(abi::FabricRouterConfig, senders) + sizeof(abi::FabricRing) * lane;
    c.self = r.config.self;
    c.slot_size = spec_.slot_bytes();
    c.router_core = r.core;
    c.port = r.port;
    c.route_table = r.config.route_table;
    if (dims() == 2) c.scratch = l1.allocate(chip, worker_core, 8, 8, what + " route lookup");
    memory.write(chip, at, &c, sizeof c);
    memory.clear(chip, freed, 4);
    return at;
}

namespace {

// Another plane's working cable between the same two chips as `l`, its ports
// facing the same ways (chips numbered from `first`), for a fallback relay.
std::optional<Hop> fallback_of(const BoardInfo& board, const ClusterTopology& t, const LinkInfo& l, uint32_t first) {
    for (const LinkInfo& o : t.links()) {
        if (!o.up || &o == &l) continue;
        const bool same = o.chip_a == l.chip_a && o.chip_b == l.chip_b;
        const bool crossed = o.chip_a == l.chip_b && o.chip_b == l.chip_a;
        if (!same && !crossed) continue;
        const uint32_t at_a = same ? o.port_a : o.port_b, at_b = same ? o.port_b : o.port_a;
        if (board.ports.at(at_a).plane == board.ports.at(l.port_a).plane) continue;
        if (board.ports.at(at_a).direction != board.ports.at(l.port_a).direction ||
            board.ports.at(at_b).direction != board.ports.at(l.port_b).direction)
            continue;
        return Hop{l.chip_a - first, at_a, l.chip_b - first, at_b};
    }
    return std::nullopt;
}

}  // namespace

uint32_t routing_plane(const BoardInfo& board, const FabricBuilder& fabric) {
    for (const FabricRouterPlan& r : fabric.routers())
        if (r.relay_for < 0) return board.ports.at(r.port).plane;
    return 0;
}

bool has_relays(const FabricBuilder& fabric) {
    for (const FabricRouterPlan& r : fabric.routers())
        if (r.relay_for >= 0) return true;
    return false;
}

ClusterTopology routed_topology(const ClusterTopology& cluster, const FabricBuilder& fabric) {
    if (fabric.dims() != 2 || cluster.meshes().size() != 1 || fabric.meshes().size() != 1) return cluster;
    if (!cluster.meshes()[0].wraps() || fabric.meshes()[0].wraps()) return cluster;
    std::vector<Mesh> meshes = cluster.meshes();
    meshes[0].topology = "mesh";
    return ClusterTopology::from_meshes(std::move(meshes), cluster.links());
}

FabricBuilder mesh_fabric(const BoardInfo& board, const ClusterTopology& topology, FabricSpec spec, bool wrap,
                          const RouteOf& routes, uint32_t plane) {
    const auto& meshes = topology.meshes();
    if (meshes.size() != 1 || (meshes[0].topology != "mesh" && meshes[0].topology != "torus"))
        throw Error("a 2D fabric needs a cluster of one mesh or torus" +
                    (meshes.empty() ? std::string() : ", not a " + meshes[0].topology));
    const Mesh& m = meshes[0];
    Mesh mesh = m;
    if (!wrap) mesh.topology = "mesh";
    // With cables down, the control plane's tables route around them.
    std::optional<ControlPlane> control;
    RouteOf route = routes;
    const bool any_down = std::any_of(topology.links().begin(), topology.links().end(), [&](const LinkInfo& l) {
        return !l.up && board.ports.at(l.port_a).plane == plane && topology.mesh_of(l.chip_a).id == m.id;
    });
    // Each plane's fabric is planned round its own dead cables.
    if (!route && any_down && mesh.wraps() == m.wraps()) {
        control.emplace(board, topology, plane, spec.fallback);
        if (const std::string why = control->unusable(m); !why.empty())
            throw Error("the 2D fabric cannot route around the cables that are down: " + why);
        route = [&](uint32_t a, uint32_t b) { return control->l0_route(m, a, b); };
    }
    const Mesh grid = Mesh::grid(m.width, m.height, m.wraps());
    std::vector<Hop> cables;
    std::vector<std::optional<Hop>> fallbacks;
    for (const LinkInfo& l : topology.links()) {
        if (board.ports.at(l.port_a).plane != plane || board.ports.at(l.port_b).plane != plane) continue;
        const uint32_t a = l.chip_a - m.first_chip, b = l.chip_b - m.first_chip;
        bool wraps = false;
        for (abi::FabricCompass d : {abi::kFabricEast, abi::kFabricSouth, abi::kFabricWest, abi::kFabricNorth})
            if (neighbor(grid, a, d, &wraps) == static_cast<int>(b)) break;
        if (wraps && !mesh.wraps()) continue;
        if (!l.up && route) continue;  // routed around
        if (!l.up)
            throw Error("the cable from chip " + std::to_string(l.chip_a) + " port " + std::to_string(l.port_a) +
                        " to chip " + std::to_string(l.chip_b) +
                        " is down: a 2D fabric needs every cable of its plane");
        cables.push_back({a, l.port_a, b, l.port_b});
        if (spec.fallback) fallbacks.push_back(fallback_of(board, topology, l, m.first_chip));
    }
    return FabricBuilder(board, mesh, std::move(cables), std::move(spec), route, fallbacks);
}

FabricBuilder multi_mesh_fabric(const BoardInfo& board, const ClusterTopology& topology, FabricSpec spec) {
    if (topology.meshes().size() < 2) throw Error("a fabric of several meshes needs a cluster of several meshes");
    for (const Mesh& m : topology.meshes())
        if (m.topology != "mesh")
            throw Error("a fabric of several meshes takes meshes; mesh " + std::to_string(m.id) + " is a " +
                        m.topology);
    const auto control = std::make_shared<const ControlPlane>(board, topology);
    for (const Mesh& m : topology.meshes())
        if (const std::string why = control->unusable(m); !why.empty())
            throw Error("the fabric cannot route around the cables that are down: " + why);
    std::vector<Hop> cables;
    for (const LinkInfo& l : topology.links())
        if (l.up && board.ports.at(l.port_a).plane == 0 && board.ports.at(l.port_b).plane == 0)
            cables.push_back({l.chip_a, l.port_a, l.chip_b, l.port_b});
    const RouteOf routes = [control](uint32_t a, uint32_t b) {
        const Mesh& m = control->topology().mesh_of(a);
        return control->l0_route(m, a - m.first_chip, b - m.first_chip);
    };
    const ExitOf exits = [control](uint32_t chip, uint32_t to_mesh) { return control->exit_route(chip, to_mesh); };
    return FabricBuilder(board, topology.meshes(), std::move(cables), std::move(spec), routes, exits);
}

}  // namespace weft::transport
