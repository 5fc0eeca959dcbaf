// A fabric (1D or 2D) on host-board chips: the cluster's chips in one process
// (HostCluster), a real router (firmware/fabric/router) on the ERISC core of
// every port the host fabric builder placed one on, workers that send through
// the real worker API (firmware/fabric/connection), and the devices library's
// NoC and Ethernet engines between them. One thread steps the engines, the
// routers and the workers in turn on one fake clock: deterministic, and any
// interleaving a test wants.
#pragma once
#include <stdint.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/connection.h"
#include "fabric/router.h"
#include "model/host_cluster.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/l1_allocator.h"

namespace weft::model {

// One packet a model worker sends: everything but the route's direction,
// which its connection fixes.
struct ModelPacket {
    fabric::Route route;
    uint8_t command = abi::kFabricWrite;
    uint64_t dst = 0, sem = 0;  // board addresses on the destination chips
    uint64_t src = 0;           // board address on the sender's chip
    uint32_t bytes = 0, inc = 0;
    uint64_t scatter[2] = {};
    // Traffic with dependencies: sent only once the word at `after` (a board
    // address on the sender's chip; 0: none) has reached `after_value`.
    uint64_t after = 0;
    uint32_t after_value = 0;
};

class FabricModel {
public:
    // `cluster` names a file in clusters/; its chips in id order form the line
    // or ring, each cabled to the next.
    FabricModel(const std::string& cluster, bool ring, FabricSpec options);
    // A 2D fabric over `cluster`: one mesh or torus (transport::mesh_fabric),
    // its L0 tables from `routes` (a control plane's) or dimension order; or
    // several meshes (transport::multi_mesh_fabric, the control plane's tables).
    FabricModel(const std::string& cluster, FabricSpec options, const transport::RouteOf& routes = {});
    // Any fabric over `cluster`, planned by `plan` on the host-model machine.
    using Plan = std::function<transport::FabricBuilder(HostCluster&)>;
    FabricModel(const std::string& cluster, const Plan& plan);
    // The same over a cluster made in memory (one no cluster file holds:
    // more chips than kMaxClusterChips).
    // `ram_bytes`: what each chip keeps of the board's RAM (HostCluster).
    // `held`, when given, names the chips whose routers this process runs
    // (an MPI rank's): the others' routers are planned but never written
    // into their chips' memory nor started, so a rank's memory grows with
    // its own chips. Writes to them (the control plane's) still land.
    FabricModel(ClusterSpec cluster, const Plan& plan, uint64_t ram_bytes = 0, std::vector<bool> held = {});

    HostCluster& cluster() { return cluster_; }
    const transport::FabricBuilder& fabric() const { return *fabric_; }
    uint32_t chips() const { return spec_.num_chips; }
    uint64_t dram(uint32_t offset) const { return spec_.board.dram.base + offset; }
    uint8_t* bytes(uint32_t chip, uint64_t addr, uint64_t len) { return cluster_.bytes(chip, addr, len); }
    uint32_t word(uint32_t chip, uint64_t addr) { return *reinterpret_cast<uint32_t*>(bytes(chip, addr, 4)); }

    // A worker on (chip, core) sending `packets` in order toward `direction`
    // on lane `lane`; returns its index.
    size_t add_worker(uint32_t chip, uint32_t core, transport::FabricDirection direction, uint32_t lane,
                      std::deque<ModelPacket> packets);
    // A packet from `from` to `to` the short way: fills in the route and
    // queues it on that worker's connection (one worker per chip, direction
    // and lane, made on first use on the board's worker core number `lane`).
    void send(uint32_t from, uint32_t to, ModelPacket p, uint32_t lane = 0);

    // One round: the devices, every router, every worker; then 10 µs pass.
    // Checks the credit invariant: no receiver channel ever holds more
    // packets than it has slots.
    void step();
    // Steps until every worker has sent everything and the cluster is quiet,
    // or `max_steps` ran out; returns the steps taken.
    int run(int max_steps);
    bool idle();
    // Steps in which nothing at all moved, most recently in a row.
    int stalled_steps() const { return stalled_; }
    // Routers sleep as on the cluster: a poll that moves nothing puts one to
    // sleep until the devices or the host touch what its wait is rung for
    // (devices/doorbell.h), or its fallback alarm. Alarms that found work to
    // do: rings that were missed (each costs the cluster 100 ms).
    uint32_t late_wakes() const { return late_wakes_; }

    // 2D: the route from `chip` to `to` as a worker on `chip` looks it up in
    // its chip's L0 table (Connection::route_to, a NoC read of the router's copy).
    fabric::Route look_up(uint32_t chip, uint32_t to, uint8_t* first);

