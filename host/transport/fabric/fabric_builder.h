// Host fabric builder (the TT-Fabric spec's control plane): given the chips
// of a line or a ring in order and the cable between each pair, or of a 2D
// mesh or torus and its cables, it places every router's channels, slots and
// counters in the L1 its resident image keeps, links each router to its peer
// across the cable and to the routers of the chip's other ports (1D: the
// opposite one; 2D: all three others), writes every chip's L0 routing table
// (2D) beside each of its routers, and writes worker connections.
// The routers' kept L1 is at the same place on every chip (resident::kept_l1),
// so every address a router is told is known before any router starts.
//
//   transport::FabricBuilder fabric(board, order, cables, /*ring=*/true, options);
//   for (size_t r = 0; r < fabric.routers().size(); ++r) ... start it, writing fabric.write_router(mem, r)
//   uint64_t conn = fabric.connect(mem, l1, chip, FabricDirection::kForward, /*lane=*/0, /*worker core=*/4);
#pragma once
#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "driver/board.h"
#include "driver/chip_writer.h"
#include "driver/cluster_topology.h"
#include "driver/fabric_spec.h"
#include "transport/fabric/routing2d.h"
#include "transport/hop.h"
#include "transport/l1_allocator.h"
#include "weft/abi/fabric_router.h"

namespace weft::transport {

// A router's packet log at most (FabricSpec::record_packets): 3 MiB of L1.
inline constexpr uint32_t kMaxRecordedPackets = 65536;

// 2D: out of the chip's north, east, south or west port, numbered as
// abi::FabricCompass. 1D: along the order (to the next chip) or against it.
enum class FabricDirection : uint32_t {
    kNorth = abi::kFabricNorth,
    kEast = abi::kFabricEast,
    kSouth = abi::kFabricSouth,
    kWest = abi::kFabricWest,
    kForward = 4,
    kBackward = 5,
};
inline constexpr uint32_t kFabricDirections = 6;

constexpr FabricDirection compass_direction(uint32_t compass) { return static_cast<FabricDirection>(compass); }

struct FabricRoute {
    FabricDirection direction = FabricDirection::kForward;  // of the first cable
    uint32_t hops = 0;
    uint32_t route = 0;  // 2D: the later directions, as abi::FabricPacketHeader::route
};

struct FabricRouterPlan {
    uint32_t chip = 0, core = 0, port = 0;
    uint32_t peer_chip = 0;  // at the far end of its cable
    FabricDirection direction = FabricDirection::kForward;
    bool dateline = false;  // its cable is the ring's (2D: its dimension's) wrap cable
    int relay_for = -1;     // a fallback relay: the index of its chip's router on the cable it stands in for
    Region l1;              // what its resident image keeps
    abi::FabricRouterConfig config{};
    uint64_t config_address = 0;
};

class FabricBuilder {
public:
    // cables[i] joins order[i] (from) to order[i + 1] (to); on a ring one
    // more, cables[n - 1], joins order[n - 1] to order[0]. Throws weft::Error
    // naming the problem (a chip twice, a cable that does not join its pair,
    // a chip that would need one port both ways, settings out of range).
    // fallbacks (empty, or one per cable): another cable joining the same
    // pair the same way, on which a relay at each end carries the cable's
    // traffic while it is down (FabricSpec::fallback).
    FabricBuilder(const BoardInfo& board, std::vector<uint32_t> order, std::vector<Hop> cables, bool ring,
                  FabricSpec spec = {}, const std::vector<std::optional<Hop>>& fallbacks = {});
    // A 2D fabric: chip i of the mesh (x + y * width) is chip i of the
    // cluster; `cables` joins each chip to its east and south neighbours
    // (and around, on a torus), one cable per pair, in any order. Throws
    // weft::Error naming a missing or misplaced cable, a mesh too large for
    // a route in the header, or a table set whose dependency graph has a
    // cycle.
    // `routes` fills the L0 tables (the control plane's, control_plane.h);
    // empty: dimension order.
    FabricBuilder(const BoardInfo& board, const Mesh& mesh, std::vector<Hop> cables, FabricSpec spec = {},
                  const RouteOf& routes = {}, const std::vector<std::optional<Hop>>& fallbacks = {});
    // A 2D fabric over several meshes (chips numbered across the cluster,
    // each mesh's from its first_chip): `cables` join neighbours of a mesh,
    // or exit nodes of two meshes (a port facing out of one mesh's edge to
    // the facing port of the other's). `routes` gives the L0 routes inside
    // each mesh (by cluster chip ids), `exits` each chip's way out
    // toward every other mesh (its L1 entry, as ExitOf says). Every mesh runs
    // as a mesh (no wrap cables), and the tables are refused, naming the
    // cycle, if packets walking them by the routers' own decisions could
    // wait on each other in a cycle.
    // `fallbacks` (empty, or one per cable): as the 1D constructor's.
    FabricBuilder(const BoardInfo& board, std::vector<Mesh> meshes, std::vector<Hop> cables, FabricSpec spec,
                  const RouteOf& routes, const ExitOf& exits, const std::vector<std::optional<Hop>>& fallbacks = {});

