#include "fabric_model/scale_tables.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "common/error.h"
#include "common/names.h"
#include "transport/fabric/routing2d.h"
#include "weft/abi/fabric.h"

namespace weft::fabric_model {
namespace {

using transport::channel_id;
using transport::ControlPlane;
using transport::neighbor;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mb() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return double(r.ru_maxrss) / 1024;  // Linux: KiB
}

uint32_t port_of(const BoardInfo& board, abi::FabricCompass direction, uint32_t plane) {
    const int port = board.port_for(direction, plane);
    if (port < 0)
        throw Error("board " + board.name + " has no " + abi::fabric_letter(direction) + " port on plane " +
                    std::to_string(plane) + " for a grid of meshes");
    return uint32_t(port);
}

// The k-th of `count` points spread evenly along an edge of `length` chips.
uint32_t spread(uint32_t k, uint32_t count, uint32_t length) {
    return uint32_t((2 * uint64_t(k) + 1) * length / (2 * uint64_t(count)));
}

// A mesh's own cables, as the cluster file's generate_links makes them for topology: mesh.
void add_mesh_cables(const Mesh& m, const BoardInfo& board, std::vector<LinkInfo>& links) {
    auto chip = [&](uint32_t x, uint32_t y) { return m.first_chip + x + y * m.width; };
    for (uint32_t p = 0; p < m.planes; ++p) {
        if (m.width > 1) {
            const uint32_t e = port_of(board, abi::kFabricEast, p), w = port_of(board, abi::kFabricWest, p);
            for (uint32_t y = 0; y < m.height; ++y)
                for (uint32_t x = 0; x + 1 < m.width; ++x) links.push_back({chip(x, y), e, chip(x + 1, y), w, true});
        }
        if (m.height > 1) {
            const uint32_t s = port_of(board, abi::kFabricSouth, p), n = port_of(board, abi::kFabricNorth, p);
            for (uint32_t y = 0; y + 1 < m.height; ++y)
                for (uint32_t x = 0; x < m.width; ++x) links.push_back({chip(x, y), s, chip(x, y + 1), n, true});
        }
    }
}

uint32_t step_of(const RouteEntry& e, uint32_t hop) {
    return hop == 0 ? e.first : uint32_t(e.route >> (2 * (hop - 1))) & 3;
}

// The builder's encoding (FabricBuilder::entry_of), 64 bits of later directions wide.
RouteEntry entry_of(const std::string& way, uint32_t from, uint32_t to) {
    if (std::string_view(way) == transport::kNoRoute) return {};  // a chip taken out: no entry
    if (way.size() > kMaxRouteHops)
        throw Error("the route from " + chip_name(from) + " to " + chip_name(to) + " takes " +
                    std::to_string(way.size()) + " hops; a table entry holds " + std::to_string(kMaxRouteHops));
    RouteEntry e;
    e.hops = uint8_t(way.size());
    for (size_t h = 0; h < way.size(); ++h) {
        const uint32_t d = abi::fabric_compass_of(way[h]);
        if (d > 3) throw Error("the route " + way + " from " + chip_name(from) + " has a step '" + way[h] + "'");
        if (h == 0) e.first = uint8_t(d);
        else
            e.route |= uint64_t(d) << (2 * (h - 1));
    }
    return e;
}

std::string letters_of(const RouteEntry& e) {
    std::string way;
    for (uint32_t h = 0; h < e.hops; ++h) way += abi::fabric_letter(step_of(e, h));
    return way;
}

std::string joined(const std::vector<std::string>& cycle) {
    std::string out;
    for (const std::string& c : cycle) out += (out.empty() ? "" : " -> ") + c;
    return out;
}

uint32_t highest_mesh_id(const std::vector<Mesh>& meshes) {
    uint32_t id = 0;
    for (const Mesh& m : meshes) id = std::max(id, m.id);
    return id;
}

// The fabric's channel dependency graph built from the tables chip after
// chip, as fabric_dependencies.cpp's walker builds it from every pair's
// walk: a channel is a chip's cable out in one direction on one VC
// (channel_id), and a packet holding one may wait for the next of its route.
// A packet starts on VC 0 and moves to VC 1 for good where it crosses into
// another mesh (the inter-mesh routers are datelines; kFabricMeshClasses
// keeps the VC through turns). So its graph is:
//  - VC 0 inside each mesh: every chip's L0 routes, and the same routes to
//    exit nodes with one more edge onto the exit cable;
//  - VC 1: from each cable into a mesh, the routes the chip where it enters
//    writes for the packets it brings (every L0 route for those that end in
//    that mesh, the exit toward the next mesh for the others), on to the
//    next exit cable.
// Which packets a cable brings follows the tables, mesh by mesh toward each
// destination mesh (flow_toward): that is what keeps the graph exact
// without walking every pair of chips.
class FabricGraph {
public:
    FabricGraph(const ControlPlane& control, const BoardInfo& board);

