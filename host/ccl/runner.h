// Runs collective ops on a live cluster: plans the op over the cluster's
// cables, lowers it to worker programs and streams, places them with a
// transport (the EDM today) and the L1 allocator, launches the transport's
// kernels and the workers on every chip, and waits (with a deadline; a hang
// report on timeout).
//
//   ccl::CollectiveRunner run(cluster);
//   OpLayout l = run.layout(request);          // where inputs go, on every chip
//   ... write inputs ...
//   OpTiming t = run.run(request);             // request.algo may be "auto"
//   ... read outputs ...
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "ccl/algorithm_table.h"
#include "ccl/autotune.h"
#include "ccl/collective.h"
#include "ccl/lowering.h"
#include "ccl/placement.h"
#include "ccl/topology.h"
#include "common/knobs.h"
#include "driver/cluster.h"
#include "transport/edm/edm_transport.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/fabric_transport.h"
#include "transport/fabric/packet_log.h"

namespace weft::ccl {

struct OpTiming {
    std::string algo;  // the algorithm that ran ("auto" resolved)
    std::string transport = "edm";
    double seconds = 0;  // launch of the first kernel to the last one done
    uint64_t bytes_on_links = 0, hops = 0;
    uint32_t workers = 0, streams = 0;
    uint32_t planes = 1;    // cables each hop was striped over
    CostFeatures features;  // of the lowered op, what the cost model is fitted on
};

struct RunnerOptions {
    // Few, large messages: each costs the host a few core wake-ups whatever
    // its size, and the ERISC L1 (4 MiB) holds 8 x 128 KiB each way.
    uint32_t slots = knobs::knob("WEFT_CCL_SLOTS").fallback;
    // 0: the board's (fits_board_slot_size): up to 128 KiB, so that a sender
    // and a receiver channel fit each ERISC core's L1.
    uint32_t slot_size = 0;
    // Lanes per cable direction at most (lanes.h). 1: one sender and one
    // receiver worker per port, the measured-safe choice; more stripe pieces
    // over spare worker cores, each lane with its own EDM channel (and its
    // slots x slot_size of ERISC L1).
    uint32_t workers_per_link = knobs::knob("WEFT_CCL_WORKERS_PER_LINK").fallback;
    // Cables per hop at most where neighbours have several (lowering.h); 0: all.
    uint32_t planes = knobs::knob("WEFT_CCL_PLANES").fallback;
    std::chrono::milliseconds timeout{0};  // 0: from the op's size
    // How long an EDM waits on a dead cable before it fails the op, naming
    // the cable (transport::EdmOptions::progress_timeout_us).
    uint32_t edm_progress_timeout_us = transport::EdmOptions{}.progress_timeout_us;
    // What carries the streams: "edm" (a worker on every chip between
    // forwards), "fabric" (the cluster file's fabric, 1D or 2D: the routers
    // forward; started at the first op that needs it, stopped with the
    // runner, and meanwhile holding the ERISC cores of the ports it uses), or
    // "auto": the EDM where it can carry the algorithm, else the fabric.
    std::string transport = "auto";
    // Messages per fabric stream and their size (at most the cluster file's packet_bytes).
    transport::FabricStreamOptions fabric_streams;
    // The fabric's routers each log the latest this many packets they sent
    // over their cables (FabricSpec::record_packets); packet_log() reads them.
    // The fabric then runs on plane 0 alone, so the log holds every packet.
    uint32_t record_packets = 0;
    // Asked as an op's wait goes (every 0.05-0.1 s): true ends the op at once
    // as weft::Error ("interrupted"), its kernels stopped, so the cluster
    // stays usable. The Python module asks whether Ctrl-C was pressed.
    std::function<bool()> interrupted;
    // WEFT_CCL_SLOTS / WEFT_CCL_SLOT_SIZE override the EDM buffering,
    // WEFT_CCL_WORKERS_PER_LINK the lanes, WEFT_CCL_PLANES the planes.
    static RunnerOptions from_env();
};

// The largest slot size, a power of two up to WEFT_CCL_SLOT_SIZE's default,
// with which two channels of `slots` slots fit the free L1 of every ERISC
// core of the board (4 MiB cores: 128 KiB; qemu-virt32's 1.5 MiB: 64 KiB).
uint32_t fits_board_slot_size(const BoardInfo& board, uint32_t slots);

// An op launched and not yet waited for (CollectiveRunner::start): the
// host is free meanwhile; CollectiveRunner::wait ends it.
struct PendingOp {
    OpTiming timing;
    std::vector<Launch> launches;
    std::vector<std::pair<CoreRef, uint32_t>> launched;
    std::chrono::steady_clock::time_point started, launched_at;
    std::chrono::milliseconds deadline{0};
    bool waited = true;  // nothing left to wait for
};

class CollectiveRunner {
public:
    // Throws weft::Error for an unknown transport, or a fabric the cluster's cables cannot form.
    explicit CollectiveRunner(Machine& cluster, RunnerOptions options = RunnerOptions::from_env());
    // A communicator over some of the chips: rank r is chips[r], the ops
    // use only the cables between them, and runners over disjoint chips run
    // their ops at the same time. Over the EDM any chips; over the fabric one
    // whole mesh of the cluster (its chips in order: the mesh keeps its shape,
    // and its own fabric runs on its chips alone). Throws weft::Error for a
    // chip out of range or named twice, or the fabric over other chips.
    CollectiveRunner(Machine& cluster, std::vector<uint32_t> chips, RunnerOptions options = RunnerOptions::from_env());
    // ncclCommSplit: colour[c] is chip c's colour (< 0: in none); one runner
    // per colour over its chips, ranked by chip id.
    static std::map<int, std::unique_ptr<CollectiveRunner>> split(Machine& cluster, const std::vector<int>& colour,
                                                                  RunnerOptions options = RunnerOptions::from_env());
    ~CollectiveRunner();
    // The chip of each rank (the whole cluster: rank r is chip r).
    const std::vector<uint32_t>& chips() const { return chips_; }
    uint32_t chip_of(uint32_t rank) const { return chips_.at(rank); }
    const std::string& transport_name() const { return options_.transport; }

