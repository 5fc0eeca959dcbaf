// The hierarchical all-reduce of seed 003 (ADR-0032): a cluster of systems,
// each a mesh of chips, joined as a ring, a 2D torus or a 2D mesh (the
// cluster file's systems: section). Five phases, all systems at once:
//   1. every row of a system reduces toward the root's column, from both ends;
//   2. the root's column reduces toward the root, from both ends;
//   3. the systems' roots all-reduce among themselves by the systems'
//      topology: a ring (reduce-scatter then all-gather round it), a torus
//      (that along every row of systems, then every column), or a mesh
//      without wrap (a chain reduce toward the middle and a broadcast back
//      out, along the rows, then the columns);
//   4. the root's column broadcasts outward from the root;
//   5. every row broadcasts outward from the root's column.
// The root sits at the center of each system's mesh (column w / 2, row h / 2)
// unless the tuning names another chip. A one-chip system skips 1, 2, 4, 5.
// Beyond the record: the lowering pipelines every transfer in pieces, so the
// phases overlap on a large vector, and the ring exchange moves 2 (n - 1) / n
// of the vector instead of the record's n - 1 whole ones.
#include <algorithm>

#include "ccl/algorithms.h"
#include "ccl/ring_steps.h"
#include "common/error.h"

namespace weft::ccl {
namespace {

struct Hierarchy {
    const ClusterTopology& t;
    const SystemsSpec& systems;
    uint32_t w = 0, h = 0;            // each system's chips
    uint32_t root_x = 0, root_y = 0;  // the root's place in every system

    uint32_t chip(uint32_t s, uint32_t x, uint32_t y) const { return t.chip_at(t.meshes()[s].id, x, y); }
    uint32_t root(uint32_t s) const { return chip(s, root_x, root_y); }
    std::vector<uint32_t> row(uint32_t s, uint32_t y) const {
        std::vector<uint32_t> line;
        for (uint32_t x = 0; x < w; ++x) line.push_back(chip(s, x, y));
        return line;
    }
    std::vector<uint32_t> root_column(uint32_t s) const {
        std::vector<uint32_t> line;
        for (uint32_t y = 0; y < h; ++y) line.push_back(chip(s, root_x, y));
        return line;
    }
    // The roots of a row (or column) of systems.
    std::vector<uint32_t> roots_along(uint32_t index, bool column) const {
        std::vector<uint32_t> line;
        const uint32_t n = column ? systems.h : systems.w;
        for (uint32_t k = 0; k < n; ++k) line.push_back(root(column ? k * systems.w + index : index * systems.w + k));
        return line;
    }
};

Hierarchy hierarchy_of(const PlanContext& c) {
    const ClusterTopology& t = c.topo.cluster();
    const SystemsSpec& s = t.systems();
    if (s.empty())
        throw Error("the hierarchical algorithm runs on a cluster of systems: its cluster file needs a systems: "
                    "section (docs/collectives-and-fabric.md)");
    if (c.layout.ranks != t.chips() || s.count() != t.meshes().size())
        throw Error("the hierarchical algorithm runs over every chip of the cluster's " + std::to_string(s.count()) +
                    " systems, not a communicator of some of them");
    const Mesh& m = t.meshes().front();
    Hierarchy hy{t, s, m.width, m.height, m.width / 2, m.height / 2};
    if (c.hierarchical_root >= 0) {
        if (uint64_t(c.hierarchical_root) >= m.chips())
            throw Error("WEFT_HIERARCHICAL_ROOT " + std::to_string(c.hierarchical_root) + " is not a chip of a " +
                        std::to_string(m.width) + "x" + std::to_string(m.height) + " system (0-" +
                        std::to_string(m.chips() - 1) + ")");
        hy.root_x = uint32_t(c.hierarchical_root) % m.width;
        hy.root_y = uint32_t(c.hierarchical_root) / m.width;
    }
    return hy;
}

// Along `line`, both ends walk toward position `at`, each chip adding what
// came from the far side to its own and passing the sum on. Returns the next
// free round.
uint32_t converge(Plan& p, const std::vector<uint32_t>& line, uint32_t at, const Pages& buf, uint32_t round) {
    const auto n = static_cast<uint32_t>(line.size());
    for (uint32_t k = 0; k < at; ++k) p.send(round + k, line[k], buf, line[k + 1], buf, true);
    for (uint32_t k = n - 1; k > at; --k) p.send(round + (n - 1 - k), line[k], buf, line[k - 1], buf, true);
    return round + std::max(at, n - 1 - at);
}

// The reverse: what position `at` holds goes out to both ends.
uint32_t diverge(Plan& p, const std::vector<uint32_t>& line, uint32_t at, const Pages& buf, uint32_t round) {
    const auto n = static_cast<uint32_t>(line.size());
    for (uint32_t k = at; k > 0; --k) p.send(round + (at - k), line[k], buf, line[k - 1], buf);
    for (uint32_t k = at; k + 1 < n; ++k) p.send(round + (k - at), line[k], buf, line[k + 1], buf);
    return round + std::max(at, n - 1 - at);
}

// Phase 3 along every row (or column) of systems at once.
uint32_t exchange_along(Plan& p, const OpLayout& l, const Hierarchy& hy, bool column, uint32_t round) {
    const uint32_t lines = column ? hy.systems.w : hy.systems.h;
    const Pages all = l.whole(l.output);
    uint32_t next = round;
    for (uint32_t i = 0; i < lines; ++i) {
        const std::vector<uint32_t> roots = hy.roots_along(i, column);
        if (roots.size() < 2) continue;
        if (hy.systems.topology == "mesh_2d_no_wrap") {
            const auto mid = static_cast<uint32_t>(roots.size() / 2);
            next = diverge(p, roots, mid, all, converge(p, roots, mid, all, round));
        } else {
            next = ring_all_gather(p, l, roots, 0, l.elements, ring_reduce_scatter(p, l, roots, 0, l.elements, round));
        }
    }
    return next;
}

void hierarchical(Plan& p, const PlanContext& c) {
    const Hierarchy hy = hierarchy_of(c);
    const OpLayout& l = c.layout;
    const Pages all = l.whole(l.output);
    const auto systems = static_cast<uint32_t>(hy.t.meshes().size());
    for (uint32_t r = 0; r < l.ranks; ++r) p.copy(0, r, l.whole(l.input), all);
    uint32_t round = 1, next = 1;
    for (uint32_t s = 0; s < systems; ++s)
        for (uint32_t y = 0; y < hy.h; ++y) next = converge(p, hy.row(s, y), hy.root_x, all, round);
    round = next;
    for (uint32_t s = 0; s < systems; ++s) next = converge(p, hy.root_column(s), hy.root_y, all, round);
    round = exchange_along(p, l, hy, false, next);
    if (hy.systems.topology != "ring_1d") round = exchange_along(p, l, hy, true, round);
    for (uint32_t s = 0; s < systems; ++s) next = diverge(p, hy.root_column(s), hy.root_y, all, round);
    round = next;
    for (uint32_t s = 0; s < systems; ++s)
        for (uint32_t y = 0; y < hy.h; ++y) diverge(p, hy.row(s, y), hy.root_x, all, round);
}

}  // namespace

namespace plans {

Plan all_reduce_hierarchical(const PlanContext& c) {
    Plan p;
    hierarchical(p, c);
    return p;
}

}  // namespace plans

}  // namespace weft::ccl