    // In chip order, every chip once.
    void add_chip(uint32_t chip, const ChipTable& table);
    // The verdict on the whole graph; `progress` per destination mesh.
    transport::DependencyVerdict verdict(const TablesProgress& progress);
    uint32_t mesh_kinds() const { return uint32_t(kinds_.size()); }

private:
    // A cable from one mesh into another, from its side: chip `chip`'s cable
    // toward `dir` into chip `peer_chip` of mesh `to` (an index into meshes_).
    struct Crossing {
        uint32_t chip, dir, peer_chip, to;
    };
    // The control plane's L0 routes depend on nothing but a mesh's shape and
    // which of its cables are up, so meshes alike in both share one check:
    // the routes of the first (the model) go into the graph for each of
    // them. Proved, not assumed: every other chip's L0 table is compared
    // with the model's, entry for entry, and a difference is an error.
    struct MeshKind {
        uint32_t model = 0;              // mesh index
        std::vector<RouteEntry> l0;      // the model's tables: [from * chips + to]
        std::vector<transport::ChannelBits> vc0_edges;  // its routes' dependencies, by channel numbered in the mesh
    };
    // An exit a chip takes: toward next mesh `next`, over crossing
    // `crossing`, by its L1 entry `entry`.
    struct Exit {
        uint32_t next, crossing;
        RouteEntry entry;
    };
    static constexpr uint32_t kDeliver = UINT32_MAX;  // a cable's packets that end in the mesh it enters

    void add_crossings();
    void start_mesh(uint32_t m);
    void finish_mesh(uint32_t m);
    void add_model_routes(MeshKind& kind);
    uint32_t exit_of(uint32_t chip, const ChipTable& table, const RouteEntry& e, uint32_t to_mesh);
    void flow_toward(uint32_t k, std::vector<uint32_t>& order, std::vector<uint8_t>& arrived);
    void follow(uint32_t crossing, uint32_t next, uint8_t vcs);
    void add_vc1_routes();
    void walk_vc1(uint32_t chip, const RouteEntry& route);
    uint32_t across(uint32_t channel) const;
    uint32_t index_of(uint32_t mesh_id) const { return uint32_t(&topology_.mesh(mesh_id) - meshes_.data()); }
    void depend(uint32_t held, uint32_t dir, uint32_t vc) { graph_[held] |= transport::channel_bit(dir, vc); }

