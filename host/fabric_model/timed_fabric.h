// The fabric model's engine: a host-model fabric (model::FabricModel: the
// real router firmware and worker API on host-memory chips) run by events in
// virtual time instead of in lock-step rounds. The data plane is replaced,
// not the firmware: each core's NoC ring and each port's Ethernet ring is
// served one command at a time, taking what Costs says a silicon chip would,
// and a router or worker is polled when something it may wait for changed,
// then stays busy for what its poll did (Costs::router_packet_ns per packet);
// what it issued starts Costs::router_latency_ns after the poll.
//
// One event per device command, packet delivery and poll. Events of equal
// time run in an order that depends on the fabric alone (the chip they act
// on, the chip whose event made them, and that chip's count of events made),
// not on the host: a run is the same every time, and the same on any number
// of MPI ranks (ranks.h). Ranks own chips (whole meshes where there are
// enough); a packet crossing to another rank's chip travels as a message, and
// the ranks advance in windows one cable latency long, the lookahead no
// crossing can undercut (conservative synchronization).
#pragma once
#include <stdint.h>

#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric_model/costs.h"
#include "model/fabric_model.h"

namespace weft::fabric_model {

// One packet crossing one cable: what a traffic recorder sees.
struct PacketHop {
    uint64_t left_ns = 0;    // its first byte went onto the cable
    uint64_t landed_ns = 0;  // it landed in the peer's receiver slot
    uint32_t from_chip = 0, port = 0, to_chip = 0;
    uint32_t bytes = 0;  // header and payload
    // As it crossed: the sending router has already counted this hop off
    // (hops, route), so only the fields a packet keeps end to end identify it.
    const abi::FabricPacketHeader* header = nullptr;
};

struct RunResult {
    bool finished = false;  // every worker sent everything and nothing is left in flight
    bool stuck = false;     // no event is left, yet packets wait: a deadlock
    uint64_t end_ns = 0;    // virtual time of the last event
    uint64_t events = 0;    // events run in this call
};

class Ranks;

// Which rank runs each chip: whole meshes per rank where there are at least
// as many meshes as ranks, else runs of chips in id order.
std::vector<uint32_t> chip_owners(const ClusterTopology& topology, uint32_t chips, uint32_t ranks);

class TimedFabric {
public:
    // `ranks` (default: this process alone) share the chips; every rank
    // builds the same model and runs the same traffic calls.
    TimedFabric(model::FabricModel& model, const Costs& costs, Ranks* ranks = nullptr);
    ~TimedFabric();
    // This rank runs `chip`'s events (traffic from elsewhere is skipped).
    bool owns(uint32_t chip) const;
    Ranks& ranks() { return *ranks_; }

    model::FabricModel& model() { return model_; }
    const Costs& costs() const { return costs_; }
    uint64_t now_ns() const { return now_; }
    uint64_t events_run() const { return events_run_; }

    // Runs until every worker is done and every ring is empty, no event is
    // left (stuck), or virtual time passes `until_ns`. Workers the model
    // gained since the last call start now.
    RunResult run(uint64_t until_ns = UINT64_MAX);

    // A disruptor: the cable on (chip, port) fails or returns, as a pulled
    // cable does: both ends see it, what is on the wire is lost, and queued
    // commands wait while it is down.
    void set_cable(uint32_t chip, uint32_t port, bool up);
    // Wakes every router (after the host wrote a command into their status),
    // now or, on every rank alike, at `at_ns` (a look of the host's).
    void wake_routers(uint64_t at_ns = 0);

    // The first virtual time the word at `address` (a board address) on
    // `chip` is at least `value`: a delivery's time, seen where it lands.
    size_t watch(uint32_t chip, uint64_t address, uint32_t value);
    uint64_t reached(size_t watch) const { return watches_[watch].reached; }  // UINT64_MAX: not yet
    // The latest of `watches` over every rank; UINT64_MAX if one is not reached.
    uint64_t latest(const std::vector<size_t>& watches);

