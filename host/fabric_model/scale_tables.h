// The fabric's routing tables at the scale of a large cluster (issue 29:
// 1024 meshes of 16x16 chips, 262,144 chips): every chip's tables filled
// from the control plane's own routes, as a fabric builder fills them, and
// the whole fabric checked for deadlock without walking every pair of chips.
//
// The check builds the same channel dependency graph as
// transport::check_fabric_dependencies (a byte per channel), but from far
// fewer routes: the L0 routes of each distinct mesh once, each chip's few
// distinct exits, and the routes of the chips where packets enter a mesh.
// Time and memory grow with the chips, the meshes squared (the mesh routes)
// and a mesh's chips squared (its L0 tables), never with all chips squared:
// 1024 meshes of 16x16 (262,144 chips) take about 40 s and 70 MB on one core.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/board.h"
#include "driver/cluster_topology.h"
#include "transport/fabric/control_plane.h"

namespace weft::fabric_model {

// A synthetic cluster far beyond what a cluster file may hold (it refuses
// more than kMaxClusterChips): `meshes` meshes of `width` x `height` chips,
// each cabled as a cluster file's `topology: mesh` on every plane of
// `board`, mesh m at column m % c, row m / c of a grid of meshes c =
// ceil(sqrt(meshes)) wide (its last row may be short; one row is a line).
// Each pair of neighbouring meshes is joined by `cables` cables on plane 0
// (fewer where their facing edge has fewer chips), from edge chips spread
// along it, on the ports facing out of the mesh, which no cable inside it
// uses. Throws weft::Error for an empty shape or a board without N, E, S
// and W ports.
ClusterTopology grid_of_meshes(uint32_t meshes, uint32_t width, uint32_t height, const BoardInfo& board,
                               uint32_t cables = 2);

// A table entry as abi::FabricRouteEntry encodes it (the first cable, then
// two bits per later one, the next lowest), with room for the routes of
// meshes beyond what a packet header holds (kFabricMaxRouteHops).
struct RouteEntry {
    uint8_t hops = 0;    // 0: the chip itself, or no route
    uint8_t first = 0;   // abi::FabricCompass
    uint64_t route = 0;  // the directions after the first
    bool operator==(const RouteEntry&) const = default;
};
inline constexpr uint32_t kMaxRouteHops = 33;

// One chip's tables, sized for its cluster: abi::FabricRouteTable's to[] and
// to_mesh[] without their fixed 64 chips and 1024 meshes.
struct ChipTable {
    std::vector<RouteEntry> to;       // by chip of its mesh (L0)
    std::vector<RouteEntry> to_mesh;  // by mesh id (L1); empty in a cluster of one mesh
};

// `chip`'s tables from the control plane's routes, entry for entry what
// multi_mesh_fabric's builder writes (mesh_fabric's, for one mesh). Reuses
// `table`'s memory: built chip after chip into one table, 262,144 chips
// cost one table's memory. Throws weft::Error for a route longer than
// kMaxRouteHops.
void fill_chip_table(const transport::ControlPlane& control, uint32_t chip, ChipTable& table);

struct TablesReport {
    uint32_t chips = 0, meshes = 0;
    // The meshes whose L0 routes were checked as one: meshes of one shape
    // with the same cables up have the same tables (proved per chip).
    uint32_t mesh_kinds = 0;
    uint64_t entries = 0;        // L0 and L1 entries filled, over every chip
    uint64_t table_bytes = 0;    // what every chip's tables take (abi::FabricRouteTable's where they fit)
    uint32_t longest_route = 0;  // hops, L0 or L1
    // What the firmware's abi::FabricRouteTable cannot hold ("" when it holds
    // it all): a mesh over kFabricMaxMeshChips, mesh ids from
    // kFabricMaxMeshes. (Routes over kFabricMaxRouteHops fit: their entries
    // hold the first hops and the routers route on, abi::kFabricLongRoutes.)
    std::string beyond_abi;
    double seconds_build = 0;  // filling the tables
    double seconds_check = 0;  // everything else: routing, proofs and the deadlock check
    double peak_rss_mb = 0;    // of this process so far (getrusage's maxrss)
    bool acyclic = false;
    std::string cycle;  // when not: its channels, "chip 3 E vc1 -> chip 4 S vc1 -> ...", or meshes
};

// Called now and then on the way: a stage ("tables", "check") and how far it is.
using TablesProgress = std::function<void(const std::string& stage, uint64_t done, uint64_t total)>;

// Every chip's tables for `topology` (its cables down routed around, as the
// control plane does), each proved consistent (an L1 entry is the chip's L0
// route to an exit node of its mesh, then a working cable of that node into
// the next mesh on the mesh path), and the fabric checked for deadlock: the
// channel dependency graph of every packet every chip may send, as the
// routers route it (transport::check_fabric_dependencies's graph), and the
// control plane's mesh-level check. Several meshes must all be meshes (as
// multi_mesh_fabric runs them); one may be a mesh or a torus. Throws
// weft::Error for tables that cannot be built or are inconsistent.
TablesReport build_and_check_tables(const ClusterTopology& topology, const BoardInfo& board,
                                    const TablesProgress& progress = {});

}  // namespace weft::fabric_model