    const ClusterTopology& topology_;
    const transport::MeshRouting& l1_;
    const BoardInfo& board_;
    const std::vector<Mesh>& meshes_;
    std::vector<transport::ChannelBits> graph_;  // per channel, the bits of the channels it waits on
    std::vector<uint8_t> live_;   // per chip: bit d while its plane-0 cable toward d inside its mesh is up
    std::vector<Crossing> crossings_;
    std::vector<std::vector<uint32_t>> out_of_, into_;  // per mesh: its crossings out and in
    std::vector<bool> entry_chip_;                      // per chip: a crossing enters its mesh there
    std::map<std::tuple<uint32_t, uint32_t, std::vector<uint8_t>>, uint32_t> kind_of_cables_;
    std::vector<MeshKind> kinds_;
    std::vector<uint32_t> kind_of_;  // per mesh
    // Per mesh, the exits its chips take (every chip's packets start on VC 0).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> source_exits_;  // (next mesh, crossing)
    std::map<uint32_t, std::vector<Exit>> entry_exits_;                     // per entry chip, its exits
    // Per crossing: what the packets it brings do in the mesh it enters
    // (kDeliver or the next mesh) and the VCs they crossed it on (bit v).
    std::vector<std::vector<std::pair<uint32_t, uint8_t>>> follows_;
    // The mesh being built (add_chip): its index and next mesh toward each.
    uint32_t mesh_ = UINT32_MAX;
    std::vector<uint32_t> next_of_;
    std::vector<std::pair<RouteEntry, uint32_t>> chip_exits_;  // the chip's distinct L1 entries and their crossings
};

FabricGraph::FabricGraph(const ControlPlane& control, const BoardInfo& board)
    : topology_(control.topology()),
      l1_(control.l1()),
      board_(board),
      meshes_(topology_.meshes()),
      graph_(size_t(topology_.chips()) * transport::kChipChannels, 0),
      live_(topology_.chips(), 0),
      entry_chip_(topology_.chips(), false),
      kind_of_(meshes_.size(), UINT32_MAX),
      source_exits_(meshes_.size()) {
    for (const LinkInfo& l : topology_.links()) {
        const PortInfo &a = board_.ports.at(l.port_a), &b = board_.ports.at(l.port_b);
        if (!l.up || a.plane != 0 || b.plane != 0) continue;  // the fabric routes on plane 0 (multi_mesh_fabric)
        if (topology_.mesh_of(l.chip_a).id != topology_.mesh_of(l.chip_b).id) continue;
        live_[l.chip_a] |= uint8_t(1u << a.direction);
        live_[l.chip_b] |= uint8_t(1u << b.direction);
    }
    add_crossings();
}

// The working plane-0 cables between meshes, each leaving one mesh's edge
// on a port facing out and entering the other facing back (the builder
// refuses any other).
void FabricGraph::add_crossings() {
    out_of_.resize(meshes_.size());
    into_.resize(meshes_.size());
    for (uint32_t m = 0; m < meshes_.size(); ++m)
        for (const ExitNode& e : topology_.exit_nodes(meshes_[m].id)) {
            const PortInfo &out = board_.ports.at(e.port), &in = board_.ports.at(e.peer_port);
            if (!e.up || out.plane != 0 || in.plane != 0) continue;
            if (neighbor(meshes_[m], e.chip - meshes_[m].first_chip, out.direction) >= 0 ||
                in.direction != abi::fabric_opposite(out.direction))
                throw Error("the cable from " + chip_name(e.chip) + " (mesh " + std::to_string(meshes_[m].id) +
                            ") to " + chip_name(e.peer_chip) +
                            " must leave the edge of one mesh on a port facing out and enter the other facing back");
            const uint32_t id = uint32_t(crossings_.size());
            crossings_.push_back({e.chip, out.direction, e.peer_chip, index_of(e.peer_mesh)});
            out_of_[m].push_back(id);
            into_[crossings_.back().to].push_back(id);
            entry_chip_[e.peer_chip] = true;
        }
    follows_.resize(crossings_.size());
}

// A mesh's kind (MeshKind): its shape and which of its cables are up.
void FabricGraph::start_mesh(uint32_t m) {
    const Mesh& mesh = meshes_[m];
    std::vector<uint8_t> cables(live_.begin() + mesh.first_chip, live_.begin() + mesh.first_chip + mesh.chips());
    const auto [it, fresh] =
        kind_of_cables_.emplace(std::tuple{mesh.width, mesh.height, std::move(cables)}, uint32_t(kinds_.size()));
    if (fresh) {
        kinds_.emplace_back();
        kinds_.back().model = m;
        kinds_.back().l0.resize(size_t(mesh.chips()) * mesh.chips());
    }
    kind_of_[m] = it->second;
    mesh_ = m;
    next_of_.assign(meshes_.size(), UINT32_MAX);
    if (meshes_.size() > 1)
        for (uint32_t k = 0; k < meshes_.size(); ++k)
            if (k != m) next_of_[k] = index_of(l1_.next_mesh(mesh.id, meshes_[k].id));
}

void FabricGraph::add_chip(uint32_t chip, const ChipTable& table) {
    if (mesh_ == UINT32_MAX || chip == meshes_[mesh_].first_chip + meshes_[mesh_].chips()) {
        if (mesh_ != UINT32_MAX) finish_mesh(mesh_);
        start_mesh(mesh_ == UINT32_MAX ? 0 : mesh_ + 1);
    }
    const Mesh& mesh = meshes_[mesh_];
    const uint32_t local = chip - mesh.first_chip, n = mesh.chips();
    MeshKind& kind = kinds_[kind_of_[mesh_]];
    RouteEntry* model_row = &kind.l0[size_t(local) * n];
    if (kind.model == mesh_) std::copy(table.to.begin(), table.to.end(), model_row);
    else if (!std::equal(table.to.begin(), table.to.end(), model_row))
        throw Error(chip_name(chip) + "'s L0 table differs from that of " +
                    chip_name(meshes_[kind.model].first_chip + local) + " in mesh " +
                    std::to_string(meshes_[kind.model].id) +
                    ", whose mesh has the same shape and cables: the check takes such meshes' tables as one");
    if (meshes_.size() < 2) return;
    chip_exits_.clear();
    for (uint32_t k = 0; k < meshes_.size(); ++k) {
        if (k == mesh_) continue;
        const RouteEntry& e = table.to_mesh.at(meshes_[k].id);
        auto known = std::find_if(chip_exits_.begin(), chip_exits_.end(), [&](auto& x) { return x.first == e; });
        const uint32_t crossing = known != chip_exits_.end() ? known->second : exit_of(chip, table, e, meshes_[k].id);
        if (known == chip_exits_.end()) chip_exits_.push_back({e, crossing});
        if (crossings_[crossing].to != next_of_[k])
            throw Error(chip_name(chip) + "'s L1 entry toward mesh " + std::to_string(meshes_[k].id) +
                        " leaves for mesh " + std::to_string(meshes_[crossings_[crossing].to].id) + ", not for mesh " +
                        std::to_string(meshes_[next_of_[k]].id) + ", the next on its mesh path");
    }
    for (const auto& [entry, crossing] : chip_exits_) {
        source_exits_[mesh_].push_back({crossings_[crossing].to, crossing});
        if (entry_chip_[chip]) entry_exits_[chip].push_back({crossings_[crossing].to, crossing, entry});
    }
}

// The crossing an L1 entry leaves by, proved to be the chip's L0 route to an
// exit node (over cables that are up) and then that node's cable out. Its
// one dependency the L0 routes lack, onto the exit cable, goes in the graph.
uint32_t FabricGraph::exit_of(uint32_t chip, const ChipTable& table, const RouteEntry& e, uint32_t to_mesh) {
    const Mesh& mesh = meshes_[mesh_];
    const std::string what = chip_name(chip) + "'s L1 entry toward mesh " + std::to_string(to_mesh);
    if (e.hops == 0) throw Error(what + " is empty");
    uint32_t at = chip - mesh.first_chip, held = UINT32_MAX;
    for (uint32_t h = 0; h + 1 < e.hops; ++h) {
        const uint32_t d = step_of(e, h);
        const int next = neighbor(mesh, at, abi::FabricCompass(d));
        if (next < 0 || !(live_[mesh.first_chip + at] >> d & 1))
            throw Error(what + " (" + letters_of(e) + ") takes a cable " + chip_name(mesh.first_chip + at) +
                        " does not have up");
        held = channel_id(mesh.first_chip + at, d, 0);
        at = uint32_t(next);
    }
    const uint32_t exit = mesh.first_chip + at, dir = step_of(e, e.hops - 1);
    const auto out = std::find_if(out_of_[mesh_].begin(), out_of_[mesh_].end(),
                                  [&](uint32_t c) { return crossings_[c].chip == exit && crossings_[c].dir == dir; });
    if (out == out_of_[mesh_].end())
        throw Error(what + " (" + letters_of(e) + ") ends on " + chip_name(exit) + "'s cable " +
                    abi::fabric_letter(dir) + ", which is no working cable into another mesh");
    const RouteEntry& inside = table.to.at(at);
    const uint64_t inner_bits = e.hops >= 2 ? (uint64_t(1) << (2 * (e.hops - 2))) - 1 : 0;
    const bool same = e.hops == 1 ? inside.hops == 0
                                  : inside.hops == e.hops - 1 && inside.first == e.first &&
                                        inside.route == (e.route & inner_bits);
    if (!same)
        throw Error(what + " (" + letters_of(e) + ") is not its L0 route to exit node " + chip_name(exit) + " (" +
                    letters_of(inside) + ") and that node's cable");
    if (held != UINT32_MAX) depend(held, dir, 0);
    return *out;
}

void FabricGraph::finish_mesh(uint32_t m) {
    MeshKind& kind = kinds_[kind_of_[m]];
    if (kind.model == m) add_model_routes(kind);
    const uint32_t first = meshes_[m].first_chip;
    for (size_t c = 0; c < kind.vc0_edges.size(); ++c)
        graph_[size_t(first) * transport::kChipChannels + c] |= kind.vc0_edges[c];
    auto& exits = source_exits_[m];
    std::sort(exits.begin(), exits.end());
    exits.erase(std::unique(exits.begin(), exits.end()), exits.end());
}

// The model mesh's L0 routes on VC 0, each proved to arrive over cables that
// are up; a pair without a route exchanges no traffic (the walker's rule).
void FabricGraph::add_model_routes(MeshKind& kind) {
    const Mesh& mesh = meshes_[kind.model];
    const uint32_t n = mesh.chips();
    kind.vc0_edges.assign(size_t(n) * transport::kChipChannels, 0);
    for (uint32_t a = 0; a < n; ++a)
        for (uint32_t b = 0; b < n; ++b) {
            const RouteEntry& e = kind.l0[size_t(a) * n + b];
            uint32_t at = a, held = UINT32_MAX;
            for (uint32_t h = 0; h < e.hops; ++h) {
                const uint32_t d = step_of(e, h);
                const int next = neighbor(mesh, at, abi::FabricCompass(d));
                if (next < 0 || !(live_[mesh.first_chip + at] >> d & 1))
                    throw Error("the L0 route " + letters_of(e) + " from " + chip_name(mesh.first_chip + a) +
                                " takes a cable " + chip_name(mesh.first_chip + at) + " does not have up");
                if (held != UINT32_MAX) kind.vc0_edges[held] |= transport::channel_bit(d, 0);
                held = channel_id(at, d, 0);
                at = uint32_t(next);
            }
            if ((e.hops || a == b) && at != b)
                throw Error("the L0 route " + letters_of(e) + " from " + chip_name(mesh.first_chip + a) + " ends at " +
                            chip_name(mesh.first_chip + at) + ", not " + chip_name(mesh.first_chip + b));
        }
}

// The packets bound for mesh k, mesh by mesh from the farthest: each mesh's
// own chips send on VC 0 by their exits toward the next mesh; the packets
// cables bring in on either VC go on, on VC 1, by the exit of the chip they
// enter at (or, in mesh k, by its L0 routes). A chip's exits are looked up
// by next mesh: the control plane's depend on nothing else, so that finds
// the one; tables with several would get all of theirs, more dependencies,
// never fewer. `order` and `arrived` are the caller's, reused.
void FabricGraph::flow_toward(uint32_t k, std::vector<uint32_t>& order, std::vector<uint8_t>& arrived) {
    const size_t n = meshes_.size();
    std::vector<uint32_t> next(n, UINT32_MAX), hops(n, UINT32_MAX);
    for (uint32_t m = 0; m < n; ++m)
        if (m != k) next[m] = index_of(l1_.next_mesh(meshes_[m].id, meshes_[k].id));
    hops[k] = 0;
    for (uint32_t m = 0; m < n; ++m) {
        order.clear();  // the meshes from m on to one whose distance is known
        for (uint32_t at = m; hops[at] == UINT32_MAX; at = next[at]) {
            if (order.size() > n)
                throw Error("the L1 tables toward mesh " + std::to_string(meshes_[k].id) + " go round in a circle");
            order.push_back(at);
        }
        uint32_t h = order.empty() ? 0 : hops[next[order.back()]];
        for (size_t i = order.size(); i-- > 0;) hops[order[i]] = ++h;
    }
    order.resize(n);
    for (uint32_t m = 0; m < n; ++m) order[m] = m;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return hops[a] > hops[b]; });
    std::fill(arrived.begin(), arrived.end(), 0);
    for (uint32_t m : order) {
        if (m == k) {
            for (uint32_t c : into_[m])
                if (arrived[c]) follow(c, kDeliver, arrived[c]);
            continue;
        }
        for (const auto& [to, c] : source_exits_[m])
            if (to == next[m]) arrived[c] |= 1;
        for (uint32_t c : into_[m]) {
            if (!arrived[c]) continue;
            follow(c, next[m], arrived[c]);
            for (const Exit& e : entry_exits_.at(crossings_[c].peer_chip))
                if (e.next == next[m]) arrived[e.crossing] |= 2;
        }
    }
}