    // Called when a fabric packet lands across a cable (a send of bytes that
    // starts with a packet header; the routers' credit words are not packets).
    std::function<void(const PacketHop&)> on_packet_hop;
    // Called when virtual time is about to move from `from_ns` to `to_ns`:
    // the fabric's state now is its state all that while (a sampler's hook;
    // nothing happens in between).
    std::function<void(uint64_t from_ns, uint64_t to_ns)> on_advance;

private:
    enum Kind : uint8_t { kPoll, kNocDone, kEthSent, kDeliver, kEthAcked, kMathDone };
    struct Event {
        uint64_t t;
        uint32_t chip, origin;  // it acts on `chip`; an event of `origin` (or the host) made it
        uint64_t count;         // origin's count of events made (the host's: per chip)
        Kind kind;
        uint32_t
            a;  // kPoll: the poller; kNocDone, kMathDone: chip's core slot; kEthSent, kEthAcked: port slot; kDeliver: delivery
        uint32_t b = 0;  // kEthAcked: the cable's failures when the command left
        bool operator>(const Event& o) const {
            if (t != o.t) return t > o.t;
            if (chip != o.chip) return chip > o.chip;
            if (origin != o.origin) return origin > o.origin;
            return count > o.count;
        }
    };
    // A router (the first router_count) or a worker, on one core of one chip.
    struct Poller {
        uint32_t chip = 0, core = 0, port = UINT32_MAX;  // port: a router's
        uint64_t busy_until = 0, work = 0;               // work: packets it sent or handled so far
        bool scheduled = false;
        uint32_t wait_value = 0;  // a router's, posted when it last found nothing to do
    };
    // A core's NoC or math ring, or a port's Ethernet ring.
    struct Server {
        uint64_t free_at = 0;
        bool scheduled = false;
        uint32_t framed = 0;  // Ethernet: ring index of the next command to send (head: the next to be acknowledged)
    };
    struct Delivery {
        uint32_t from_chip = 0, port = 0, chip = 0;
        uint32_t cable_life = 0;  // the sending port's count of failures when it left
        bool word = false;        // a word written across (a credit), not bytes
        uint64_t dst = 0, left_ns = 0;
        std::vector<uint8_t> bytes;
    };

    void schedule(uint64_t t, uint32_t chip, Kind kind, uint32_t a, uint32_t b = 0);
    void run_event(const Event& e);
    void send_across(const Delivery& d, uint64_t t, uint32_t chip);
    void deliver_held(uint32_t slot);
    void take_across(const std::vector<uint8_t>& in);
    bool owned_rings_idle();
    void add_pollers();
    void wake(uint32_t poller, uint64_t t);
    void wake_chip(uint32_t chip, uint64_t t);
    void wake_core(uint32_t chip, uint32_t core, uint64_t t);
    // The core's own command finished: as the bridge's doorbell, not for a
    // router that waits on none of its own (abi::kWaitOthersOnly).
    void wake_for_own(uint32_t chip, uint32_t core, uint64_t t);
    // Whoever may wait on what was written at `address` (a host address of
    // `chip`): the pollers of the core whose L1 holds it, else (DRAM) the
    // chip's workers: routers wait on nothing outside their L1.
    void wake_written(uint32_t chip, uint64_t address, uint64_t t);
    void poll(uint32_t poller);
    uint64_t router_work(size_t r) const;
    void kick_noc(uint32_t chip, uint32_t core, uint64_t t);
    void kick_eth(uint32_t chip, uint32_t port, uint64_t t);
    void noc_done(uint32_t slot);
    void kick_math(uint32_t chip, uint32_t core, uint64_t t);
    void math_done(uint32_t slot);
    void eth_sent(uint32_t slot);
    void eth_acked(uint32_t slot, uint32_t cable_life);
    void reset_eth(uint32_t slot);
    uint32_t new_delivery();
    void deliver(uint32_t index);
    void serve_now(uint32_t chip);
    void check_watches(uint32_t chip);
    bool quiet();
    abi::ChipControlBlock& control(uint32_t chip) { return model_.cluster().memory(chip).control(); }

    model::FabricModel& model_;
    Costs costs_;
    uint32_t cores_, ports_;
    uint64_t now_ = 0, events_run_ = 0;
    std::unique_ptr<Ranks> own_ranks_;  // when none were given
    Ranks* ranks_;
    std::vector<uint32_t> owner_;  // per chip: its rank
    static constexpr uint32_t kHost = UINT32_MAX;
    uint32_t origin_ = kHost;                     // whose event runs now
    std::vector<uint64_t> made_;                  // per chip: events its events made
    std::vector<uint64_t> host_made_;             // per chip: events the host made for it
    std::vector<std::vector<uint8_t>> outgoing_;  // per rank: deliveries to its chips
    std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
    std::vector<Poller> pollers_;
    std::vector<std::vector<uint32_t>> pollers_of_chip_;
    std::vector<std::vector<uint32_t>> pollers_of_core_;  // chip * cores + core
    std::vector<int> router_of_port_;                     // chip * ports + port -> poller, -1: none
    std::vector<Server> noc_, math_, eth_;                // chip * cores + core (NoC, math), chip * ports + port
    std::vector<uint32_t> failures_;                      // chip * ports + port: times its cable failed
    std::vector<Delivery> deliveries_;
    std::vector<uint32_t> free_deliveries_;
    // By the sending port (chip * ports + port): deliveries its cable held
    // when it failed, in order. A TT-link cable keeps what it had not had
    // acknowledged and delivers it once it is plugged back in.
    std::unordered_map<uint32_t, std::vector<uint32_t>> held_;
    struct Watch {
        const volatile uint32_t* word;
        uint32_t value;
        uint64_t reached = UINT64_MAX;
    };
    std::vector<Watch> watches_;
    std::unordered_map<uint32_t, std::vector<size_t>> watches_of_chip_;
};

}  // namespace weft::fabric_model
