// L1 routing between meshes (the TT-Fabric spec's inter-mesh routing tables):
// which mesh a packet crosses into next on its way to another mesh, and for
// each chip the exit node of its own mesh that leads there. A packet routes
// to that exit node by its mesh's L0 table (routing2d.h); the router where it
// enters the next mesh writes a new source route for that mesh.
//
// The mesh-level routes follow up*/down* over the graph of meshes: meshes are
// ranked by their distance from the lowest-numbered mesh of their component,
// then by id; a route climbs toward lower ranks, then descends, and never
// climbs after descending. No cycle of meshes waiting on meshes can form
// (the spec's "directed acyclic graph routing"); among the shortest such
// routes the one whose next mesh has the lowest id wins. A chip leaves by the
// exit node fewest L0 hops away, the lowest-numbered on a tie.
//
// Nothing is kept per pair of meshes or chips: routes are searched when asked.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/cluster_topology.h"
#include "transport/fabric/routing2d.h"

namespace weft::transport {

class MeshRouting {
public:
    // Only cables that are up join meshes.
    explicit MeshRouting(ClusterTopology topology);

    const ClusterTopology& topology() const { return topology_; }
    // The meshes a packet crosses from mesh `from` to mesh `to`, both
    // included. Throws weft::Error naming both when no cable joins them.
    std::vector<uint32_t> mesh_path(uint32_t from, uint32_t to) const;
    // Chip `chip`'s L1 entry for mesh `to`: the exit node (a cluster chip id)
    // of the chip's own mesh toward it. Throws weft::Error for its own mesh or
    // an unreachable one.
    uint32_t exit_toward(uint32_t chip, uint32_t to) const;
    // The mesh-level channel dependency graph of every pair's path: acyclic,
    // or one cycle named ("mesh 0 -> mesh 1").
    DependencyVerdict check() const;

private:
    uint32_t index_of(uint32_t mesh_id) const;
    bool climbs(uint32_t from, uint32_t to) const;  // by index: toward a lower rank

    ClusterTopology topology_;
    std::vector<std::vector<uint32_t>> next_to_;  // by mesh index: neighbour indices, ascending
    std::vector<uint32_t> level_;                 // by mesh index: meshes from its component's root
};

// The check on any mesh-level routing: `path(from, to)` lists mesh indices
// 0..meshes-1 as mesh_path does. For tests of routings other than weft's.
using MeshPathOf = std::function<std::vector<uint32_t>(uint32_t from, uint32_t to)>;
DependencyVerdict check_mesh_dependencies(uint32_t meshes, const MeshPathOf& path);

}  // namespace weft::transport