void FabricGraph::follow(uint32_t crossing, uint32_t next, uint8_t vcs) {
    for (auto& [to, seen] : follows_[crossing])
        if (to == next) {
            seen |= vcs;
            return;
        }
    follows_[crossing].push_back({next, vcs});
}

// Where packets enter a mesh they wait, on the cable they came by (on the VC
// they came on), for the first cable of their new route, on VC 1.
void FabricGraph::add_vc1_routes() {
    std::set<std::pair<uint32_t, uint32_t>> walked;  // (entry chip, next mesh or kDeliver)
    for (uint32_t c = 0; c < crossings_.size(); ++c) {
        const Crossing& in = crossings_[c];
        const Mesh& mesh = meshes_[in.to];
        const uint32_t local = in.peer_chip - mesh.first_chip, n = mesh.chips();
        const MeshKind& kind = kinds_[kind_of_[in.to]];
        for (const auto& [next, vcs] : follows_[c]) {
            std::vector<const RouteEntry*> routes;
            if (next == kDeliver)
                for (uint32_t b = 0; b < n; ++b) routes.push_back(&kind.l0[size_t(local) * n + b]);
            else
                for (const Exit& e : entry_exits_.at(in.peer_chip))
                    if (e.next == next) routes.push_back(&e.entry);
            const bool first_time = walked.insert({in.peer_chip, next}).second;
            for (const RouteEntry* r : routes) {
                if (r->hops == 0) continue;
                for (uint32_t vc = 0; vc < 2; ++vc)
                    if (vcs >> vc & 1) depend(channel_id(in.chip, in.dir, vc), r->first, 1);
                if (first_time) walk_vc1(in.peer_chip, *r);
            }
        }
    }
}

