// The cluster's shape as the collectives and transports reason about it:
// meshes with their chips' coordinates, every cable and whether it is up, and
// the exit nodes where a cable leaves a mesh for another (the TT-Fabric architecture spec's
// inter-mesh links, the intercube all-reduce design (ADR-0032)'s intercube hops). Built from the cluster file
// by the bridge, passed to every driver in the cluster's info, read by
// Cluster::topology().
#pragma once
#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/cluster_file.h"

namespace weft {

struct LinkInfo {
    uint32_t chip_a, port_a, chip_b, port_b;
    bool up;
    bool shaped = false;  // its wire has a bandwidth or latency set (weft fault ... shape)
};

// A chip with a cable to another mesh.
struct ExitNode {
    uint32_t chip = 0, port = 0;
    uint32_t peer_mesh = 0, peer_chip = 0, peer_port = 0;
    bool up = true;
};

class ClusterTopology {
public:
    ClusterTopology() = default;
    // One mesh of `chips` chips in a line, joined by `links` (no coordinates
    // beyond the order): what a collective sees of an unnamed set of cables.
    ClusterTopology(uint32_t chips, std::vector<LinkInfo> links);
    // Every cable of the file, up.
    static ClusterTopology from_spec(const ClusterSpec& spec);
    // Meshes and cables made in memory (a synthetic cluster far beyond what a
    // cluster file may hold, without its per-cable parse state). Throws
    // weft::Error as from_json does for meshes that do not tile the chips.
    static ClusterTopology from_meshes(std::vector<Mesh> meshes, std::vector<LinkInfo> links);
    // The bridge's info: "meshes" and "links" (with their state). Throws
    // weft::Error naming what is missing or inconsistent.
    static ClusterTopology from_json(const nlohmann::json& info);
    // The "meshes" part of the info (the bridge adds its live "links").
    nlohmann::json meshes_json() const;

    uint32_t chips() const { return chips_; }
    const std::vector<Mesh>& meshes() const { return meshes_; }
    const Mesh& mesh(uint32_t id) const;
    const Mesh& mesh_of(uint32_t chip) const;
    ChipCoord coord(uint32_t chip) const;
    // The chip at (x, y) of mesh `id`; throws weft::Error outside it.
    uint32_t chip_at(uint32_t id, uint32_t x, uint32_t y) const;
    const std::vector<LinkInfo>& links() const { return links_; }
    // The meshes as systems (the cluster file's systems: section); empty: none.
    const SystemsSpec& systems() const { return systems_; }
    // The same meshes with these cables (the same ones, in another state).
    ClusterTopology with_links(std::vector<LinkInfo> links) const;
    // The mesh whose chips `chips` are, in their order; null if they are not one.
    const Mesh* whole_mesh(const std::vector<uint32_t>& chips) const;
    // The cables among `chips`, renumbered by their index (a communicator's
    // ranks, a per-mesh fabric's chips). One whole mesh, in order, keeps its
    // shape (a grid 2D algorithms and a 2D fabric run on); other chips are
    // one mesh in a line of their order. Throws weft::Error for a chip the
    // cluster lacks or one named twice.
    ClusterTopology among(const std::vector<uint32_t>& chips) const;
    // The cables leaving mesh `id`, from its side, by chip then port. Kept
    // with the topology (routing asks for them per chip and mesh pair), so
    // the reference lives as long as the topology does.
    const std::vector<ExitNode>& exit_nodes(uint32_t id) const;

private:
    void check() const;
    // The lookups routing asks for per chip: a mesh by id and the exit nodes
    // of each, so they cost no scan of every mesh or cable at scale.
    void index();
    size_t id_slot(uint32_t id) const;  // into mesh_ids_ and exits_; throws for an unknown mesh

    uint32_t chips_ = 0;
    std::vector<Mesh> meshes_;
    std::vector<LinkInfo> links_;
    SystemsSpec systems_;
    std::vector<std::pair<uint32_t, uint32_t>> mesh_ids_;  // (id, index in meshes_), ascending, first of each id
    std::vector<std::vector<ExitNode>> exits_;             // by slot of mesh_ids_
};

}  // namespace weft
