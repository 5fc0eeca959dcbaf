#include "transport/fabric/control_plane.h"

#include <algorithm>
#include <deque>
#include <string_view>

#include "common/error.h"
#include "common/names.h"
#include "weft/abi/fabric.h"

namespace weft::transport {
namespace {

// Steps along one dimension from a to b of `size`: both ways on a ring, shorter first.
std::vector<std::string> ways(uint32_t a, uint32_t b, uint32_t size, bool wrap, char plus, char minus) {
    if (a == b) return {""};
    const uint32_t ahead = (b + size - a) % size, behind = (a + size - b) % size;
    if (!wrap) return {b > a ? std::string(b - a, plus) : std::string(a - b, minus)};
    std::vector<std::string> out{std::string(ahead, plus), std::string(behind, minus)};
    if (behind < ahead) std::swap(out[0], out[1]);
    return out;
}

std::vector<uint32_t> mesh_chips(const std::set<uint32_t>& local, const Mesh& m) {
    std::vector<uint32_t> out;
    for (uint32_t c : local) out.push_back(m.first_chip + c);
    return out;
}

}  // namespace

ControlPlane::ControlPlane(const BoardInfo& board, ClusterTopology topology, uint32_t plane, bool relays)
    : board_(board), plane_(plane), relays_(relays), topology_(std::move(topology)), l1_(topology_) {
    index_cables();
    for (const LinkInfo& l : topology_.links())
        if (!l.up) dead_.insert({l.chip_a, l.port_a}), dead_.insert({l.chip_b, l.port_b});
    for (const Mesh& m : topology_.meshes())
        if (std::any_of(dead_.begin(), dead_.end(), [&](const auto& c) {
                return topology_.mesh_of(c.first).id == m.id && board_.ports.at(c.second).plane == plane_;
            }))
            reroute_mesh(m, RerouteDecision{});
}

void ControlPlane::index_cables() {
    const std::vector<LinkInfo>& links = topology_.links();
    auto ends = [](const LinkInfo& l) { return l.chip_a == l.chip_b ? 1 : 2; };
    cable_start_.assign(size_t(topology_.chips()) + 1, 0);
    for (const LinkInfo& l : links)
        for (int e = 0; e < ends(l); ++e) ++cable_start_[(e ? l.chip_b : l.chip_a) + 1];
    for (size_t c = 1; c < cable_start_.size(); ++c) cable_start_[c] += cable_start_[c - 1];
    cable_index_.resize(cable_start_.back());
    std::vector<uint32_t> filled(cable_start_.begin(), cable_start_.end() - 1);
    for (uint32_t i = 0; i < links.size(); ++i)
        for (int e = 0; e < ends(links[i]); ++e) cable_index_[filled[e ? links[i].chip_b : links[i].chip_a]++] = i;
}

std::string ControlPlane::unusable(const Mesh& mesh) const {
    for (const auto& [id, why] : unusable_)
        if (id == mesh.id) return why;
    return "";
}

const LinkInfo* ControlPlane::link_at(uint32_t chip, uint32_t port) const {
    for (const LinkInfo& l : topology_.links())
        if ((l.chip_a == chip && l.port_a == port) || (l.chip_b == chip && l.port_b == port)) return &l;
    return nullptr;
}

std::string ControlPlane::l0_route(const Mesh& mesh, uint32_t from, uint32_t to) const {
    for (const auto& [id, routes] : rerouted_)
        if (id == mesh.id) {
            if (from >= mesh.chips() || to >= mesh.chips()) break;
            return routes[size_t(from) * mesh.chips() + to];
        }
    return dor_route(mesh, from, to);
}

std::string ControlPlane::exit_route(uint32_t chip, uint32_t to_mesh) const {
    return exit_route(chip, to_mesh, [&](uint32_t from, uint32_t to) {
        const Mesh& own = topology_.mesh_of(from);
        return l0_route(own, from - own.first_chip, to - own.first_chip);
    });
}

std::string ControlPlane::exit_route(uint32_t chip, uint32_t to_mesh,
                                     const std::function<std::string(uint32_t from, uint32_t to)>& route) const {
    const Mesh& own = topology_.mesh_of(chip);
    const uint32_t exit = l1_.exit_toward(chip, to_mesh);
    const uint32_t next = l1_.next_mesh(own.id, to_mesh);
    const std::string inside = route(chip, exit);
    if (std::string_view(inside) == kNoRoute) return kNoRoute;
    for (const ExitNode& e : topology_.exit_nodes(own.id))
        if (e.chip == exit && e.up && e.peer_mesh == next)
            return inside + abi::fabric_letter(board_.ports.at(e.port).direction);
    throw Error(chip_name(exit) + " has no working cable into mesh " + std::to_string(next));
}

// Walks `route` from `from` (numbered in the mesh): does it take a cable that is down?
bool ControlPlane::crosses_dead(const Mesh& mesh, uint32_t from, const std::string& route) const {
    uint32_t at = from;
    for (char letter : route) {
        const auto dir = static_cast<abi::FabricCompass>(abi::fabric_compass_of(letter));
        const int next = neighbor(mesh, at, dir);
        if (next < 0) return true;
        const uint32_t chip = mesh.first_chip + at, peer = mesh.first_chip + uint32_t(next);
        bool alive = false;  // some cable of our plane that way, up
        for (uint32_t i = cable_start_[chip]; i < cable_start_[chip + 1]; ++i) {
            const LinkInfo& l = topology_.links()[cable_index_[i]];
            const bool here = l.chip_a == chip && l.chip_b == peer, there = l.chip_b == chip && l.chip_a == peer;
            const uint32_t port = here ? l.port_a : l.port_b;
            if ((here || there) && board_.ports.at(port).direction == dir && board_.ports.at(port).plane == plane_ &&
                !dead_.count({chip, port}))
                alive = true;
        }
        if (!alive) return true;
        at = uint32_t(next);
    }
    return false;
}

// Dimension-ordered first (X then Y, on a torus either way round each ring,
// which keeps the tables' turn rules), then Y then X, the shortest that
// avoids the dead cables; else any shortest way round them, found
// breadth-first.
std::string ControlPlane::route_avoiding(const Mesh& mesh, uint32_t from, uint32_t to) const {
    const uint32_t w = mesh.width;
    // X first (the tables' order), the way round each ring free; only then Y first.
    std::vector<std::string> x_first, y_first;
    for (const std::string& x : ways(from % w, to % w, w, mesh.wraps(), 'E', 'W'))
        for (const std::string& y : ways(from / w, to / w, mesh.height, mesh.wraps(), 'S', 'N'))
            x_first.push_back(x + y), y_first.push_back(y + x);
    auto shortest_first = [](std::vector<std::string>& v) {
        std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
    };
    shortest_first(x_first);
    shortest_first(y_first);
    for (const auto* tries : {&x_first, &y_first})
        for (const std::string& t : *tries)
            if (!crosses_dead(mesh, from, t)) return t;
    std::vector<std::string> via(mesh.chips());
    std::vector<bool> seen(mesh.chips(), false);
    std::deque<uint32_t> q{from};
    seen[from] = true;
    for (; !q.empty(); q.pop_front())
        for (char letter : std::string("ESWN")) {
            const int next = neighbor(mesh, q.front(), static_cast<abi::FabricCompass>(abi::fabric_compass_of(letter)));
            const std::string step(1, letter);
            if (next < 0 || seen[size_t(next)] || crosses_dead(mesh, q.front(), step)) continue;
            seen[size_t(next)] = true;
            via[size_t(next)] = via[q.front()] + step;
            q.push_back(uint32_t(next));
        }
    return seen[to] ? via[to] : "?";
}

std::vector<std::string> ControlPlane::routes_avoiding(const Mesh& mesh, std::set<uint32_t>* unreachable) const {
    const uint32_t n = mesh.chips();
    std::vector<std::string> routes(size_t(n) * n);
    for (uint32_t a = 0; a < n; ++a)
        for (uint32_t b = 0; b < n; ++b) {
            if (a == b) continue;
            if (removed(mesh.first_chip + a) || removed(mesh.first_chip + b)) {
                routes[size_t(a) * n + b] = kNoRoute;
                continue;
            }
            routes[size_t(a) * n + b] = route_avoiding(mesh, a, b);
            if (routes[size_t(a) * n + b] == "?") unreachable->insert(b);
        }
    return routes;
}

// Up*/down* inside the mesh, over its live cables: chips ranked by their
// distance from chip 0, then number; a route climbs, then descends, never
// climbs again, so no set of them can wait in a circle. Longer than the
// dimension order, for the meshes where mixing orders could deadlock.
std::vector<std::string> ControlPlane::updown_routes(const Mesh& mesh) const {
    const uint32_t n = mesh.chips();
    auto step = [&](uint32_t at, char letter) {
        const int next = neighbor(mesh, at, static_cast<abi::FabricCompass>(abi::fabric_compass_of(letter)));
        return next < 0 || crosses_dead(mesh, at, std::string(1, letter)) ? -1 : next;
    };
    uint32_t root = 0;  // the lowest chip still in the fabric
    while (root + 1 < n && removed(mesh.first_chip + root)) ++root;
    std::vector<uint32_t> level(n, UINT32_MAX);
    level[root] = 0;
    for (std::deque<uint32_t> q{root}; !q.empty(); q.pop_front())
        for (char letter : std::string("ESWN"))
            if (const int next = step(q.front(), letter); next >= 0 && level[size_t(next)] == UINT32_MAX)
                level[size_t(next)] = level[q.front()] + 1, q.push_back(uint32_t(next));
    auto climbs = [&](uint32_t a, uint32_t b) { return level[b] != level[a] ? level[b] < level[a] : b < a; };
    std::vector<std::string> routes(size_t(n) * n, "?");
    for (uint32_t from = 0; from < n; ++from) {
        std::vector<std::string> via(2 * size_t(n));  // (chip, descended yet)
        std::vector<bool> seen(2 * size_t(n), false);
        seen[2 * from] = true;
        for (std::deque<uint32_t> q{2 * from}; !q.empty(); q.pop_front()) {
            const uint32_t state = q.front(), at = state / 2;
            if (routes[size_t(from) * n + at] == "?") routes[size_t(from) * n + at] = via[state];
            for (char letter : std::string("ESWN")) {
                const int next = step(at, letter);
                if (next < 0) continue;
                const bool up = climbs(at, uint32_t(next));
                if (up && state % 2) continue;
                const uint32_t s = 2 * uint32_t(next) + (up ? 0 : 1);
                if (seen[s]) continue;
                seen[s] = true;
                via[s] = via[state] + letter;
                q.push_back(s);
            }
        }
    }
    return routes;
}

RerouteDecision ControlPlane::reroute_mesh(const Mesh& mesh, RerouteDecision d) {
    d = decide_tables(mesh, d);
    unusable_.erase(std::remove_if(unusable_.begin(), unusable_.end(), [&](auto& u) { return u.first == mesh.id; }),
                    unusable_.end());
    if (d.kind == RerouteDecision::kCutOff || d.kind == RerouteDecision::kRefused)
        unusable_.push_back({mesh.id, d.why});
    return d;
}

RerouteDecision ControlPlane::decide_tables(const Mesh& mesh, RerouteDecision d) {
    std::set<uint32_t> cut;
    std::vector<std::string> routes = routes_avoiding(mesh, &cut);
    if (!cut.empty()) {
        d.kind = RerouteDecision::kCutOff;
        d.unreachable = mesh_chips(cut, mesh);
        uint32_t first = 0;  // the mesh's first chip still in the fabric
        while (first + 1 < mesh.chips() && removed(mesh.first_chip + first)) ++first;
        std::set<uint32_t> with_first, rest;  // the chips it still reaches, and the others
        for (uint32_t b = 0; b < mesh.chips(); ++b)
            if (!removed(mesh.first_chip + b))
                (routes[size_t(first) * mesh.chips() + b] != "?" ? with_first : rest).insert(b);
        d.why = "mesh " + std::to_string(mesh.id) + " is cut: " + chips_named(mesh_chips(with_first, mesh)) +
                " cannot reach " + chips_named(mesh_chips(rest, mesh));
        return d;
    }
    const uint32_t n = mesh.chips();
    const auto route_of = [&](uint32_t a, uint32_t b) { return routes[size_t(a) * n + b]; };
    DependencyVerdict v = check_dependencies(mesh, route_of, mesh.wraps());
    // Mixed orders can wait in a circle: up*/down* cannot, whatever VCs its
    // packets take on a torus (any cycle of its channels would be a cycle of
    // cables turning only as up*/down* routes turn, and there is none).
    if (!v.acyclic) {
        routes = updown_routes(mesh);
        v = check_dependencies(mesh, route_of, mesh.wraps());
    }
    const auto longest =
        std::max_element(routes.begin(), routes.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
    // A fabric routes on past a header's hops only where its own routes
    // needed it (abi::kFabricLongRoutes): a mesh whose routes all fit one.
    if (longest != routes.end() && longest->size() > abi::kFabricMaxRouteHops &&
        dor_diameter(mesh) <= abi::kFabricMaxRouteHops) {
        d.kind = RerouteDecision::kRefused;
        d.why = "a route around it takes " + std::to_string(longest->size()) + " hops; a packet header holds " +
                std::to_string(abi::kFabricMaxRouteHops);
        return d;
    }
    if (!v.acyclic) {
        d.kind = RerouteDecision::kRefused;
        d.why = "every route around it found could deadlock: " + v.cycle.front() + " waits on itself";
        return d;
    }
    for (uint32_t a = 0; a < n; ++a)
        for (uint32_t b = 0; b < n; ++b)
            if (route_of(a, b) != l0_route(mesh, a, b))
                d.changed.push_back(std::to_string(a) + "->" + std::to_string(b) + ": " + route_of(a, b) + " (was " +
                                    l0_route(mesh, a, b) + ")");
    rerouted_.erase(std::remove_if(rerouted_.begin(), rerouted_.end(), [&](auto& r) { return r.first == mesh.id; }),
                    rerouted_.end());
    rerouted_.push_back({mesh.id, std::move(routes)});
    ++epoch_;
    d.kind = RerouteDecision::kNewTables;
    d.why = "new tables for mesh " + std::to_string(mesh.id) + " (epoch " + std::to_string(epoch_) +
            "): " + std::to_string(d.changed.size()) + " route(s) changed";
    return d;
}

RerouteDecision ControlPlane::cable_down(uint32_t chip, uint32_t port) {
    const LinkInfo* l = link_at(chip, port);
    if (!l) throw Error(chip_name(chip) + " port " + std::to_string(port) + " has no cable");
    RerouteDecision d;
    d.chip = chip;
    d.port = port;
    const uint32_t peer = l->chip_a == chip ? l->chip_b : l->chip_a;
    const uint32_t peer_port = l->chip_a == chip ? l->port_b : l->port_a;
    if (dead_.count({chip, port})) {
        d.why = "already down";
        return d;
    }
    dead_.insert({chip, port});
    dead_.insert({peer, peer_port});
    const PortInfo& way = board_.ports.at(port);
    for (const LinkInfo& o : topology_.links()) {
        const bool here = o.chip_a == chip && o.chip_b == peer, there = o.chip_b == chip && o.chip_a == peer;
        const uint32_t mine = here ? o.port_a : o.port_b;
        if (relays_ && (here || there) && mine != port && board_.ports.at(mine).direction == way.direction &&
            !dead_.count({chip, mine})) {
            d.kind = RerouteDecision::kFallback;
            d.fallback_port = mine;
            d.why = "plane " + std::to_string(board_.ports.at(mine).plane) + "'s cable on port " +
                    std::to_string(mine) + " takes its traffic";
            return d;
        }
    }
    const Mesh& mesh = topology_.mesh_of(chip);
    if (topology_.mesh_of(peer).id != mesh.id) {
        std::vector<LinkInfo> links = topology_.links();
        links[size_t(l - topology_.links().data())].up = false;  // as cable_up sets it back
        topology_ = topology_.with_links(std::move(links));
        l1_ = MeshRouting(topology_);
        ++epoch_;
        return decide_exits(d);
    }
    return reroute_mesh(mesh, d);
}

// Between meshes: every mesh must still reach every other over the live
// cables, by routes whose mesh-level graph has no cycle.
RerouteDecision ControlPlane::decide_exits(RerouteDecision d) {
    const std::vector<Mesh>& meshes = topology_.meshes();
    for (const Mesh& a : meshes)
        for (const Mesh& b : meshes) {
            if (a.id == b.id) continue;
            try {
                l1_.mesh_path(a.id, b.id);
            } catch (const Error&) {
                d.kind = RerouteDecision::kCutOff;
                for (uint32_t i = 0; i < b.chips(); ++i) d.unreachable.push_back(b.first_chip + i);
                d.why = "mesh " + std::to_string(b.id) + " is cut off from mesh " + std::to_string(a.id) +
                        ": no working cable leads there (" + chips_named(d.unreachable) + ")";
                return d;
            }
        }
    if (const DependencyVerdict v = l1_.check(); !v.acyclic) {
        d.kind = RerouteDecision::kRefused;
        d.why = "routes between meshes without it could deadlock";
        return d;
    }
    d.kind = RerouteDecision::kNewTables;
    d.why = "new L1 exits between meshes (epoch " + std::to_string(epoch_) + ")";
    return d;
}

// The chips' cables die with them; an exit node among them takes its cables
// between meshes away too, so the L1 exits are chosen again.
RerouteDecision ControlPlane::remove_chips(uint32_t mesh_id, const std::vector<uint32_t>& chips) {
    const Mesh& mesh = topology_.mesh(mesh_id);
    if (std::all_of(chips.begin(), chips.end(), [&](uint32_t c) { return removed(c); }))
        throw Error("those chips of mesh " + std::to_string(mesh_id) + " are out already");
    uint32_t left = 0;
    for (uint32_t c = mesh.first_chip; c < mesh.first_chip + mesh.chips(); ++c)
        left += !removed(c) && std::find(chips.begin(), chips.end(), c) == chips.end();
    if (left == 0) throw Error("taking them out would leave mesh " + std::to_string(mesh_id) + " no chip");
    for (uint32_t c : chips) removed_.insert(c);
    std::vector<LinkInfo> links = topology_.links();
    bool exits_changed = false;
    for (LinkInfo& l : links)
        if (removed(l.chip_a) || removed(l.chip_b)) {
            dead_.insert({l.chip_a, l.port_a}), dead_.insert({l.chip_b, l.port_b});
            exits_changed |= l.up && topology_.mesh_of(l.chip_a).id != topology_.mesh_of(l.chip_b).id;
            l.up = false;
        }
    topology_ = topology_.with_links(std::move(links));  // a Mesh& from before would dangle: by id from here
    RerouteDecision d;
    d.chip = chips.empty() ? 0 : chips.front();
    d = reroute_mesh(topology_.mesh(mesh_id), d);
    if (!exits_changed || d.kind == RerouteDecision::kCutOff || d.kind == RerouteDecision::kRefused) return d;
    l1_ = MeshRouting(topology_);
    ++epoch_;
    return decide_exits(d);
}

RerouteDecision ControlPlane::remove_row(uint32_t mesh_id, uint32_t y) { return remove_line(mesh_id, true, y); }

RerouteDecision ControlPlane::remove_column(uint32_t mesh_id, uint32_t x) { return remove_line(mesh_id, false, x); }

// A row (y = at) or a column (x = at) of the mesh.
RerouteDecision ControlPlane::remove_line(uint32_t mesh_id, bool row, uint32_t at) {
    const Mesh& m = topology_.mesh(mesh_id);
    const uint32_t lines = row ? m.height : m.width, along = row ? m.width : m.height;
    const std::string what = row ? "row" : "column";
    if (at >= lines)
        throw Error("mesh " + std::to_string(mesh_id) + " has no " + what + " " + std::to_string(at) + " (" + what +
                    "s 0-" + std::to_string(lines - 1) + ")");
    std::vector<uint32_t> chips;
    for (uint32_t i = 0; i < along; ++i)
        chips.push_back(row ? topology_.chip_at(mesh_id, i, at) : topology_.chip_at(mesh_id, at, i));
    return remove_chips(mesh_id, chips);
}

void ControlPlane::cable_up(uint32_t chip, uint32_t port) {
    const LinkInfo* l = link_at(chip, port);
    if (!l) throw Error(chip_name(chip) + " port " + std::to_string(port) + " has no cable");
    dead_.erase({l->chip_a, l->port_a});
    dead_.erase({l->chip_b, l->port_b});
    std::vector<LinkInfo> links = topology_.links();
    links[size_t(l - topology_.links().data())].up = true;
    topology_ = topology_.with_links(std::move(links));
    l1_ = MeshRouting(topology_);
    const Mesh& mesh = topology_.mesh_of(chip);
    const bool any_dead = std::any_of(dead_.begin(), dead_.end(),
                                      [&](const auto& c) { return topology_.mesh_of(c.first).id == mesh.id; });
    rerouted_.erase(std::remove_if(rerouted_.begin(), rerouted_.end(), [&](auto& r) { return r.first == mesh.id; }),
                    rerouted_.end());
    if (any_dead) reroute_mesh(mesh, RerouteDecision{});
    ++epoch_;
}

}  // namespace weft::transport