// A route from `chip` on VC 1 (its cables were proved when it was added).
void FabricGraph::walk_vc1(uint32_t chip, const RouteEntry& route) {
    const Mesh& mesh = topology_.mesh_of(chip);
    uint32_t at = chip - mesh.first_chip, held = UINT32_MAX;
    for (uint32_t h = 0; h < route.hops; ++h) {
        const uint32_t d = step_of(route, h);
        if (held != UINT32_MAX) depend(held, d, 1);
        held = channel_id(mesh.first_chip + at, d, 1);
        if (h + 1 < route.hops) at = uint32_t(neighbor(mesh, at, abi::FabricCompass(d)));
    }
}

// The chip a channel's cable leads to: a neighbour in the mesh, or across a crossing.
uint32_t FabricGraph::across(uint32_t channel) const {
    const uint32_t chip = transport::channel_chip(channel), dir = transport::channel_dir(channel);
    const Mesh& mesh = topology_.mesh_of(chip);
    const int next = neighbor(mesh, chip - mesh.first_chip, abi::FabricCompass(dir));
    if (next >= 0) return mesh.first_chip + uint32_t(next);
    for (uint32_t c : out_of_[index_of(mesh.id)])
        if (crossings_[c].chip == chip && crossings_[c].dir == dir) return crossings_[c].peer_chip;
    throw Error("a route holds " + transport::channel_name(channel) + ", which has no cable");
}