    const std::vector<FabricRouterPlan>& routers() const { return routers_; }
    const FabricSpec& spec() const { return spec_; }
    // A chip's fabric node id: its mesh and its chip id in the mesh (1D: the
    // chip id as given, mesh 0).
    abi::FabricNodeId node(uint32_t chip) const;
    [[deprecated("a fabric may span several meshes: use node(chip).mesh")]] uint16_t mesh_id() const {
        return meshes_.empty() ? 0 : static_cast<uint16_t>(meshes_[0].id);
    }
    const std::vector<uint32_t>& order() const { return order_; }
    bool ring() const { return ring_; }
    uint32_t dims() const { return meshes_.empty() ? 1 : 2; }
    const std::vector<Mesh>& meshes() const { return meshes_; }
    // 2D: `chip`'s routing tables as its routers hold them.
    const abi::FabricRouteTable& table(uint32_t chip) const { return tables_.at(position(chip)); }
    // 2D: `chip`'s table with L0 routes from `routes` and, on several meshes,
    // L1 routes from `exits` (empty: as built): what the control plane writes
    // into a running fabric's routers. Throws weft::Error for a route over a
    // cable the fabric does not have.
    abi::FabricRouteTable table_with(uint32_t chip, const RouteOf& routes, const ExitOf& exits = {}) const;
    // Whether router r keeps its chip's tables in its own L1, where they are
    // written: every 2D router, or with FabricSpec::table_per_chip the first
    // of its chip's (the others read that copy).
    bool holds_table(const FabricRouterPlan& r) const {
        return r.config.route_table && r.l1.contains(r.config.route_table, sizeof(abi::FabricRouteTable));
    }
    // L1 each router keeps (the resident image's share included).
    uint64_t l1_bytes() const { return l1_bytes_; }
    // Router r's configuration and the words it starts from.
    void write_router(ChipWriter& memory, size_t r) const;
    // The router of `chip` toward `direction`, or -1 (a line's or mesh's edge).
    int router_index(uint32_t chip, FabricDirection direction) const;
    // Where `chip` stands in the order; throws weft::Error for a chip not in the fabric.
    uint32_t position(uint32_t chip) const;

    // How a packet gets from one chip to another: the shorter way round on a
    // ring (forward on a tie); on 2D the L0 table's dimension-ordered route.
    // Throws weft::Error for a chip not in the fabric.
    FabricRoute route(uint32_t from, uint32_t to) const;
    // Lane `lane` of `chip`'s router toward `direction`, for a worker on
    // `worker_core`: places the worker's words in its L1 (`l1`), writes the
    // abi::FabricWorkerConnection there and returns its address.
    uint64_t connect(ChipWriter& memory, L1Allocator& l1, uint32_t chip, FabricDirection direction, uint32_t lane,
                     uint32_t worker_core) const;
    // A kernel's connection slots, one per way out (fabric::Connections:
    // 2D by compass, 1D forward then backward): the slot of `direction`.
    uint8_t connection_slot(FabricDirection direction) const;
    // Lane `lane` of every router of `chip`, for a worker on `worker_core`,
    // into `slots` by connection_slot (0 where the chip has no router that way).
    void connect_every_way(ChipWriter& memory, L1Allocator& l1, uint32_t chip, uint32_t lane, uint32_t worker_core,
                           uint64_t (&slots)[4]) const;

private:
    void check_spec() const;
    // The packet log's bytes in each router's L1, its alignment included.
    uint64_t record_bytes() const {
        return spec_.record_packets ? 64 + uint64_t(spec_.record_packets) * sizeof(abi::FabricPacketRecord) : 0;
    }
    void place(FabricRouterPlan& r) const;
    void link(FabricRouterPlan& r, const FabricRouterPlan* peer, FabricRouterPlan* opposite, bool dateline) const;
    void add_router_2d(uint32_t chip, uint32_t port, uint32_t compass, uint32_t peer, bool dateline);
    void check_cables_of(uint32_t from, uint32_t to, const std::string& way) const;
    void check_meshes() const;
    void add_relays(const std::vector<std::optional<Hop>>& fallbacks);
    void link_relays(size_t r);
    void add_cable_2d(const Hop& c);
    const Mesh& mesh_of(uint32_t chip) const;
    abi::FabricRouteEntry entry_of(uint32_t from, uint32_t to, const std::string& way) const;
    void fill_tables(const RouteOf& routes, const ExitOf& exits);
    void note_length(const std::string& way);
    void index_chips();
    void check_deadlock(const RouteOf& routes) const;
    void link_2d(FabricRouterPlan& r);
    void use_vcs(uint32_t vcs);
    void share_tables();
    uint32_t senders_of(const FabricRouterPlan& r) const;

