// Traffic over the fabric model, measured in virtual time: one packet's
// latency, one stream's rate, and the ring collectives as the packets their
// algorithm sends (each chip forwards a chunk once the one before it has
// arrived), so their time and bus bandwidth come out as on silicon.
#pragma once
#include <stdint.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/fabric_spec.h"
#include "fabric_model/costs.h"
#include "fabric_model/grid_cluster.h"
#include "fabric_model/ranks.h"
#include "fabric_model/timed_fabric.h"
#include "model/fabric_model.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/live_reroute.h"

namespace weft::fabric_model {

// A disruptor's act at a time of the traffic: the cable at an end
// ("5.E") is pulled, or plugged back in.
struct CableEvent {
    std::string end;
    uint64_t at_ns = 0;  // virtual time from the start of the traffic
    bool up = false;     // plugged back in; else pulled
};

struct ModelOptions {
    std::string cluster = "ring8";  // a file in clusters/
    // In place of the file: a grid of meshes made in memory (any number of
    // chips the fabric's tables address; `cluster` then names it).
    std::optional<GridCluster> grid;
    FabricSpec fabric;  // the cluster file's fabric: settings, as weft run takes them
    Costs costs;
    Ranks* ranks = nullptr;  // MPI ranks sharing the chips (ranks.h); null: this process alone
    // Cables out from the start, as CHIP.PORT ("5.E"): the fabric is planned
    // without them, as weft run plans the next op after a cable died.
    std::vector<std::string> unplugged;
    // Cables pulled or plugged back while the traffic runs (finish() acts
    // at each one's time), as `weft link` does to a QEMU cluster under an op.
    std::vector<CableEvent> cable_events;
};

// A host-model fabric over the cluster, planned as `weft run --transport
// fabric` plans it on QEMU, and its virtual-time engine.
class Simulation {
public:
    explicit Simulation(const ModelOptions& options);
    model::FabricModel& model() { return *model_; }
    TimedFabric& engine() { return *engine_; }
    uint32_t chips() const { return model_->chips(); }
    // Payload bytes a packet carries at most.
    uint32_t max_payload() const;
    // Queues `bytes` from `src` on `from` to `dst` on `to` as packets of at
    // most max_payload(), the last one adding 1 to `sem` on `to`; the first
    // waits until the word at `after` on `from` reaches `after_value` (0: none).
    void write(uint32_t from, uint32_t to, uint64_t dst, uint64_t src, uint64_t bytes, uint64_t sem, uint64_t after = 0,
               uint32_t after_value = 0);
    // 1D: one packet of `bytes` (at most max_payload()) from `src` on `from`
    // to `dst` on `count` chips in a row, from `first` (a neighbour of
    // `from`) on away from it, adding 1 to `sem` on each. Throws weft::Error
    // on a 2D fabric or for a payload larger than a packet.
    void multicast(uint32_t from, uint32_t first, uint8_t count, uint64_t dst, uint64_t src, uint32_t bytes,
                   uint64_t sem);
    // Runs to the end, pulling and plugging the options' cable_events at
    // their times; throws weft::Error with the stuck channels if the fabric
    // deadlocks or `limit_ns` of virtual time pass first.
    RunResult finish(uint64_t limit_ns = 60'000'000'000ull);
    // What each cable event did, one line each, in time order.
    const std::vector<std::string>& disruptions() const { return disruptions_; }

    // Disruptors. The cable on (chip, port) fails now: the control plane
    // decides, as on a QEMU cluster, and a 2D fabric's routers move onto new
    // tables round it while traffic runs (transport::reroute_live).
    // Virtual time passes while the move settles (a lane's packets keep
    // their order: transport::settle_move).
    transport::RerouteDecision fail_cable(uint32_t chip, uint32_t port);
    // It returns: its ends see it up, and its routers take it again, as on a
    // QEMU cluster (off their relays, or back from their detours once those
    // have drained); returns what became of it, or why they keep their way
    // round it until the next fabric.
    std::string restore_cable(uint32_t chip, uint32_t port);
    transport::ControlPlane& control() { return *control_; }

private:
    // A cable's two ends (chip, port), the given one first.
    using CableEnds = std::array<std::pair<uint32_t, uint32_t>, 2>;
    CableEnds ends_of(uint32_t chip, uint32_t port);
    // On ranks, the counts the cable's two routers took in off it (their
    // link words), which reroute_live reads, from the ranks that run them;
    // returns the stale copies it overwrote, to put back after.
    std::vector<std::pair<abi::FabricLinkWords*, abi::FabricLinkWords>> share_link_words(uint32_t chip,
                                                                                        uint32_t port);

    std::unique_ptr<model::FabricModel> model_;
    std::unique_ptr<TimedFabric> engine_;
    std::unique_ptr<transport::ControlPlane> control_;
    transport::PendingMove moving_;
    static constexpr int kSettleLooks = 1000;
    void settle_move();
    std::string return_from_detours(uint32_t chip, uint32_t port);
    // Cables that died and were not routed round (refused, or a mesh cut):
    // packets waiting on one are stuck, which finish() tells from a deadlock.
    struct Unrouted {
        CableEnds ends;
        std::string why;
    };
    std::vector<Unrouted> unrouted_;
    struct Scheduled {
        std::string end;
        uint32_t chip, port;
        uint64_t at_ns;
        bool up;
    };
    std::vector<Scheduled> scheduled_;  // by time; finish() takes them
    std::vector<std::string> disruptions_;
    void disrupt(const Scheduled& e);
};

struct Latency {
    uint32_t hops = 0;
    uint64_t ns = 0;  // the worker's first API call to the payload landing
};
Latency packet_latency(const ModelOptions& options, uint32_t from, uint32_t to, uint32_t payload_bytes);

struct Stream {
    uint64_t bytes = 0, packets = 0, ns = 0;
    double gbps() const { return ns ? double(bytes) / double(ns) : 0; }
    double mpps() const { return ns ? double(packets) * 1e3 / double(ns) : 0; }
};
// One worker on `from` writing `bytes` to `to` in packets of `payload_bytes`.
Stream stream(const ModelOptions& options, uint32_t from, uint32_t to, uint64_t bytes, uint32_t payload_bytes);

struct OpTime {
    std::string op;
    std::string algo;  // the CCL algorithm whose plan ran ("": the ring's packets, or shift)
    uint32_t chips = 0;
    uint64_t bytes = 0, ns = 0, events = 0;
    // What the data check said: "" when none ran (too large, or traffic the
    // check does not cover), else e.g. "every element matches the host reference".
    std::string checked;
    std::vector<std::string> disruptions;                                 // Simulation::disruptions()
    double algbw() const { return ns ? double(bytes) / double(ns) : 0; }  // GB/s
    double busbw() const;
};
// all_gather, reduce_scatter or all_reduce on the cluster's ring order;
// `bytes` is the op's size as nccl-tests count it (the output of all_gather,
// the input of the others). Arithmetic is not modelled: all_reduce moves its
// bytes as reduce-scatter then all-gather do. all_gather's output is checked.
OpTime ring_collective(const ModelOptions& options, const std::string& op, uint64_t bytes);
// The same on a simulation of the caller's, which may have a recorder or a
// sampler attached to its engine; it must carry no traffic yet.
OpTime ring_collective(Simulation& sim, const std::string& op, uint64_t bytes);
// Throws weft::Error for an op ring_collective does not run.
void check_collective(const std::string& op);

// Every chip writes `bytes` / chips at once to the chip `distance` further on
// in the ring order: traffic of several hops, all one way round, which a
// ring without its dateline deadlocks on. Its time: the last write landing.
OpTime ring_shift(Simulation& sim, uint32_t distance, uint64_t bytes);

struct RandomRun {
    uint64_t writes = 0, ns = 0, events = 0;
    std::vector<std::string> failed;  // the cables failed on the way ("chip 3 port 1: new tables")
};
// Random traffic from `seed`: `writes` writes between random pairs of chips,
// of random sizes, and `failures` cables (2D fabrics) failing at random times
// while it runs. Every write's bytes and semaphore are checked at the end;
// throws weft::Error naming the first wrong one. The same seed gives the same
// run, event for event: one thread runs every device in virtual-time order.
RandomRun random_traffic(const ModelOptions& options, uint64_t seed, uint32_t writes, uint32_t failures);

}  // namespace weft::fabric_model