transport::DependencyVerdict FabricGraph::verdict(const TablesProgress& progress) {
    finish_mesh(mesh_);
    if (meshes_.size() > 1) {
        std::vector<uint32_t> order;
        std::vector<uint8_t> arrived(crossings_.size());
        for (uint32_t k = 0; k < meshes_.size(); ++k) {
            flow_toward(k, order, arrived);
            if (progress && (k + 1) % 64 == 0) progress("check", k + 1, meshes_.size());
        }
        add_vc1_routes();
    }
    transport::DependencyVerdict v;
    for (uint32_t id : transport::find_cycle(graph_, [&](uint32_t c) { return across(c); }))
        v.cycle.push_back(transport::channel_name(id));
    v.acyclic = v.cycle.empty();
    return v;
}

// What the firmware's table (abi::FabricRouteTable) cannot hold.
std::string beyond_abi(const ClusterTopology& topology) {
    std::vector<std::string> over;
    uint32_t most_chips = 0;
    for (const Mesh& m : topology.meshes()) most_chips = std::max(most_chips, m.chips());
    if (most_chips > abi::kFabricMaxMeshChips)
        over.push_back("meshes of " + std::to_string(most_chips) + " chips (it holds " +
                       std::to_string(abi::kFabricMaxMeshChips) + ")");
    const uint32_t top_id = highest_mesh_id(topology.meshes());
    if (topology.meshes().size() > 1 && top_id >= abi::kFabricMaxMeshes)
        over.push_back("mesh ids up to " + std::to_string(top_id) + " (it holds 0-" +
                       std::to_string(abi::kFabricMaxMeshes - 1) + ")");
    std::string out;
    for (const std::string& o : over) out += (out.empty() ? "" : ", ") + o;
    return out;
}

