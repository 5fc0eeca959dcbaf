// A running fabric on a live cluster: a `fabric_router` resident image on
// every port the fabric builder placed a router on, started together (no
// worker may send before every router runs) and stopped together.
//
//   auto fabric = transport::Fabric::start(cluster, transport::fabric_over(cluster, /*ring=*/true), 5s);
//   ... kernels send with firmware/fabric/connection.h, connected by fabric->builder().connect(...) ...
//   fabric->stop();   // or let it go out of scope
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "driver/cluster.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/live_reroute.h"

namespace weft::transport {

// The fabric over the cluster's chips: its ring order (ring) or line order,
// each pair joined by their working cable of routing plane `plane` (the
// board's port planes: each plane is a fabric of its own, on its own ports'
// ERISC cores, and its packets never enter another's routers). Throws
// weft::Error naming the chips that are not cabled as a line or ring needs.
FabricBuilder fabric_over(Machine& machine, bool ring, FabricSpec options = {}, uint32_t plane = 0);
FabricBuilder fabric_over(const BoardInfo& board, const ClusterTopology& topology, bool ring, FabricSpec options = {},
                          uint32_t plane = 0);

// The fabric a cluster file's `fabric:` section asks for, over the cluster's
// cables: topology auto is 2D on one mesh or torus of at least 2x2, else a
// ring where the ring order closes over cables, else a line. packet_bytes 0
// (unset) is the largest power of two up to 16 KiB with which every router's
// channels fit its ERISC core's free L1, as the EDM's slots are sized to the
// board. Throws weft::Error, prefixed with `where` ("FILE:LINE: "), naming
// the settings when they cannot fit the board. `plane`: the routing plane
// whose cables it runs on (a fabric of several meshes runs on plane 0 only).
FabricBuilder cluster_fabric(const BoardInfo& board, const ClusterTopology& topology, const FabricSpec& spec,
                             const std::string& where = "", uint32_t plane = 0);

// The fabrics of the first `planes` routing planes (FabricSpec::planes_on)
// that have one, as weft run plans them: a plane that lost a cable its ring
// or line needs plans none, and the others carry the op. `first_only`: stop
// at the first that plans (a model runs one fabric). Throws the first
// plane's error when no plane has a fabric.
std::vector<FabricBuilder> plane_fabrics(const BoardInfo& board, const ClusterTopology& topology,
                                         const FabricSpec& spec, uint32_t planes, const std::string& where = "",
                                         bool first_only = false);

// The spec's downshifted 1D topologies on one mesh or torus: a fabric per
// row (over its E/W cables) and one per column (N/S), each a ring where its
// wrap cable exists (ring true on a torus), else a line. Row y is element y,
// column x element height + x. They use distinct ports, so all run at once.
// Throws weft::Error for a cluster that is not one 2D grid.
std::vector<FabricBuilder> rows_and_columns(Machine& machine, bool ring, FabricSpec options = {});

class Fabric {
public:
    // Throws weft::Error naming the router that did not start; the routers
    // already started are stopped again.
    // `chips`: the cluster chip of each of the builder's chips where the
    // fabric spans part of the cluster (a communicator over one mesh, built
    // in its ranks); empty where the builder's chips are the cluster's. Such
    // a fabric's control plane holds the cables among its chips, in its
    // numbers, and reroutes round one that dies as over the whole cluster.
    static std::unique_ptr<Fabric> start(Machine& cluster, FabricBuilder builder, std::chrono::milliseconds timeout,
                                         std::vector<uint32_t> chips = {});
    ~Fabric();
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;

    const FabricBuilder& builder() const { return builder_; }
    // Why the fabric cannot carry traffic now, naming the router: its chip
    // died, its image ended (a fault), or it has held a packet for its
    // timeout (FabricSpec::timeout_us) on a cable that is down. "" while
    // healthy. Cheap (reads the routers' status words): an op's wait asks it
    // as it goes, so a dead cable is reported in seconds, not at the deadline.
    std::string fault() const;
    // What an op's wait calls as it goes: a cable that died under the fabric
    // is routed round live where the control plane finds a way (live_reroute.h:
    // deadlock-free tables in 2D, back round a ring in 1D; a fabric with
    // fallback relays moves by itself); then fault(), so what cannot be
    // rerouted still fails the op, naming the cable. A cable the control plane
    // finds no way round (a cut mesh, ring or line, tables that could
    // deadlock), or a packet a router dropped, throws weft::Error saying so.
    // A move round a dead cable settles over several calls (settle_move),
    // the fabric's worker lanes held meanwhile; nothing else moves until it
    // ends. A cable that comes back takes its routers back: from their
    // fallback relays at once (rejoin_live), from detours once what they
    // sent round is delivered (return_from_detours).
    std::string tend();
    // An op ended while a move settled: its lanes would wait into the next
    // op. The fabric is quiet now, so looks a few ms apart end it at once.
    void finish_move();
    // Stops every router (each lets what it issued finish; a router whose
    // cable is down drops what it queued for it). A router that does not stop
    // in time is stopped by force; returns what was forced, one line per
    // router ("" for a clean stop). Idempotent.
    std::string stop(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

private:
    void check_dropped() const;
    void in_own_numbers(const std::function<void(Machine&)>& act);
    bool settle(Machine& machine);
    bool settling(const FabricRouterPlan& plan) const;
    void reroute_dead_cables(Machine& machine);
    void rejoin_returned_cables(Machine& machine);
    void return_from_tables(Machine& machine, size_t router);
    std::function<void(uint32_t chip, uint32_t core)> wake_router();
    Fabric(Machine& cluster, FabricBuilder builder, std::vector<uint32_t> chips);
    uint32_t chip_id(uint32_t chip) const { return chips_.empty() ? chip : chips_.at(chip); }
    uint32_t index_of(uint32_t cluster_chip) const;  // chip_id's inverse
    std::string router_name(const FabricRouterPlan& p) const;
    std::string cable_name(const FabricRouterPlan& p, const abi::PortState& port) const;

    Machine& cluster_;
    FabricBuilder builder_;
    std::vector<uint32_t> chips_;  // the builder's chip -> the cluster's; empty: the same
    ControlPlane control_;  // the cables among its chips as the fabric was built (its numbers), and what died since
    std::set<std::pair<uint32_t, uint32_t>> rerouted_;  // (chip, port) of cables routed round live, its numbers
    // Cables routed round by tables that came back: by the index of the
    // router tend found first, when their return began and its drain's look.
    struct Returning {
        std::chrono::steady_clock::time_point since;
        PendingReturn back;
    };
    std::map<size_t, Returning> returning_;
    std::set<size_t> kept_round_;                       // routers whose cables came back but keep their detours
    PendingMove moving_;                                // a move round a dead cable under way
    std::chrono::steady_clock::time_point moving_since_;
    size_t started_ = 0;                                // routers 0..started_-1 run
};

}  // namespace weft::transport
