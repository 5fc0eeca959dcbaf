// The fabric's control plane (the TT-Fabric spec's): it owns the routing
// tables (each mesh's L0 routes, the L1 exits between meshes), the state of
// every cable, and a table epoch that changes whenever the tables do. The
// fabric builder places and links routers; it asks the control plane which
// route each table entry holds. The same code serves the QEMU cluster and a
// host model of the fabric.
//
// When a cable dies the control plane decides how traffic goes on:
//  - another plane's cable joins the same two chips the same way and the
//    fabric has relays on it: the routers fall back to it (the spec's
//    Ethernet fallback channel), the tables stay;
//  - else new L0 tables for its mesh that avoid the cable (on a torus the
//    other way round a ring, on a mesh the other dimension first; where
//    mixing the orders could deadlock, on either, up*/down* routes over the
//    live cables), accepted only if their channel dependency graph has no cycle;
//  - else the chips some route cannot reach are named (the mesh is cut).
// When the cable returns, so do the original routes.
#pragma once
#include <stdint.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/board.h"
#include "driver/cluster_topology.h"
#include "transport/fabric/l1_routing.h"
#include "transport/fabric/routing2d.h"

namespace weft::transport {

struct RerouteDecision {
    // kRefused: routes around it exist, but every set found could deadlock.
    enum Kind { kNone, kFallback, kNewTables, kCutOff, kRefused } kind = kNone;
    uint32_t chip = 0, port = 0;        // the cable, from the side named
    uint32_t fallback_port = 0;         // kFallback: the chip's cable that takes over
    std::vector<std::string> changed;   // kNewTables: "3->1: WN (was NW)", the routes that moved
    std::vector<uint32_t> unreachable;  // kCutOff: chips some route of the mesh cannot reach
    std::string why;                    // one line for the event log
};

class ControlPlane {
public:
    // Cables already down in `topology` are routed around from the start.
    // `plane`: the routing plane whose cables the tables use (a fabric runs
    // on one). `relays`: the fabric has fallback relays on another plane, so
    // a cable with a twin on another plane falls back to it; without them
    // (a fabric per plane, the collectives striped over all) it gets new tables.
    ControlPlane(const BoardInfo& board, ClusterTopology topology, uint32_t plane = 0, bool relays = true);

    uint32_t epoch() const { return epoch_; }
    const ClusterTopology& topology() const { return topology_; }
    // The route inside `from`'s mesh, in the spec's letters (chips numbered in
    // the mesh), as the tables hold it now. Throws weft::Error off the mesh.
    std::string l0_route(const Mesh& mesh, uint32_t from, uint32_t to) const;
    const MeshRouting& l1() const { return l1_; }
    // Chip `chip`'s way out toward mesh `to_mesh` (a cluster chip id; the
    // builder's ExitOf): the L0 route to its L1 exit node, then that node's
    // cable into the next mesh. kNoRoute for a chip taken out. Throws
    // weft::Error for a mesh no working cable reaches.
    std::string exit_route(uint32_t chip, uint32_t to_mesh) const;
    // The same by other routes inside the mesh: `inside(from, to)` the L0
    // route between two of its chips (cluster ids) in the spec's letters, as
    // a running fabric's main tables hold it where only detours avoid a dead
    // cable.
    std::string exit_route(uint32_t chip, uint32_t to_mesh,
                           const std::function<std::string(uint32_t from, uint32_t to)>& inside) const;
    // "" while every chip of `mesh` reaches every other by its tables; else
    // why not (the chips cut off, or no deadlock-free routes).
    std::string unusable(const Mesh& mesh) const;

    // The cable on (chip, port) went down or came back; the tables change
    // with the decision (and the epoch with them).
    RerouteDecision cable_down(uint32_t chip, uint32_t port);
    void cable_up(uint32_t chip, uint32_t port);
    // Whether the cable on (chip, port) is down, as the control plane knows it.
    bool is_down(uint32_t chip, uint32_t port) const { return dead_.count({chip, port}) != 0; }
    // Takes a failed row (y) or column (x) of a mesh out of the fabric (the
    // spec's downshifted mesh): every cable of its chips is dead, the other
    // chips get tables among themselves (a removed chip's entries are kNoRoute).
    RerouteDecision remove_row(uint32_t mesh_id, uint32_t y);
    RerouteDecision remove_column(uint32_t mesh_id, uint32_t x);
    bool removed(uint32_t chip) const { return removed_.count(chip) != 0; }

private:
    // Routes for `mesh` with the cables now down; empty if some pair has none.
    // Routes for `mesh` [from * chips + to] with the cables now down; the
    // chips some route cannot reach go to *unreachable.
    std::vector<std::string> routes_avoiding(const Mesh& mesh, std::set<uint32_t>* unreachable) const;
    std::string route_avoiding(const Mesh& mesh, uint32_t from, uint32_t to) const;
    std::vector<std::string> updown_routes(const Mesh& mesh) const;
    RerouteDecision reroute_mesh(const Mesh& mesh, RerouteDecision d);
    RerouteDecision decide_tables(const Mesh& mesh, RerouteDecision d);
    RerouteDecision decide_exits(RerouteDecision d);
    RerouteDecision remove_chips(uint32_t mesh_id, const std::vector<uint32_t>& chips);
    RerouteDecision remove_line(uint32_t mesh_id, bool row, uint32_t at);
    bool crosses_dead(const Mesh& mesh, uint32_t from, const std::string& route) const;
    void index_cables();
    const LinkInfo* link_at(uint32_t chip, uint32_t port) const;

    const BoardInfo& board_;
    uint32_t plane_;
    bool relays_;
    ClusterTopology topology_;
    // Per chip, its cables' indices in topology_.links(): from
    // cable_index_[cable_start_[chip]] to before cable_start_[chip + 1]. The
    // links keep their order for the control plane's life (only their state
    // changes), and routing round a dead cable asks per step, which must not
    // scan every cable of a large cluster.
    std::vector<uint32_t> cable_start_, cable_index_;
    MeshRouting l1_;
    uint32_t epoch_ = 1;
    std::set<std::pair<uint32_t, uint32_t>> dead_;  // (chip, port), both ends
    std::set<uint32_t> removed_;                    // chips taken out of the fabric
    // Per mesh id: its routes [from * chips + to] while they differ from DOR.
    std::vector<std::pair<uint32_t, std::vector<std::string>>> rerouted_;
    std::vector<std::pair<uint32_t, std::string>> unusable_;  // per mesh id: why its tables fail
};

}  // namespace weft::transport
