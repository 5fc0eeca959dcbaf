#include "transport/fabric/routing2d.h"

#include <algorithm>
#include <string_view>

#include "common/error.h"
#include "common/names.h"

namespace weft::transport {
namespace {

// Steps along one dimension of `size` from a to b: the direction letter and how many.
std::pair<char, uint32_t> steps(uint32_t a, uint32_t b, uint32_t size, bool wrap, char plus, char minus) {
    const uint32_t ahead = (b + size - a) % size, behind = (a + size - b) % size;
    if (!wrap) return b >= a ? std::pair{plus, b - a} : std::pair{minus, a - b};
    return ahead <= behind ? std::pair{plus, ahead} : std::pair{minus, behind};
}

// The chip a cable leads to, and whether it is its dimension's wrap cable.
std::pair<uint32_t, bool> step(const Mesh& m, uint32_t chip, uint32_t dir) {
    const uint32_t x = chip % m.width, y = chip / m.width;
    auto moved = [&](uint32_t nx, uint32_t ny) { return ny * m.width + nx; };
    switch (dir) {
        case abi::kFabricEast:
            if (x + 1 < m.width) return {moved(x + 1, y), false};
            if (m.wraps() && m.width > 1) return {moved(0, y), true};
            break;
        case abi::kFabricWest:
            if (x > 0) return {moved(x - 1, y), false};
            if (m.wraps() && m.width > 1) return {moved(m.width - 1, y), true};
            break;
        case abi::kFabricSouth:
            if (y + 1 < m.height) return {moved(x, y + 1), false};
            if (m.wraps() && m.height > 1) return {moved(x, 0), true};
            break;
        case abi::kFabricNorth:
            if (y > 0) return {moved(x, y - 1), false};
            if (m.wraps() && m.height > 1) return {moved(x, m.height - 1), true};
            break;
    }
    throw Error("a route leaves the mesh: " + chip_name(chip) + " has no cable " + abi::fabric_letter(dir));
}

}  // namespace

int neighbor(const Mesh& mesh, uint32_t chip, abi::FabricCompass dir, bool* wrap) {
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

constexpr uint32_t kNoNode = UINT32_MAX;

// A cycle of a graph of n nodes, found depth first: its nodes in order, or
// none. successor(at, i) is at's first successor numbered i or later, with
// the number to ask for next, or kNoNode past the last.
template <class Successor>
std::vector<uint32_t> cycle_of(uint32_t n, const Successor& successor) {
    std::vector<uint8_t> state(n, 0);                 // 0 unseen, 1 on the path, 2 done
    std::vector<std::pair<uint32_t, uint32_t>> path;  // (node, next successor number to try)
    for (uint32_t root = 0; root < n; ++root) {
        if (state[root]) continue;
        path.push_back({root, 0});
        state[root] = 1;
        while (!path.empty()) {
            auto& [at, i] = path.back();
            const auto [to, after] = successor(at, i);
            if (to == kNoNode) {
                state[at] = 2;
                path.pop_back();
                continue;
            }
            i = after;
            if (state[to] == 1) {
                std::vector<uint32_t> cycle;
                size_t first = 0;
                while (path[first].first != to) ++first;
                for (size_t k = first; k < path.size(); ++k) cycle.push_back(path[k].first);
                return cycle;
            }
            if (state[to] == 0) {
                state[to] = 1;
                path.push_back({to, 0});
            }
        }
    }
    return {};
}

}  // namespace

std::string channel_name(uint32_t id) {
    return chip_name(channel_chip(id)) + " " + abi::fabric_letter(channel_dir(id)) + " vc" +
           std::to_string(channel_vc(id));
}

std::vector<uint32_t> find_cycle(const std::vector<ChannelBits>& next,
                                 const std::function<uint32_t(uint32_t)>& across) {
    return cycle_of(static_cast<uint32_t>(next.size()),
                    [&](uint32_t at, uint32_t from) -> std::pair<uint32_t, uint32_t> {
                        for (uint32_t bit = from; bit < kChipChannels; ++bit)
                            if (next[at] >> bit & 1) return {across(at) * kChipChannels + bit, bit + 1};
                        return {kNoNode, 0};
                    });
}

std::string dor_route(const Mesh& m, uint32_t from, uint32_t to) {
    if (from >= m.chips() || to >= m.chips())
        throw Error("no " + chip_name(from >= m.chips() ? from : to) + " in a " + std::to_string(m.width) + "x" +
                    std::to_string(m.height) + " mesh");
    const bool wrap = m.wraps();
    const auto [xd, xn] = steps(from % m.width, to % m.width, m.width, wrap, 'E', 'W');
    const auto [yd, yn] = steps(from / m.width, to / m.width, m.height, wrap, 'S', 'N');
    return std::string(xn, xd) + std::string(yn, yd);
}

uint32_t dor_hops(const Mesh& m, uint32_t from, uint32_t to) {
    if (from >= m.chips() || to >= m.chips()) return uint32_t(dor_route(m, from, to).size());  // its error
    const bool wrap = m.wraps();
    const uint32_t xn = steps(from % m.width, to % m.width, m.width, wrap, 'E', 'W').second;
    const uint32_t yn = steps(from / m.width, to / m.width, m.height, wrap, 'S', 'N').second;
    return xn + yn;
}

uint32_t dor_diameter(const Mesh& m) { return m.wraps() ? m.width / 2 + m.height / 2 : m.width - 1 + m.height - 1; }

std::vector<std::vector<std::string>> l0_tables(const Mesh& m) {
    std::vector<std::vector<std::string>> t(m.chips(), std::vector<std::string>(m.chips()));
    for (uint32_t a = 0; a < m.chips(); ++a)
        for (uint32_t b = 0; b < m.chips(); ++b) t[a][b] = dor_route(m, a, b);
    return t;
}

DependencyVerdict check_dependencies(const Mesh& m, const RouteOf& route, bool datelines, bool bubble) {
    std::vector<ChannelBits> next(size_t(m.chips()) * kChipChannels, 0);
    for (uint32_t a = 0; a < m.chips(); ++a)
        for (uint32_t b = 0; b < m.chips(); ++b) {
            const std::string way = route(a, b);
            if (way == kNoRoute) continue;  // a pair that exchanges no traffic
            uint32_t chip = a, vc = 0, held = UINT32_MAX;
            uint32_t last = 4;
            for (char letter : way) {
                const uint32_t d = abi::fabric_compass_of(letter);
                if (d > 3)
                    throw Error("the route " + way + " from " + chip_name(a) + " has a step '" + letter +
                                "', not N, E, S or W");
                if (last < 4 && !abi::fabric_same_dimension(d, last)) vc = 0;  // a new dimension, its own dateline
                const auto [to, wrapped] = step(m, chip, d);
                if (held != UINT32_MAX) next[held] |= channel_bit(d, vc);
                held = channel_id(chip, d, vc);
                if (datelines && wrapped) vc = 1;
                chip = to;
                last = d;
            }
            if (chip != b)
                throw Error("the route " + way + " from " + chip_name(a) + " ends at " + chip_name(chip) + ", not " +
                            chip_name(b));
        }
    const auto across = [&](uint32_t c) { return step(m, channel_chip(c), channel_dir(c)).first; };
    DependencyVerdict v;
    if (bubble) {
        Mesh local = m;  // the routes number its chips from 0
        local.first_chip = 0;
        v.cycle = find_ring_cycle(local, next, across);
    } else {
        for (uint32_t id : find_cycle(next, across)) v.cycle.push_back(channel_name(id));
    }
    v.acyclic = v.cycle.empty();
    return v;
}

namespace {

// A row's or a column's cables both ways round, on one VC: (line * 2 +
// (1 for a row)) * kChannelVcs + VC. Both ways are one ring: where a cable of it is
// dead, packets turn back at its ends (the other way round), and the two
// lines join into one loop that the bubble keeps moving as it does a ring.
uint32_t ring_of(const Mesh& m, uint32_t channel) {
    const uint32_t chip = channel_chip(channel) - m.first_chip, dir = channel_dir(channel);
    const bool row = abi::fabric_same_dimension(dir, abi::kFabricEast);
    return ((row ? chip / m.width : chip % m.width) * 2 + row) * kChannelVcs + channel_vc(channel);
}

std::string ring_name(uint32_t ring) {
    return std::string(ring / kChannelVcs % 2 ? "row " : "column ") + std::to_string(ring / kChannelVcs / 2) + " vc" +
           std::to_string(ring % kChannelVcs);
}

}  // namespace

std::vector<std::string> find_ring_cycle(const Mesh& m, const std::vector<ChannelBits>& next,
                                         const std::function<uint32_t(uint32_t)>& across) {
    // The turns: per ring, the rings its packets may wait for.
    const uint32_t rings = std::max(m.width, m.height) * 2 * kChannelVcs;
    std::vector<std::vector<uint32_t>> waits(rings);
    for (uint32_t c = m.first_chip * kChipChannels; c < next.size() && c < (m.first_chip + m.chips()) * kChipChannels;
         ++c)
        for (uint32_t bit = 0; bit < kChipChannels; ++bit) {
            if (!(next[c] >> bit & 1)) continue;
            const uint32_t from = ring_of(m, c), to = ring_of(m, across(c) * kChipChannels + bit);
            if (from != to && std::find(waits[from].begin(), waits[from].end(), to) == waits[from].end())
                waits[from].push_back(to);
        }
    std::vector<std::string> names;
    const auto cycle = cycle_of(rings, [&](uint32_t at, uint32_t i) -> std::pair<uint32_t, uint32_t> {
        return i < waits[at].size() ? std::pair{waits[at][i], i + 1} : std::pair{kNoNode, 0u};
    });
    for (uint32_t ring : cycle) names.push_back(ring_name(ring));
    return names;
}

DependencyVerdict check_dependencies(const Mesh& m, const std::vector<std::vector<std::string>>& tables, bool datelines,
                                     bool bubble) {
    if (tables.size() != m.chips()) throw Error("a table set needs a table per chip of the mesh");
    for (const auto& t : tables)
        if (t.size() != m.chips()) throw Error("a chip's table needs a route per chip of the mesh");
    return check_dependencies(
        m, [&](uint32_t a, uint32_t b) { return tables[a][b]; }, datelines, bubble);
}

std::string route_letters(const abi::FabricRouteEntry& entry) {
    if (entry.hops == 0) return "";
    std::string letters(1, abi::fabric_letter(entry.first));
    uint32_t later = entry.route;
    for (uint32_t k = 1; k < entry.hops && k < abi::kFabricMaxRouteHops; ++k, later >>= 2)
        letters += abi::fabric_letter(later);
    return letters;
}

}  // namespace weft::transport