    const Topology& topology() const { return topo_; }
    const std::vector<uint32_t>& ring() const { return ring_; }
    const std::vector<uint32_t>& line() const { return line_; }
    double ring_stretch() const { return topo_.stretch(ring_, true); }

    OpLayout layout(const OpRequest& r) const;
    // The algorithm `auto` picks for r (or r.algo itself if fixed and valid).
    std::string resolve(const OpRequest& r) const;
    // The lowered op, without running it (the cost model and the tests use it).
    LoweredOp lower_op(const OpRequest& r, const std::string& algo) const;
    OpTiming run(const OpRequest& r);
    // run() in two halves: launches the op and returns; wait() blocks until
    // it is done (or throws at its deadline with the hang report). One op at
    // a time: starting another before waiting throws weft::Error.
    PendingOp start(const OpRequest& r);
    OpTiming wait(PendingOp& op);
    OpTiming wait(PendingOp&& op) { return wait(op); }  // runner.wait(all_reduce(...)): a blocking call
    // Every packet the running fabric's routers sent over their cables since
    // it started, as they logged it (RunnerOptions::record_packets). Throws
    // weft::Error when no fabric runs or it keeps no log.
    transport::PacketLog packet_log();
    const CostModel& cost_model() const { return model_; }
    void set_cost_model(CostModel m) { model_ = std::move(m); }

private:
    // The transport an op goes over: --transport edm or fabric fixes it;
    // auto takes the EDM where it can carry an algorithm and the fabric where
    // only it can.
    enum class Via { kEdm, kFabric };
    std::vector<Via> vias() const;  // in order of preference
    std::vector<uint32_t> workers(Via via) const;
    uint32_t message_bytes(Via via) const;
    // An algorithm lowered and placed: what start() launches.
    struct Fitted {
        std::string algo;
        LoweredOp op;
        PlacedOp placed;
        uint32_t message_bytes = 0;  // of its streams
        Via via = Via::kEdm;
    };
    // Fabric stream messages are halved to fit the workers' L1 down to this.
    static constexpr uint32_t kMinFabricMessage = 1024;
    // The algorithm to run (auto: the cheapest under the cost model that fits
    // the cores' L1), lowered and placed.
    Fitted choose(const OpRequest& r) const;
    // Places `op` (algo's lowering over `via`); over the fabric, halves the
    // stream messages (re-lowering) while they do not fit. Throws
    // transport::L1Shortage if even the smallest do not.
    Fitted fit(const OpRequest& r, const std::string& algo, LoweredOp op, Via via) const;
    // fit over the first of vias() that can carry algo. Throws the
    // preferred transport's reason when none can.
    Fitted fit_any(const OpRequest& r, const std::string& algo) const;
    // An op its transport runs itself (a row with no plan), over the first
    // of vias() offering the capabilities it needs. Throws the preferred
    // transport's reason when none does.
    Fitted fit_native(const OpRequest& r, const Algorithm& a) const;
    LoweredOp lower_op(const OpRequest& r, const std::string& algo, uint32_t message_bytes, Via via) const;
    transport::EdmOptions edm_options() const;
    std::unique_ptr<transport::Transport> make_transport(transport::L1Allocator& mem, uint32_t message_bytes,
                                                         Via via) const;
    // An L1 allocator that keeps out of resident images' L1 (over the
    // fabric, its routers' too, running or about to).
    transport::L1Allocator allocator(Via via) const;
    void ensure_fabric();
    // After an op over the fabric failed: stops the fabric, then rethrows `e`
    // (of its own type) with what stopping it took.
    [[noreturn]] void drop_fabric(const Error& e);
    // A fabric per routing plane the cluster file's fabric runs on, plane 0
    // first; a plane whose cables cannot carry one is left out while another
    // can. Throws plane 0's reason when none can. `now`: the cluster's
    // cables (Cluster::topology).
    std::vector<transport::FabricBuilder> plan_fabric(const ClusterTopology& now);
    // The planes' fabrics as the transport and its routing take them.
    std::vector<const transport::FabricBuilder*> fabric_planes() const;
    // Stops every plane's fabric; returns what was forced ("" for a clean stop).
    std::string stop_fabrics();
    // What an op's wait asks as it goes: each plane's fabric is rerouted
    // live round its own dead cables (Fabric::tend); what cannot be is the
    // op's fault.
    std::string tend_fabrics();
    // The cables among the communicator's chips now, renumbered by rank
    // (the cluster's own where it spans the whole cluster).
    ClusterTopology cables() const;
    // `now` (the whole cluster's) the same way.
    ClusterTopology ours(const ClusterTopology& now) const;
    std::chrono::milliseconds deadline(const LoweredOp& op) const;

    Machine& cluster_;
    RunnerOptions options_;
    std::vector<uint32_t> chips_;                        // rank -> chip
    bool whole_;                                         // chips_ are the cluster's, rank r chip r
    Topology topo_;                                      // in ranks
    std::vector<transport::FabricBuilder> fabric_plan_;  // by plane; empty: no fabric
    std::vector<bool> planned_cables_;                   // each cable up when it was planned
    static std::vector<bool> up_of(const ClusterTopology& now);
    void replan_if_cables_changed(const ClusterTopology& now);
    bool shaped_ = false;                                     // some cable was shaped when the last op started
    std::vector<std::unique_ptr<transport::Fabric>> fabric_;  // by plane, running once an op needed them
    std::vector<uint32_t> ring_, line_, workers_;
    CostModel model_;
    bool busy_ = false;  // an op started and not yet waited for
};

}  // namespace weft::ccl
