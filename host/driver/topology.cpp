#include "driver/topology.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

#include "common/error.h"
#include "common/names.h"

namespace weft {

Topology::Topology(ClusterTopology cluster)
    : cluster_(std::move(cluster)), n_(cluster_.chips()), adjacent_(n_), cables_(n_) {
    const uint32_t chips = n_;
    if (chips == 0) throw Error("a collective needs at least one chip");
    for (const LinkInfo& l : cluster_.links()) {
        if (!l.up || l.chip_a >= chips || l.chip_b >= chips || l.chip_a == l.chip_b) continue;
        adjacent_[l.chip_a].push_back({l.chip_a, l.port_a, l.chip_b, l.port_b});
        adjacent_[l.chip_b].push_back({l.chip_b, l.port_b, l.chip_a, l.port_a});
    }
    for (uint32_t c = 0; c < n_; ++c) {
        std::sort(adjacent_[c].begin(), adjacent_[c].end(), [](const Hop& x, const Hop& y) {
            return x.to_chip != y.to_chip ? x.to_chip < y.to_chip : x.from_port < y.from_port;
        });
        for (const Hop& h : adjacent_[c]) {
            std::vector<Hop>& between = cables_[c][h.to_chip];
            between.push_back(h);  // adjacent_ is sorted by (to_chip, port)
            max_cables_ = std::max(max_cables_, static_cast<uint32_t>(between.size()));
        }
    }
}

const Topology::Tree& Topology::tree(uint32_t from) const {
    if (auto it = trees_.find(from); it != trees_.end()) return it->second;
    constexpr size_t kTreesKept = 64;  // O(64 chips) of memory, whatever the cluster's size
    if (trees_.size() >= kTreesKept) trees_.clear();
    Tree& t = trees_[from];
    t.into.assign(n_, Hop{});
    t.depth.assign(n_, UINT32_MAX);
    std::deque<uint32_t> q{from};
    t.depth[from] = 0;
    while (!q.empty()) {
        const uint32_t c = q.front();
        q.pop_front();
        for (const Hop& h : adjacent_[c]) {
            if (t.depth[h.to_chip] != UINT32_MAX) continue;
            t.depth[h.to_chip] = t.depth[c] + 1;
            t.into[h.to_chip] = h;
            q.push_back(h.to_chip);
        }
    }
    return t;
}

// Every chip `from` cannot reach, not one pair: the cut as the control
// plane names a mesh's ("chip 0 cannot reach chips 1, 2, ...").
std::string Topology::cut_from(uint32_t from) const {
    const Tree& t = tree(from);
    std::vector<uint32_t> side, rest;
    for (uint32_t c = 0; c < n_; ++c) (t.depth[c] == UINT32_MAX ? rest : side).push_back(c);
    return "the cluster is cut: " + chips_named(side) + " cannot reach " + chips_named(rest) +
           " (no path of working links joins them)";
}

const std::vector<Hop>& Topology::route(uint32_t from, uint32_t to) const {
    if (from >= n_ || to >= n_) throw Error("no chip " + std::to_string(std::max(from, to)) + " in this cluster");
    if (auto it = routes_.find({from, to}); it != routes_.end()) return it->second;
    const Tree& t = tree(from);
    if (t.depth[to] == UINT32_MAX) throw Error(cut_from(from));
    std::vector<Hop> path;
    for (uint32_t c = to; c != from; c = t.into[c].from_chip) path.push_back(t.into[c]);
    std::reverse(path.begin(), path.end());
    return routes_[{from, to}] = std::move(path);
}

uint32_t Topology::distance(uint32_t from, uint32_t to) const {
    if (from >= n_ || to >= n_) throw Error("no chip " + std::to_string(std::max(from, to)) + " in this cluster");
    const uint32_t d = tree(from).depth[to];
    if (d == UINT32_MAX) throw Error(cut_from(from));
    return d;
}

const Hop& Topology::neighbour(uint32_t chip, uint32_t port) const {
    if (chip < n_)
        for (const Hop& h : adjacent_[chip])
            if (h.from_port == port) return h;
    throw Error("chip " + std::to_string(chip) + " port " + std::to_string(port) + " has no working link");
}

const std::vector<Hop>& Topology::cables(uint32_t from, uint32_t to) const {
    static const std::vector<Hop> kNone;
    if (from >= n_ || to >= n_) return kNone;
    const auto it = cables_[from].find(to);
    return it == cables_[from].end() ? kNone : it->second;
}

std::vector<uint32_t> Topology::snake_order(bool wrap) const {
    const auto& meshes = cluster_.meshes();
    if (meshes.size() != 1 || meshes[0].chips() != n_ || meshes[0].width < 2) return {};
    const Mesh& m = meshes[0];
    std::vector<uint32_t> order;
    for (uint32_t y = 0; y < m.height; ++y)
        for (uint32_t i = 0; i < m.width; ++i) order.push_back(cluster_.chip_at(m.id, y % 2 ? m.width - 1 - i : i, y));
    if (wrap && !all_cables(order, wrap)) order = closed_snake(m);
    return all_cables(order, wrap) ? order : std::vector<uint32_t>{};
}

// On a mesh without wrap cables a snake's ends are far apart; when a side is
// even a ring of cables still exists: along row 0, a snake through the other
// rows that keeps off column 0, and back up column 0.
std::vector<uint32_t> Topology::closed_snake(const Mesh& m) const {
    const bool rows_even = m.height % 2 == 0;
    if (!rows_even && m.width % 2 != 0) return {};  // odd chips on a bipartite grid: no ring of cables
    const uint32_t along = rows_even ? m.width : m.height, across = rows_even ? m.height : m.width;
    auto at = [&](uint32_t a, uint32_t b) { return rows_even ? cluster_.chip_at(m.id, a, b) : cluster_.chip_at(m.id, b, a); };
    std::vector<uint32_t> order;
    for (uint32_t a = 0; a < along; ++a) order.push_back(at(a, 0));
    for (uint32_t b = 1; b < across; ++b)
        for (uint32_t i = 0; i + 1 < along; ++i) order.push_back(at(b % 2 ? along - 1 - i : i + 1, b));
    for (uint32_t b = across - 1; b >= 1; --b) order.push_back(at(0, b));
    return order;
}

bool Topology::all_cables(const std::vector<uint32_t>& order, bool wrap) const {
    if (order.size() != n_) return false;
    for (size_t i = 0; i + (wrap ? 0 : 1) < order.size(); ++i)
        if (cables(order[i], order[(i + 1) % order.size()]).empty()) return false;
    return true;
}

double Topology::stretch(const std::vector<uint32_t>& order, bool wrap) const {
    if (order.size() < 2) return 1.0;
    uint64_t hops = 0, edges = 0;
    for (size_t i = 0; i + 1 < order.size(); ++i, ++edges) hops += distance(order[i], order[i + 1]);
    if (wrap && order.size() > 2) hops += distance(order.back(), order.front()), ++edges;
    return double(hops) / double(edges);
}

// A search per step, stopped at the nearest ring with a chip not taken:
// asking every chip's distance each step cost chips squared searches'
// worth, minutes at 16k chips.
std::vector<uint32_t> Topology::nearest_neighbour_order(uint32_t start) const {
    std::vector<uint32_t> order{start};
    std::vector<bool> used(n_, false);
    std::vector<uint32_t> seen(n_, 0);
    used[start] = true;
    while (order.size() < n_) {
        const uint32_t pick = nearest_unused(order.back(), used, seen, uint32_t(order.size()));
        if (pick == n_) throw Error(cut_from(order.back()));
        used[pick] = true;
        order.push_back(pick);
    }
    return order;
}

uint32_t Topology::nearest_unused(uint32_t from, const std::vector<bool>& used, std::vector<uint32_t>& seen,
                                  uint32_t stamp) const {
    std::vector<uint32_t> ring{from}, next;
    seen[from] = stamp;
    while (!ring.empty()) {
        uint32_t pick = n_;
        next.clear();
        for (uint32_t c : ring)
            for (const Hop& h : adjacent_[c]) {
                if (seen[h.to_chip] == stamp) continue;
                seen[h.to_chip] = stamp;
                next.push_back(h.to_chip);
                if (!used[h.to_chip]) pick = std::min(pick, h.to_chip);
            }
        if (pick != n_) return pick;
        ring.swap(next);
    }
    return n_;
}

std::vector<uint32_t> Topology::best_order(bool wrap) const {
    for (uint32_t c = 1; c < n_; ++c) distance(0, c);  // a disconnected cluster fails here, by name
    std::vector<uint32_t> order{0}, best;
    if (n_ <= 10) {
        // Exhaustive with pruning: 9! orders at most, each cut as soon as it cannot win.
        uint64_t best_cost = std::numeric_limits<uint64_t>::max();
        std::vector<bool> used(n_, false);
        used[0] = true;
        std::function<void(uint64_t)> extend = [&](uint64_t cost) {
            if (cost >= best_cost) return;
            if (order.size() == n_) {
                const uint64_t total = cost + (wrap && n_ > 2 ? distance(order.back(), order.front()) : 0);
                if (total < best_cost) best_cost = total, best = order;
                return;
            }
            for (uint32_t c = 1; c < n_; ++c) {
                if (used[c]) continue;
                used[c] = true;
                const uint64_t step = distance(order.back(), c);
                order.push_back(c);
                extend(cost + step);
                order.pop_back();
                used[c] = false;
            }
        };
        extend(0);
        if (!wrap) {
            // An open line need not start at chip 0: try every start, keep the shortest.
            // Greedy from each start: enough to find the cabled line of a line cluster.
            for (uint32_t s = 1; s < n_; ++s) {
                const std::vector<uint32_t> line = nearest_neighbour_order(s);
                if (stretch(line, false) < stretch(best, false)) best = line;
            }
        }
        return best;
    }
    // Larger clusters: a grid's snake where it is all cables (the least
    // stretch there is: 1); else nearest neighbour from chip 0, then 2-opt
    // until no gain.
    if (std::vector<uint32_t> snake = snake_order(wrap); !snake.empty()) return snake;
    order = nearest_neighbour_order(0);
    if (n_ <= kTwoOptChips) two_opt(order, wrap);
    return order;
}

// Reverse a stretch of the order wherever that shortens it, until nothing
// does; each try costs four distances, not a walk of the whole order.
void Topology::two_opt(std::vector<uint32_t>& order, bool wrap) const {
    const size_t n = order.size();
    auto d = [&](size_t i, size_t j) { return int64_t(distance(order[i], order[j % n])); };
    for (bool improved = true; improved;) {
        improved = false;
        for (size_t i = 1; i + 1 < n; ++i)
            for (size_t j = i + 1; j < n; ++j) {
                const bool last = j + 1 == n;
                const int64_t before = d(i - 1, i) + (last && !wrap ? 0 : d(j, j + 1));
                const int64_t after = d(i - 1, j) + (last && !wrap ? 0 : d(i, j + 1));
                if (after >= before) continue;
                std::reverse(order.begin() + static_cast<long>(i), order.begin() + static_cast<long>(j) + 1);
                improved = true;
            }
    }
}

std::vector<uint32_t> Topology::ring_order() const { return best_order(true); }
std::vector<uint32_t> Topology::line_order() const { return best_order(false); }

}  // namespace weft