// The fabrics the builders make of a cluster: several meshes run as meshes
// (multi_mesh_fabric), one may be a torus (mesh_fabric).
void check_shapes(const ClusterTopology& topology, const ControlPlane& control) {
    const auto& meshes = topology.meshes();
    for (const Mesh& m : meshes) {
        if (meshes.size() > 1 && m.topology != "mesh")
            throw Error("a fabric of several meshes takes meshes; mesh " + std::to_string(m.id) + " is a " +
                        m.topology);
        if (m.topology != "mesh" && m.topology != "torus")
            throw Error("a 2D fabric needs a cluster of meshes or one torus, not a " + m.topology);
        if (const std::string why = control.unusable(m); !why.empty())
            throw Error("the fabric cannot route around the cables that are down: " + why);
    }
}

// One mesh: the builder's own check (its torus has datelines), on the tables
// (`l0`: [from * chips + to]).
transport::DependencyVerdict check_one_mesh(const Mesh& mesh, const std::vector<RouteEntry>& l0) {
    return transport::check_dependencies(
        mesh,
        [&](uint32_t a, uint32_t b) {
            const RouteEntry& e = l0[size_t(a) * mesh.chips() + b];
            return e.hops == 0 && a != b ? std::string(transport::kNoRoute) : letters_of(e);
        },
        mesh.wraps());
}

}  // namespace

ClusterTopology grid_of_meshes(uint32_t meshes, uint32_t width, uint32_t height, const BoardInfo& board,
                               uint32_t cables) {
    if (meshes == 0 || width == 0 || height == 0)
        throw Error("a grid of meshes needs at least one mesh of at least one chip");
    // Channel ids (chip * kChipChannels + ...) are 32 bits wide.
    if (uint64_t(meshes) * width * height * transport::kChipChannels > (uint64_t(1) << 32))
        throw Error("a grid of " + std::to_string(meshes) + " meshes of " + std::to_string(width) + "x" +
                    std::to_string(height) + " chips is more than 2^28 chips");
    uint32_t columns = 1;
    while (uint64_t(columns) * columns < meshes) ++columns;
    const uint32_t chips = width * height, planes = std::max(1u, board.planes());
    std::vector<Mesh> ms(meshes);
    std::vector<LinkInfo> links;
    for (uint32_t m = 0; m < meshes; ++m) {
        ms[m].id = m;
        ms[m].width = width;
        ms[m].height = height;
        ms[m].topology = "mesh";
        ms[m].planes = planes;
        ms[m].first_chip = m * chips;
        add_mesh_cables(ms[m], board, links);
    }
    auto chip = [&](uint32_t m, uint32_t x, uint32_t y) { return m * chips + x + y * width; };
    const uint32_t e = port_of(board, abi::kFabricEast, 0), w = port_of(board, abi::kFabricWest, 0);
    const uint32_t s = port_of(board, abi::kFabricSouth, 0), n = port_of(board, abi::kFabricNorth, 0);
    for (uint32_t m = 0; m < meshes; ++m) {
        if (m % columns + 1 < columns && m + 1 < meshes)
            for (uint32_t k = 0, count = std::min(cables, height); k < count; ++k) {
                const uint32_t y = spread(k, count, height);
                links.push_back({chip(m, width - 1, y), e, chip(m + 1, 0, y), w, true});
            }
        if (m + columns < meshes)
            for (uint32_t k = 0, count = std::min(cables, width); k < count; ++k) {
                const uint32_t x = spread(k, count, width);
                links.push_back({chip(m, x, height - 1), s, chip(m + columns, x, 0), n, true});
            }
    }
    return ClusterTopology::from_meshes(std::move(ms), std::move(links));
}

