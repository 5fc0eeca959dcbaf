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

}  // namespace

MeshRouting::MeshRouting(ClusterTopology topology) : topology_(std::move(topology)) {
    const auto& meshes = topology_.meshes();
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
}

uint32_t MeshRouting::index_of(uint32_t mesh_id) const {
    const auto& meshes = topology_.meshes();
    for (uint32_t i = 0; i < meshes.size(); ++i)
        if (meshes[i].id == mesh_id) return i;
    throw Error("no " + mesh_name(mesh_id) + " in this cluster");
}

bool MeshRouting::climbs(uint32_t from, uint32_t to) const {
    const auto& meshes = topology_.meshes();
    return level_[to] != level_[from] ? level_[to] < level_[from] : meshes[to].id < meshes[from].id;
}

std::vector<uint32_t> MeshRouting::mesh_path(uint32_t from, uint32_t to) const {
    const uint32_t a = index_of(from), b = index_of(to);
    // Breadth-first over (mesh, descended yet): neighbours in ascending order,
    // so the first route found has the lowest next mesh among the shortest.
    const size_t n = next_to_.size();
    std::vector<int64_t> parent(2 * n, -1);
    std::vector<bool> seen(2 * n, false);
    std::deque<uint32_t> q{2 * a};
    seen[2 * a] = true;
    for (; !q.empty(); q.pop_front()) {
        const uint32_t state = q.front(), at = state / 2;
        if (at == b) {
            std::vector<uint32_t> path;
            for (int64_t s = state; s >= 0; s = parent[size_t(s)]) path.push_back(topology_.meshes()[size_t(s) / 2].id);
            std::reverse(path.begin(), path.end());
            return path;
        }
        for (uint32_t next : next_to_[at]) {
            const bool up = climbs(at, next);
            if (up && state % 2) continue;  // no climbing once descended
            const uint32_t s = 2 * next + (up ? 0 : 1);
            if (seen[s]) continue;
            seen[s] = true;
            parent[s] = state;
            q.push_back(s);
        }
    }
    throw Error("no route from " + mesh_name(from) + " to " + mesh_name(to) + ": no working cable joins them");
}

uint32_t MeshRouting::exit_toward(uint32_t chip, uint32_t to) const {
    const Mesh& own = topology_.mesh_of(chip);
    if (own.id == to) throw Error(chip_name(chip) + " is in " + mesh_name(to) + " itself: L0 routes it");
    const uint32_t next = mesh_path(own.id, to).at(1);
    uint32_t best = UINT32_MAX;
    size_t best_hops = SIZE_MAX;
    for (const ExitNode& e : topology_.exit_nodes(own.id)) {
        if (!e.up || e.peer_mesh != next) continue;
        const size_t hops = dor_route(own, chip - own.first_chip, e.chip - own.first_chip).size();
        if (hops < best_hops || (hops == best_hops && e.chip < best)) best = e.chip, best_hops = hops;
    }
    return best;  // mesh_path found a cable to `next`, so one exists
}

DependencyVerdict MeshRouting::check() const {
    const auto& meshes = topology_.meshes();
    return check_mesh_dependencies(static_cast<uint32_t>(meshes.size()), [&](uint32_t a, uint32_t b) {
        std::vector<uint32_t> path;
        for (uint32_t id : mesh_path(meshes[a].id, meshes[b].id)) path.push_back(index_of(id));
        return path;
    });
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
    DependencyVerdict v;
    for (uint64_t c : find_cycle(next))
        v.cycle.push_back(mesh_name(uint32_t(c / meshes)) + " -> " + mesh_name(uint32_t(c % meshes)));
    v.acyclic = v.cycle.empty();
    return v;
}

}  // namespace weft::transport
