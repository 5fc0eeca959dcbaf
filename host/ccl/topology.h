// The underlay a collective runs on: which chips are cabled to which, routes
// between any two chips, and the overlay orders (a ring or a line of chips)
// that the algorithms walk, chosen to keep every overlay hop short (the classic collective algorithms (Thakur et al.),
// "Overlay and Underlay Topologies").
#pragma once
#include <stdint.h>

#include <vector>

#include "driver/cluster.h"
#include "transport/hop.h"

namespace weft::ccl {

using transport::Hop;

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
    // naming both chips when one cannot reach the other.
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
    std::vector<uint32_t> best_order(bool wrap) const;
    // Every chip, each step to the nearest one not yet taken.
    std::vector<uint32_t> nearest_neighbour_order(uint32_t start) const;
    ClusterTopology cluster_;
    uint32_t n_;
    std::vector<std::vector<Hop>> adjacent_;             // per chip, by port
    std::vector<std::vector<std::vector<Hop>>> routes_;  // [from][to]
    std::vector<std::vector<std::vector<Hop>>>
        cables_;  // [from][to]: every cable, by port (the lowering asks per piece)
    uint32_t max_cables_ = 0;
};

}  // namespace weft::ccl
