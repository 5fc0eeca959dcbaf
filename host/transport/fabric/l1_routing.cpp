#include "transport/fabric/l1_routing.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "common/error.h"
#include "common/names.h"

namespace weft::transport {
namespace {

std::string mesh_name(uint32_t id) { return "mesh " + std::to_string(id); }

// A depth-first search of the graph `next` for a cycle; its nodes in order, or none.
std::vector<uint64_t> find_cycle(const std::map<uint64_t, std::set<uint64_t>>& next) {
    std::map<uint64_t, int> state;  // 1 on the path, 2 done
    std::vector<uint64_t> path;
    std::function<bool(uint64_t)> visit = [&](uint64_t at) {
        state[at] = 1;
        path.push_back(at);
        if (auto it = next.find(at); it != next.end())
            for (uint64_t to : it->second) {
                if (state[to] == 1) {
                    path.erase(path.begin(), std::find(path.begin(), path.end(), to));
                    return true;
                }
                if (state[to] == 0 && visit(to)) return true;
            }
        state[at] = 2;
        path.pop_back();
        return false;
    };
    for (const auto& [node, _] : next)
        if (state[node] == 0 && visit(node)) return path;
    return {};
}

// A channel is a crossing from one mesh into a neighbour: from * meshes + to
// (mesh indices, named as their ids where the meshes are numbered 0..n-1).
DependencyVerdict verdict_of(const std::map<uint64_t, std::set<uint64_t>>& next, uint32_t meshes) {
    DependencyVerdict v;
    for (uint64_t c : find_cycle(next))
        v.cycle.push_back(mesh_name(uint32_t(c / meshes)) + " -> " + mesh_name(uint32_t(c % meshes)));
    v.acyclic = v.cycle.empty();
    return v;
}

}  // namespace

MeshRouting::MeshRouting(ClusterTopology topology) : topology_(std::move(topology)) {
    const auto& meshes = topology_.meshes();
    for (uint32_t i = 0; i < meshes.size(); ++i) by_id_.push_back({meshes[i].id, i});
    // Stable and first of each id: a mesh id twice (an info no bridge writes)
    // answers with its first mesh, as a scan in order would.
    std::stable_sort(by_id_.begin(), by_id_.end(), [](auto& a, auto& b) { return a.first < b.first; });
    by_id_.erase(std::unique(by_id_.begin(), by_id_.end(), [](auto& a, auto& b) { return a.first == b.first; }),
                 by_id_.end());
    next_to_.resize(meshes.size());
    for (uint32_t i = 0; i < meshes.size(); ++i) {
        for (const ExitNode& e : topology_.exit_nodes(meshes[i].id))
            if (e.up) next_to_[i].push_back(index_of(e.peer_mesh));
        std::sort(next_to_[i].begin(), next_to_[i].end());
        next_to_[i].erase(std::unique(next_to_[i].begin(), next_to_[i].end()), next_to_[i].end());
    }
    // Ranks: breadth-first from the lowest mesh id of each component.
    std::vector<uint32_t> by_id(meshes.size());
    for (uint32_t i = 0; i < by_id.size(); ++i) by_id[i] = i;
    std::sort(by_id.begin(), by_id.end(), [&](uint32_t a, uint32_t b) { return meshes[a].id < meshes[b].id; });
    level_.assign(meshes.size(), UINT32_MAX);
    for (uint32_t root : by_id) {
        if (level_[root] != UINT32_MAX) continue;
        level_[root] = 0;
        std::deque<uint32_t> q{root};
        for (; !q.empty(); q.pop_front())
            for (uint32_t n : next_to_[q.front()])
                if (level_[n] == UINT32_MAX) level_[n] = level_[q.front()] + 1, q.push_back(n);
    }
    const size_t n = meshes.size();
    parent_.assign(n * 2 * n, -1);
    reached_.assign(n * n, -1);
    next_.assign(n * n, -1);
    for (uint32_t a = 0; a < n; ++a) search_from(a);
}

// Breadth-first over (mesh, descended yet): neighbours in ascending order, so
// the first route found to a mesh has the lowest next mesh among the
// shortest. The search does not depend on where it is going, so one search
// from a source answers every destination as a search stopping there would.
void MeshRouting::search_from(uint32_t a) {
    const size_t n = next_to_.size();
    int32_t* parent = &parent_[size_t(a) * 2 * n];
    int32_t* reached = &reached_[size_t(a) * n];
    int32_t* next = &next_[size_t(a) * n];
    std::vector<bool> seen(2 * n, false);
    std::vector<int32_t> first(2 * n, -1);  // per state: the mesh its path crosses into first
    std::vector<uint32_t> queue{2 * a};
    seen[2 * a] = true;
    for (size_t head = 0; head < queue.size(); ++head) {
        const uint32_t state = queue[head], at = state / 2;
        if (reached[at] < 0) reached[at] = int32_t(state);  // the first state dequeued there ends its route
        for (uint32_t to : next_to_[at]) {
            const bool up = climbs(at, to);
            if (up && state % 2) continue;  // no climbing once descended
            const uint32_t s = 2 * to + (up ? 0 : 1);
            if (seen[s]) continue;
            seen[s] = true;
            parent[s] = int32_t(state);
            first[s] = state == 2 * a ? int32_t(to) : first[state];
            if (next[to] < 0) next[to] = first[s];  // its first state seen is where its route ends
            queue.push_back(s);
        }
    }
}

uint32_t MeshRouting::index_of(uint32_t mesh_id) const {
    // Ids 0..n-1 (every cluster file's): the id is its place among the ids.
    if (mesh_id < by_id_.size() && by_id_[mesh_id].first == mesh_id) return by_id_[mesh_id].second;
    const auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::pair<uint32_t, uint32_t>{mesh_id, 0});
    if (it != by_id_.end() && it->first == mesh_id) return it->second;
    throw Error("no " + mesh_name(mesh_id) + " in this cluster");
}

