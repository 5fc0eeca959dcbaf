#include "transport/fabric/routing2d.h"

#include <map>
#include <set>
#include <tuple>

#include "common/error.h"

namespace weft::transport {
namespace {

std::string chip_name(uint32_t chip) { return "chip " + std::to_string(chip); }

// Steps along one dimension of `size` from a to b: the direction letter and how many.
std::pair<char, uint32_t> steps(uint32_t a, uint32_t b, uint32_t size, bool wrap, char plus, char minus) {
    const uint32_t ahead = (b + size - a) % size, behind = (a + size - b) % size;
    if (!wrap) return b >= a ? std::pair{plus, b - a} : std::pair{minus, a - b};
    return ahead <= behind ? std::pair{plus, ahead} : std::pair{minus, behind};
}

struct Channel {
    uint32_t chip;
    char dir;
    uint32_t vc;
    bool operator<(const Channel& o) const { return std::tie(chip, dir, vc) < std::tie(o.chip, o.dir, o.vc); }
    std::string name() const { return chip_name(chip) + " " + dir + " vc" + std::to_string(vc); }
};

// The chip a cable leads to, and whether it is its dimension's wrap cable.
std::pair<uint32_t, bool> step(const Mesh2D& m, uint32_t chip, char dir) {
    const uint32_t x = chip % m.width, y = chip / m.width;
    auto moved = [&](uint32_t nx, uint32_t ny) { return ny * m.width + nx; };
    switch (dir) {
        case 'E':
            if (x + 1 < m.width) return {moved(x + 1, y), false};
            if (m.torus && m.width > 1) return {moved(0, y), true};
            break;
        case 'W':
            if (x > 0) return {moved(x - 1, y), false};
            if (m.torus && m.width > 1) return {moved(m.width - 1, y), true};
            break;
        case 'S':
            if (y + 1 < m.height) return {moved(x, y + 1), false};
            if (m.torus && m.height > 1) return {moved(x, 0), true};
            break;
        case 'N':
            if (y > 0) return {moved(x, y - 1), false};
            if (m.torus && m.height > 1) return {moved(x, m.height - 1), true};
            break;
    }
    throw Error("a route leaves the mesh: " + chip_name(chip) + " has no cable " + dir);
}

}  // namespace

int neighbor(const Mesh2D& mesh, uint32_t chip, char dir, bool* wrap) {
    if (chip >= mesh.chips()) return -1;
    try {
        const auto [to, wraps] = step(mesh, chip, dir);
        if (wrap) *wrap = wraps;
        return static_cast<int>(to);
    } catch (const Error&) {
        return -1;
    }
}

namespace {

bool horizontal(char dir) { return dir == 'E' || dir == 'W'; }

// Depth-first search for a cycle; on finding one, its channels in order.
bool find_cycle(const std::map<Channel, std::set<Channel>>& edges, const Channel& at, std::map<Channel, int>& state,
                std::vector<Channel>& path, std::vector<Channel>& cycle) {
    state[at] = 1;
    path.push_back(at);
    if (auto it = edges.find(at); it != edges.end())
        for (const Channel& next : it->second) {
            const int s = state[next];
            if (s == 1) {
                auto from = path.begin();
                while (!(!(*from < next) && !(next < *from))) ++from;
                cycle.assign(from, path.end());
                return true;
            }
            if (s == 0 && find_cycle(edges, next, state, path, cycle)) return true;
        }
    path.pop_back();
    state[at] = 2;
    return false;
}

}  // namespace

std::string dor_route(const Mesh2D& m, uint32_t from, uint32_t to) {
    if (from >= m.chips() || to >= m.chips())
        throw Error("no " + chip_name(from >= m.chips() ? from : to) + " in a " + std::to_string(m.width) + "x" +
                    std::to_string(m.height) + " mesh");
    const auto [xd, xn] = steps(from % m.width, to % m.width, m.width, m.torus, 'E', 'W');
    const auto [yd, yn] = steps(from / m.width, to / m.width, m.height, m.torus, 'S', 'N');
    return std::string(xn, xd) + std::string(yn, yd);
}

std::vector<std::vector<std::string>> l0_tables(const Mesh2D& m) {
    std::vector<std::vector<std::string>> t(m.chips(), std::vector<std::string>(m.chips()));
    for (uint32_t a = 0; a < m.chips(); ++a)
        for (uint32_t b = 0; b < m.chips(); ++b) t[a][b] = dor_route(m, a, b);
    return t;
}

DependencyVerdict check_dependencies(const Mesh2D& m, const std::vector<std::vector<std::string>>& tables,
                                     bool datelines) {
    std::map<Channel, std::set<Channel>> edges;
    for (uint32_t a = 0; a < tables.size(); ++a)
        for (uint32_t b = 0; b < tables[a].size(); ++b) {
            uint32_t chip = a, vc = 0;
            bool have = false;
            Channel held{};
            char last = 0;
            for (char dir : tables[a][b]) {
                if (last && horizontal(dir) != horizontal(last)) vc = 0;  // a new dimension, its own dateline
                const Channel c{chip, dir, vc};
                if (have) edges[held].insert(c);
                const auto [next, wrapped] = step(m, chip, dir);
                if (datelines && wrapped) vc = 1;
                held = c;
                have = true;
                chip = next;
                last = dir;
            }
            if (chip != b)
                throw Error("the route " + tables[a][b] + " from " + chip_name(a) + " ends at " + chip_name(chip) +
                            ", not " + chip_name(b));
        }
    std::map<Channel, int> state;
    for (const auto& [c, next] : edges) {
        (void)next;
        std::vector<Channel> path, cycle;
        if (state[c] == 0 && find_cycle(edges, c, state, path, cycle)) {
            DependencyVerdict v;
            v.acyclic = false;
            for (const Channel& x : cycle) v.cycle.push_back(x.name());
            return v;
        }
    }
    return {};
}

}  // namespace weft::transport
