// The underlay the collectives and the transports run on: which chips are
// cabled to which, routes between any two chips, and the overlay orders (a
// ring or a line of chips) that the algorithms walk, chosen to keep every
// overlay hop short (the classic collective algorithms (Thakur et al.),
// "Overlay and Underlay Topologies"). Nothing is kept per pair of chips:
// cables are kept per chip, routes found when asked (a breadth-first search
// per source, the latest few kept), so memory follows the cables and the
// routes an op uses, not chips squared. Not safe to share between threads.
#pragma once
#include <stdint.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "driver/cluster_topology.h"
#include "driver/hop.h"

namespace weft {

class Topology {
public:
    // Only the cables that are up are used.
    explicit Topology(ClusterTopology cluster);
    // One mesh of `chips` chips joined by `links`.
    Topology(uint32_t chips, const std::vector<LinkInfo>& links) : Topology(ClusterTopology(chips, links)) {}

    // Meshes, coordinates and exit nodes, for algorithms that work mesh by mesh.
    const ClusterTopology& cluster() const { return cluster_; }

    uint32_t size() const { return n_; }
    // Shortest route (fewest hops, lowest chip first on ties); throws weft::Error
    // naming both chips when one cannot reach the other. The reference stays
    // valid for the Topology's life.
    const std::vector<Hop>& route(uint32_t from, uint32_t to) const;
    uint32_t distance(uint32_t from, uint32_t to) const;
    // The cable on (chip, port); throws weft::Error if there is none (or it is down).
    const Hop& neighbour(uint32_t chip, uint32_t port) const;
    // Every working cable from `from` to `to`, by port: more than one where the
    // board has planes (tt-metal's CCL developer guide, "Topology Config"). Empty if not neighbours.
    const std::vector<Hop>& cables(uint32_t from, uint32_t to) const;
    // The most cables joining any two neighbours.
    uint32_t max_cables() const { return max_cables_; }

    // The ring of all chips with the least total stretch (a snake on a mesh);
    // the first ring found in lexicographic order wins ties, so ring8 is 0..7.
    std::vector<uint32_t> ring_order() const;
    // The open line (no wrap) with the least stretch.
    std::vector<uint32_t> line_order() const;
    // Average underlay hops per overlay hop of `order` (1.0: every hop is a cable).
    double stretch(const std::vector<uint32_t>& order, bool wrap) const;

private:
    // A breadth-first search from one chip: each chip's hop into it and depth.
    struct Tree {
        std::vector<Hop> into;        // the hop by which the search reached the chip
        std::vector<uint32_t> depth;  // hops from the source; UINT32_MAX: unreachable
    };
    const Tree& tree(uint32_t from) const;
    std::string cut_from(uint32_t from) const;
    std::vector<uint32_t> best_order(bool wrap) const;
    // A grid's snake (boustrophedon) order, when the cluster is one mesh or
    // torus whose snake is all cables; empty otherwise.
    std::vector<uint32_t> snake_order(bool wrap) const;
    std::vector<uint32_t> closed_snake(const Mesh& m) const;
    bool all_cables(const std::vector<uint32_t>& order, bool wrap) const;
    // 2-opt asks distances from every chip, past what the trees kept can hold.
    static constexpr uint32_t kTwoOptChips = 64;
    void two_opt(std::vector<uint32_t>& order, bool wrap) const;
    // Every chip, each step to the nearest one not yet taken (the lowest id
    // on a tie).
    std::vector<uint32_t> nearest_neighbour_order(uint32_t start) const;
    // The lowest-numbered chip not `used` nearest to `from`: a search from
    // it, ring by ring, that stops at the first ring holding one. `seen` is
    // the caller's, stamped with `stamp` (unique per call) rather than cleared.
    uint32_t nearest_unused(uint32_t from, const std::vector<bool>& used, std::vector<uint32_t>& seen,
                            uint32_t stamp) const;
    ClusterTopology cluster_;
    uint32_t n_;
    std::vector<std::vector<Hop>> adjacent_;                    // per chip, by (peer, port)
    std::vector<std::map<uint32_t, std::vector<Hop>>> cables_;  // per chip: peer -> its cables, by port
    mutable std::map<uint32_t, Tree> trees_;                     // the latest sources searched from
    mutable std::map<std::pair<uint32_t, uint32_t>, std::vector<Hop>> routes_;  // asked for so far
    uint32_t max_cables_ = 0;
};

}  // namespace weft
