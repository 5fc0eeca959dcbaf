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
// Nothing is kept per pair of chips. Per pair of meshes the routes are
// searched once, when the routing is made (a search per source mesh, its
// tree kept, 16 bytes per pair: 16 MB at 1024 meshes): the tables ask for
// them per chip and mesh, and the check for every pair, which at a thousand
// meshes must not mean a search each.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <utility>
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
    // mesh_path(from, to)[1], the mesh a packet crosses into next, without
    // the path. Throws weft::Error as mesh_path does, and for from == to.
    uint32_t next_mesh(uint32_t from, uint32_t to) const;
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
    void search_from(uint32_t source);              // fills source's rows of parent_, reached_, next_
    // The search state where the route from index a to index b ends, or -1.
    int32_t end_state(uint32_t a, uint32_t b) const { return reached_[size_t(a) * next_to_.size() + b]; }
    [[noreturn]] void no_route(uint32_t a, uint32_t b) const;

    ClusterTopology topology_;
    std::vector<std::vector<uint32_t>> next_to_;        // by mesh index: neighbour indices, ascending
    std::vector<uint32_t> level_;                       // by mesh index: meshes from its component's root
    std::vector<std::pair<uint32_t, uint32_t>> by_id_;  // (mesh id, index), ascending, first of each id
    // Per source mesh index, its search over (mesh, descended yet) states
    // 2 * mesh + descended: each state's parent (-1 at the source or unseen),
    // and per destination index the state its route ends at (-1: none) and
    // the mesh index it crosses into first.
    std::vector<int32_t> parent_, reached_, next_;
};

// The check on any mesh-level routing: `path(from, to)` lists mesh indices
// 0..meshes-1 as mesh_path does. For tests of routings other than weft's.
using MeshPathOf = std::function<std::vector<uint32_t>(uint32_t from, uint32_t to)>;
DependencyVerdict check_mesh_dependencies(uint32_t meshes, const MeshPathOf& path);

}  // namespace weft::transport