    const abi::FabricRouterStatus& status(uint32_t chip, transport::FabricDirection direction);
    // Every router gets the host's command (abi::FabricRouterCommand).
    void command_all(uint32_t command);
    uint32_t packets_left() const;
    // Events posted on `chip` of `kind` so far.
    uint32_t events(uint32_t chip, uint32_t kind);
    // Runs on every step, after the invariant check (tests add their own).
    std::function<void()> on_step;

    // For a scheduler of its own (the fabric model's virtual time) in place
    // of step(): each router and worker polled alone, as `core`.
    size_t router_count() const { return routers_.size(); }
    host_board::Core& router_core(size_t r) { return *routers_[r].core; }
    // Whether this process runs `chip`'s routers (the constructor's `held`).
    bool holds(uint32_t chip) const { return held_.empty() || held_[chip]; }
    bool holds_router(size_t r) const { return routers_[r].router != nullptr; }
    // A router this process does not hold: its plan's config, board
    // addresses (to reach them: at()), and a status of zeros.
    const abi::FabricRouterConfig& router_config(size_t r) const;
    const abi::FabricRouterStatus& router_status(size_t r) const;
    // What a router's config address points at, on router r's chip,
    // whether this process holds it or not.
    template <typename T>
    const T& at(size_t r, uint64_t address) {
        if (holds_router(r)) return *reinterpret_cast<const T*>(address);
        return *reinterpret_cast<const T*>(bytes(routers_[r].chip, address, sizeof(T)));
    }
    uint32_t router_chip(size_t r) const { return routers_[r].chip; }
    bool poll_router(size_t r);
    // The slots router r's channels have in use: packets not yet passed on,
    // and those passed on whose slots are not yet free again.
    uint32_t slots_in_use(size_t r) const;
    // What router r would post as its wait_value going to sleep now.
    uint32_t router_wait_value(size_t r);
    size_t worker_count() const { return workers_.size(); }
    host_board::Core& worker_core(size_t w) { return *workers_[w]->core; }
    uint32_t worker_chip(size_t w) const { return workers_[w]->chip; }
    bool poll_worker(size_t w) { return poll(*workers_[w]); }
    // It sent everything and closed its connection (a program: it ended).
    bool worker_done(size_t w) const {
        const Worker& k = *workers_[w];
        return k.done ? k.done() : k.packets.empty() && k.closed;
    }

    // A worker of the caller's own, a poll() state machine: `step` runs as
    // `core` of `chip` (one step that never blocks; true when it moved
    // something), `done` says it has finished. The engines poll it as any
    // worker. Returns its index.
    size_t add_program(uint32_t chip, uint32_t core, std::function<bool()> step, std::function<bool()> done);
    // A connection for such a worker, on `lane` of the router toward `direction`.
    fabric::Connection connect(uint32_t chip, uint32_t core, transport::FabricDirection direction, uint32_t lane);
    // Where the fabric and the workers' connections took L1; a program's words go elsewhere.
    transport::L1Allocator& l1() { return l1_; }

private:
    static constexpr int kPollsPerWake = 64;  // a router that always moves still lets the devices run
    struct RouterCore {
        host_board::Core* core;
        abi::FabricRouterConfig* config;
        std::unique_ptr<fabric::Router> router;
        std::unique_ptr<uint64_t[]> slots;  // its slot records (Router::slot_bytes)
        uint32_t chip = 0, core_id = 0;
        bool asleep = false;
        uint32_t wait_value = 0;  // as posted when it went to sleep
        uint64_t slept_at = 0;    // mtime
    };
    struct Worker {
        host_board::Core* core;
        uint32_t chip;
        abi::FabricWorkerConnection* connection;
        std::unique_ptr<fabric::Connection> conn;
        std::deque<ModelPacket> packets;
        bool closed = false;
        std::function<bool()> step, done;  // a program's (add_program)
    };
    void start_routers();
    // A worker's connection the builder placed, its addresses made this process's.
    abi::FabricWorkerConnection* connection_for(uint32_t chip, uint32_t core, transport::FabricDirection direction,
                                                uint32_t lane);
    bool poll(Worker& w);
    // step(): polls router r if it is awake or `touched` (its chip's) rings it.
    bool step_router(size_t r, const Touched& touched);
    void check_credits();
    bool slots_all_back() const;

    ClusterSpec spec_;
    HostCluster cluster_;
    transport::L1Allocator l1_;
    std::unique_ptr<transport::FabricBuilder> fabric_;
    std::vector<bool> held_;  // empty: every chip
    std::vector<RouterCore> routers_;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::vector<int> worker_of_;  // (chip, direction, lane) -> worker index, -1: none yet
    int stalled_ = 0;
    uint32_t late_wakes_ = 0;
};

}  // namespace weft::model
