#include "ccl/topology.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

#include "common/error.h"

namespace weft::ccl {

Topology::Topology(ClusterTopology cluster) : cluster_(std::move(cluster)), n_(cluster_.chips()), adjacent_(n_) {
    const uint32_t chips = n_;
    if (chips == 0) throw Error("a collective needs at least one chip");
    for (const LinkInfo& l : cluster_.links()) {
        if (!l.up || l.chip_a >= chips || l.chip_b >= chips || l.chip_a == l.chip_b) continue;
        adjacent_[l.chip_a].push_back({l.chip_a, l.port_a, l.chip_b, l.port_b});
        adjacent_[l.chip_b].push_back({l.chip_b, l.port_b, l.chip_a, l.port_a});
    }
    for (auto& a : adjacent_)
        std::sort(a.begin(), a.end(), [](const Hop& x, const Hop& y) {
            return x.to_chip != y.to_chip ? x.to_chip < y.to_chip : x.from_port < y.from_port;
        });
    cables_.assign(n_, std::vector<std::vector<Hop>>(n_));
    for (uint32_t c = 0; c < n_; ++c)
        for (const Hop& h : adjacent_[c]) {
            std::vector<Hop>& between = cables_[c][h.to_chip];
            between.push_back(h);  // adjacent_ is sorted by (to_chip, port)
            max_cables_ = std::max(max_cables_, static_cast<uint32_t>(between.size()));
        }
    // BFS from every chip: N is small (a cluster file caps it), and routes are asked for often.
    routes_.assign(n_, std::vector<std::vector<Hop>>(n_));
    for (uint32_t s = 0; s < n_; ++s) {
        std::vector<int> via(n_, -1);
        std::vector<Hop> how(n_);
        std::deque<uint32_t> q{s};
        via[s] = static_cast<int>(s);
        while (!q.empty()) {
            const uint32_t c = q.front();
            q.pop_front();
            for (const Hop& h : adjacent_[c]) {
                if (via[h.to_chip] >= 0) continue;
                via[h.to_chip] = static_cast<int>(c);
                how[h.to_chip] = h;
                q.push_back(h.to_chip);
            }
        }
        for (uint32_t t = 0; t < n_; ++t) {
            if (t == s || via[t] < 0) continue;
            std::vector<Hop> path;
            for (uint32_t c = t; c != s; c = how[c].from_chip) path.push_back(how[c]);
            std::reverse(path.begin(), path.end());
            routes_[s][t] = std::move(path);
        }
    }
}

const std::vector<Hop>& Topology::route(uint32_t from, uint32_t to) const {
    if (from >= n_ || to >= n_) throw Error("no chip " + std::to_string(std::max(from, to)) + " in this cluster");
    if (from != to && routes_[from][to].empty())
        throw Error("chip " + std::to_string(from) + " cannot reach chip " + std::to_string(to) +
                    ": no path of working links joins them");
    return routes_[from][to];
}

uint32_t Topology::distance(uint32_t from, uint32_t to) const { return static_cast<uint32_t>(route(from, to).size()); }

const Hop& Topology::neighbour(uint32_t chip, uint32_t port) const {
    if (chip < n_)
        for (const Hop& h : adjacent_[chip])
            if (h.from_port == port) return h;
    throw Error("chip " + std::to_string(chip) + " port " + std::to_string(port) + " has no working link");
}

const std::vector<Hop>& Topology::cables(uint32_t from, uint32_t to) const {
    static const std::vector<Hop> kNone;
    return from < n_ && to < n_ ? cables_[from][to] : kNone;
}

double Topology::stretch(const std::vector<uint32_t>& order, bool wrap) const {
    if (order.size() < 2) return 1.0;
    uint64_t hops = 0, edges = 0;
    for (size_t i = 0; i + 1 < order.size(); ++i, ++edges) hops += distance(order[i], order[i + 1]);
    if (wrap && order.size() > 2) hops += distance(order.back(), order.front()), ++edges;
    return double(hops) / double(edges);
}

std::vector<uint32_t> Topology::nearest_neighbour_order(uint32_t start) const {
    std::vector<uint32_t> order{start};
    std::vector<bool> used(n_, false);
    used[start] = true;
    while (order.size() < n_) {
        uint32_t pick = n_, d = std::numeric_limits<uint32_t>::max();
        for (uint32_t c = 0; c < n_; ++c)
            if (!used[c] && distance(order.back(), c) < d) d = distance(order.back(), c), pick = c;
        used[pick] = true;
        order.push_back(pick);
    }
    return order;
}

std::vector<uint32_t> Topology::best_order(bool wrap) const {
    for (uint32_t c = 1; c < n_; ++c) route(0, c);  // a disconnected cluster fails here, by name
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
    // Larger clusters: nearest neighbour from chip 0, then 2-opt until no gain.
    order = nearest_neighbour_order(0);
    for (bool improved = true; improved;) {
        improved = false;
        for (size_t i = 1; i + 1 < order.size(); ++i)
            for (size_t j = i + 1; j < order.size(); ++j) {
                std::vector<uint32_t> t = order;
                std::reverse(t.begin() + static_cast<long>(i), t.begin() + static_cast<long>(j) + 1);
                if (stretch(t, wrap) + 1e-12 < stretch(order, wrap)) order = t, improved = true;
            }
    }
    return order;
}

std::vector<uint32_t> Topology::ring_order() const { return best_order(true); }
std::vector<uint32_t> Topology::line_order() const { return best_order(false); }

}  // namespace weft::ccl