    const BoardInfo& board_;
    std::vector<uint32_t> order_;
    std::vector<Hop> cables_;
    // By chip id (up to the highest in the fabric): its position in order_
    // and (2D) the index of its mesh in meshes_, or kNotHere. Built once, so
    // position() and mesh_of() are O(1): the builder asks them per chip and
    // route, which at thousands of chips a scan each would make quadratic.
    static constexpr uint32_t kNotHere = UINT32_MAX;
    std::vector<uint32_t> position_of_, mesh_index_;
    bool ring_;
    FabricSpec spec_;
    uint32_t num_vcs_ = 1;
    uint32_t slots_ = 0;     // each channel's: spec_.slots a VC (bubble: use_vcs)
    bool fallback_ = false;  // some router has a fallback relay
    uint64_t l1_bytes_ = 0;
    std::vector<FabricRouterPlan> routers_;
    std::vector<int> forward_, backward_;             // by position: router index or -1
    std::vector<Mesh> meshes_;                        // 2D only
    std::vector<int> router_at_;                      // 2D: chip * 4 + compass -> router index or -1
    std::vector<std::pair<int, int>> cable_routers_;  // per cable: its routers at the from and to ends
    std::vector<abi::FabricRouteTable> tables_;       // 2D: per chip, by position
};

// The routing plane of a fabric's routers (its relays, if any, sit on another).
uint32_t routing_plane(const BoardInfo& board, const FabricBuilder& fabric);
// Whether the fabric has fallback relays (FabricSpec::fallback).
bool has_relays(const FabricBuilder& fabric);
// The cluster as the fabric routes it, for its control plane: a torus run
// as a mesh (topology: mesh) has no wraps, so the routes round a dead cable
// take only cables the fabric has.
ClusterTopology routed_topology(const ClusterTopology& cluster, const FabricBuilder& fabric);
// Writes `table` as router r's detour table (abi::FabricRouterConfig::
// detour_table, which r must have): its routes inside the mesh, or with
// `whole` its L1 entries too (between meshes).
void write_detour_table(ChipWriter& memory, const FabricRouterPlan& r, const abi::FabricRouteTable& table, bool whole);

// The 2D fabric over a cluster of one mesh or torus (the cables of routing
// plane `plane`); `wrap` false makes a mesh of a torus (its wrap cables
// unused: the spec's downshifted topologies). Throws weft::Error for a
// cluster that is not one 2D grid, or one with a cable down where the plane's
// control plane finds no tables round it (a cut mesh, or a torus run as a mesh).
FabricBuilder mesh_fabric(const BoardInfo& board, const ClusterTopology& topology, FabricSpec spec = {},
                          bool wrap = true, const RouteOf& routes = {}, uint32_t plane = 0);

// The 2D fabric over a cluster of several meshes and the cables between their
// exit nodes (first routing plane), with the control plane's tables (L0 per
// mesh around the cables that are down, L1 over the mesh graph). A torus runs
// as a mesh here. Throws weft::Error naming a mesh the cables do not join, or
// one cut by cables that are down.
FabricBuilder multi_mesh_fabric(const BoardInfo& board, const ClusterTopology& topology, FabricSpec spec = {});

}  // namespace weft::transport