bool MeshRouting::climbs(uint32_t from, uint32_t to) const {
    const auto& meshes = topology_.meshes();
    return level_[to] != level_[from] ? level_[to] < level_[from] : meshes[to].id < meshes[from].id;
}

void MeshRouting::no_route(uint32_t a, uint32_t b) const {
    const auto& meshes = topology_.meshes();
    throw Error("no route from " + mesh_name(meshes[a].id) + " to " + mesh_name(meshes[b].id) +
                ": no working cable joins them");
}

std::vector<uint32_t> MeshRouting::mesh_path(uint32_t from, uint32_t to) const {
    const uint32_t a = index_of(from), b = index_of(to);
    const int32_t end = end_state(a, b);
    if (end < 0) no_route(a, b);
    const int32_t* parent = &parent_[size_t(a) * 2 * next_to_.size()];
    std::vector<uint32_t> path;
    for (int32_t s = end; s >= 0; s = parent[s]) path.push_back(topology_.meshes()[size_t(s) / 2].id);
    std::reverse(path.begin(), path.end());
    return path;
}

uint32_t MeshRouting::next_mesh(uint32_t from, uint32_t to) const {
    const uint32_t a = index_of(from), b = index_of(to);
    if (a == b) throw Error(mesh_name(from) + " has no next mesh toward itself");
    const int32_t next = next_[size_t(a) * next_to_.size() + b];
    // Where the route ends a first crossing was recorded, and only there.
    if (end_state(a, b) < 0 || next < 0) no_route(a, b);
    return topology_.meshes()[size_t(next)].id;
}

uint32_t MeshRouting::exit_toward(uint32_t chip, uint32_t to) const {
    const Mesh& own = topology_.mesh_of(chip);
    if (own.id == to) throw Error(chip_name(chip) + " is in " + mesh_name(to) + " itself: L0 routes it");
    const uint32_t next = next_mesh(own.id, to);
    uint32_t best = UINT32_MAX;
    uint32_t best_hops = UINT32_MAX;
    for (const ExitNode& e : topology_.exit_nodes(own.id)) {
        if (!e.up || e.peer_mesh != next) continue;
        const uint32_t hops = dor_hops(own, chip - own.first_chip, e.chip - own.first_chip);
        if (hops < best_hops || (hops == best_hops && e.chip < best)) best = e.chip, best_hops = hops;
    }
    return best;  // mesh_path found a cable to `next`, so one exists
}

// The graph check_mesh_dependencies builds from every pair's path, built
// from the searches instead: a pair's crossings are the states on its tree
// path, so every pair's consecutive crossings are those of the states on
// some pair's path and their parents, each walked once per source.
DependencyVerdict MeshRouting::check() const {
    const size_t n = next_to_.size();
    for (uint32_t a = 0; a < n; ++a)  // the first pair with no route, as asking for every path would find it
        for (uint32_t b = 0; b < n; ++b)
            if (a != b && end_state(a, b) < 0) no_route(a, b);
    std::map<uint64_t, std::set<uint64_t>> next;
    std::vector<bool> on_path(2 * n);
    for (uint32_t a = 0; a < n; ++a) {
        const int32_t* parent = &parent_[size_t(a) * 2 * n];
        std::fill(on_path.begin(), on_path.end(), false);
        on_path[2 * a] = true;
        for (uint32_t b = 0; b < n; ++b) {
            if (b == a) continue;
            for (int32_t s = end_state(a, b); s >= 0 && !on_path[size_t(s)]; s = parent[s]) {
                on_path[size_t(s)] = true;
                const int32_t p = parent[s], g = p >= 0 ? parent[p] : -1;
                if (g < 0) continue;  // the first crossing waits on nothing before it
                next[uint64_t(g / 2) * n + uint64_t(p / 2)].insert(uint64_t(p / 2) * n + uint64_t(s / 2));
            }
        }
    }
    return verdict_of(next, uint32_t(n));
}

DependencyVerdict check_mesh_dependencies(uint32_t meshes, const MeshPathOf& path) {
    // A channel is a crossing from one mesh into a neighbour: from * meshes + to.
    std::map<uint64_t, std::set<uint64_t>> next;
    for (uint32_t a = 0; a < meshes; ++a)
        for (uint32_t b = 0; b < meshes; ++b) {
            if (a == b) continue;
            const std::vector<uint32_t> p = path(a, b);
            for (size_t i = 0; i + 2 < p.size(); ++i)
                next[uint64_t(p[i]) * meshes + p[i + 1]].insert(uint64_t(p[i + 1]) * meshes + p[i + 2]);
        }
    return verdict_of(next, meshes);
}

}  // namespace weft::transport