void fill_chip_table(const ControlPlane& control, uint32_t chip, ChipTable& table) {
    const ClusterTopology& topology = control.topology();
    const Mesh& own = topology.mesh_of(chip);
    const uint32_t local = chip - own.first_chip;
    table.to.resize(own.chips());
    for (uint32_t i = 0; i < own.chips(); ++i)
        table.to[i] = entry_of(control.l0_route(own, local, i), chip, own.first_chip + i);
    const auto& meshes = topology.meshes();
    table.to_mesh.clear();
    if (meshes.size() < 2) return;
    table.to_mesh.resize(size_t(highest_mesh_id(meshes)) + 1);
    for (const Mesh& other : meshes)
        if (other.id != own.id)
            table.to_mesh[other.id] = entry_of(control.exit_route(chip, other.id), chip, other.first_chip);
}

TablesReport build_and_check_tables(const ClusterTopology& topology, const BoardInfo& board,
                                    const TablesProgress& progress) {
    const Clock::time_point start = Clock::now();
    TablesReport r;
    r.chips = topology.chips();
    r.meshes = uint32_t(topology.meshes().size());
    const ControlPlane control(board, topology);
    check_shapes(topology, control);
    transport::DependencyVerdict v;
    double building = 0;
    ChipTable table;  // one, refilled per chip
    auto fill = [&](uint32_t chip) {
        const Clock::time_point t0 = Clock::now();
        fill_chip_table(control, chip, table);
        building += seconds_since(t0);
        r.entries += table.to.size() + (r.meshes - 1);
        r.table_bytes += 8 + sizeof(RouteEntry) * (table.to.size() + table.to_mesh.size());
        for (const auto* part : {&table.to, &table.to_mesh})
            for (const RouteEntry& e : *part) r.longest_route = std::max<uint32_t>(r.longest_route, e.hops);
    };
    if (r.meshes == 1) {
        const Mesh& mesh = topology.meshes()[0];
        std::vector<RouteEntry> l0;  // a mesh's L0 tables are its chips squared, whatever checks them
        for (uint32_t c = 0; c < r.chips; ++c) fill(c), l0.insert(l0.end(), table.to.begin(), table.to.end());
        v = check_one_mesh(mesh, l0);
        r.mesh_kinds = 1;
    } else {
        FabricGraph graph(control, board);
        for (const Mesh& m : topology.meshes()) {
            for (uint32_t c = m.first_chip; c < m.first_chip + m.chips(); ++c) fill(c), graph.add_chip(c, table);
            if (progress) progress("tables", m.first_chip + m.chips(), r.chips);
        }
        v = graph.verdict(progress);
        r.mesh_kinds = graph.mesh_kinds();
        // The control plane's own criterion for routes between meshes
        // (decide_exits), coarser than the channels: a cycle of meshes fails too.
        if (v.acyclic) v = control.l1().check();
    }
    r.beyond_abi = beyond_abi(topology);
    if (r.beyond_abi.empty()) r.table_bytes = uint64_t(r.chips) * sizeof(abi::FabricRouteTable);
    r.acyclic = v.acyclic;
    r.cycle = joined(v.cycle);
    r.seconds_build = building;
    r.seconds_check = seconds_since(start) - building;
    r.peak_rss_mb = peak_rss_mb();
    return r;
}

}  // namespace weft::fabric_model
