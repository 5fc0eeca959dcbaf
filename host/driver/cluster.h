// libweft's entry point: a running cluster of chips, started here or attached
// to, with kernel launch and waits that always end (result, fault or hang
// report).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/board.h"
#include "driver/chip.h"
#include "driver/chip_writer.h"
#include "driver/cluster_topology.h"
#include "driver/control_client.h"
#include "driver/kernel_image.h"
#include "driver/machine.h"
#include "driver/stall_clock.h"

namespace weft {

// Told of every kernel this process launches and sees finish (a trace).
class LaunchObserver {
public:
    virtual ~LaunchObserver() = default;
    virtual void launched(uint32_t chip, uint32_t core, const std::string& kernel) = 0;
    virtual void finished(uint32_t chip, uint32_t core, const KernelResult& result) = 0;
};

class Cluster : public Machine {
public:
    // Attach to the cluster whose bridge serves run_dir.
    static std::unique_ptr<Cluster> attach(const std::string& run_dir);
    // Start a cluster from a cluster file; it is shut down when the Cluster is destroyed.
    static std::unique_ptr<Cluster> start(const std::string& cluster_file, const std::string& run_dir);
    ~Cluster() override;

    size_t size() const { return chips_.size(); }
    Chip& chip(uint32_t id) { return *chips_.at(id); }
    uint32_t chip_count() const override { return static_cast<uint32_t>(chips_.size()); }
    void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) override;
    void clear(uint32_t chip, uint64_t address, size_t bytes) override;
    void read(uint32_t chip, uint64_t address, void* data, size_t bytes) override;
    const BoardInfo& board() const override { return board_; }
    FabricSpec fabric_spec() const override;
    std::string name() const override { return info_.value("name", std::string("?")); }
    abi::ChipControlBlock& control(uint32_t chip) override { return chips_.at(chip)->control(); }
    bool alive(uint32_t chip) const override { return chips_.at(chip)->alive(); }
    std::string describe_fault(uint32_t chip, uint32_t core) override { return chips_.at(chip)->describe_fault(core); }
    const nlohmann::json& info() const { return info_; }
    const std::string& run_dir() const { return run_dir_; }
    // "chip 5 died (killed by signal Killed; its QEMU's log: RUN/chip5.qemu.log)",
    // for a chip whose QEMU is gone.
    std::string death_of(uint32_t chip) const override;
    std::vector<LinkInfo> links();
    // Meshes, coordinates, cables (with their state now) and exit nodes.
    ClusterTopology topology() override;
    nlohmann::json counters();
    // From the bridge's counters: a frame sent again (a drop, or a
    // retransmit timer on a busy host) is the link's cost, not the op's.
    Traffic traffic() override;
    void set_link(uint32_t chip, uint32_t port, bool up);
    // Sets wire faults on the link at (chip, port): any of drop_rate,
    // bit_error_rate, flap_period_ms, flap_down_ms, mode ("ttlink" or
    // "compliance"), or clear: true. Returns
    // the link with its counters; throws weft::Error naming a bad value.
    // The latest status events ({"log": path, "events": [...]}), drained now.
    nlohmann::json events();
    nlohmann::json set_fault(uint32_t chip, uint32_t port, const nlohmann::json& faults);
    // Resets a chip (QMP system_reset) and returns once its cores are READY;
    // the way out for a core stuck in a kernel. Chip memory is kept.
    void reset_chip(uint32_t chip);
    // WEFT_ACTIVE_WAKE_US: the back-off cap (µs) of waiting kernels on every
    // chip, for experiments; unset, the firmware default (written back, so a
    // value does not outlive the client that set it).
    void apply_wake_override() override;
    void pass_time(std::chrono::microseconds nap) override { std::this_thread::sleep_for(nap); }

    // Loads each launch's kernel onto its core, launches them in the order
    // given and waits for all. Throws FaultError on a fault, TimeoutError with
    // the hang report when the deadline passes, Error if a chip dies; in every
    // case the launches still running are stopped first (stop_kernels), so a
    // failed op leaves its cores ready for the next.
    std::vector<KernelResult> run(const std::vector<Launch>& launches, std::chrono::milliseconds timeout);
    // The two halves of run, for callers that do work between them.
    std::vector<std::pair<CoreRef, uint32_t>> launch_all(const std::vector<Launch>& launches) override;
    // nullptr: none. The observer must outlive its registration.
    void observe(LaunchObserver* observer) { observer_ = observer; }
    // `watch`, when given, is asked as the wait goes (every ~50 ms) whether
    // something the kernels rely on has failed (a fabric router, say): a
    // non-empty answer ends the wait at once as an Error with that text and
    // the hang report, instead of at the deadline. A watch that knows the
    // whole cause (a cable the fabric cannot route round) throws
    // weft::Error itself: the report would add nothing.
    // `timeout` is how long the cluster may go without anything moving (a
    // stall), in its own time (driver/stall_clock.h): it restarts whenever a
    // ring, a core's progress word or a launch moves anywhere, and time spent
    // waiting for a busy host's CPU does not count, so a busy host makes an
    // op slow, not failed; an op that keeps busy for kStallCapFactor timeouts
    // of its own time in all also ends.
    std::vector<KernelResult> wait_all(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                       std::chrono::milliseconds timeout, const Watch& watch = {}) override;
    static constexpr int kStallCapFactor = 10;

    // Asks each launch still running among `launched` to stop (its kernel
    // leaves at its next wait, abi::HostArea::stop) and waits up to `timeout`;
    // a chip with a kernel that will not stop is reset. Returns what it did,
    // for the error that made the caller stop them ("" if nothing ran).
    std::string stop_kernels(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(3000)) override;

    // Claims the cluster for this process's ops (the bridge grants one claim
    // at a time, held until this Cluster disconnects): waits up to `wait` for
    // another holder to let go, saying once that it waits and for whom, then
    // throws weft::Error naming the holder. Once granted, stops kernels left
    // running by a holder that died mid-op. Every launch claims first.
    void claim(const std::string& what, std::chrono::milliseconds wait);
    void claim(const std::string& what) override { claim(what, claim_wait()); }
    static std::chrono::milliseconds claim_wait();  // WEFT_CLAIM_WAIT_MS, default 30 s
    // Lets another client have the cluster between this one's ops.
    void release() override;

    // The bridge's and the chips' QEMU processes: a StallClock's, so that a
    // wait counts the cluster's own time (driver/stall_clock.h).
    std::vector<int> processes() const override;
    // The resident images this process started (driver/resident.h): any other
    // one found when the claim is granted was left by a process that is gone.
    void adopt_resident(uint32_t chip, uint32_t core) override { residents_.insert({chip, core}); }
    void forget_resident(uint32_t chip, uint32_t core) override { residents_.erase({chip, core}); }

    // Wakes a core sleeping on its doorbell (abi::HostArea::ring), after the
    // host wrote something it waits for: a resident image's stop request.
    void ring_core(uint32_t chip, uint32_t core) override;

    // Where every chip and core stands; `waiting` marks the cores still owed.
    std::string hang_report(const std::vector<CoreRef>& waiting) override;
    // Stops the cluster (only if this object started it, unless force).
    void shutdown();

private:
    Cluster() = default;
    std::vector<KernelResult> wait_all_or_throw(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                                std::chrono::milliseconds timeout, const Watch& watch);
    void connect(const std::string& run_dir);
    // Wakes the bridge's engine, which may sleep, to ring the launched chips.
    void kick_bridge();

    // Throws weft::Error once the bridge has exited or has not beaten for
    // long in its own time (a busy host's delay does not count).
    class BridgeWatch {
    public:
        explicit BridgeWatch(const Cluster& cluster);
        void look();

    private:
        const Cluster& cluster_;
        int pid_;
        StallClock clock_;
        uint64_t beat_ = 0;
    };

    // Kernels and resident images still running that nobody owns any more
    // (their launcher died or failed to stop them).
    void stop_orphans();

    std::string run_dir_;
    bool owned_ = false;
    bool claimed_ = false;
    int kick_fd_ = -1;
    std::unique_ptr<ControlClient> control_;
    nlohmann::json info_;
    BoardInfo board_;
    std::vector<std::unique_ptr<Chip>> chips_;
    LaunchObserver* observer_ = nullptr;
    std::set<std::pair<uint32_t, uint32_t>> residents_;  // (chip, core)
};

// Loads kernels by name from the build's firmware of `board`, once each.
const KernelImage& kernel_named(const BoardInfo& board, const std::string& name);
// Loads the kernel image at `path` once (named after its file).
const KernelImage& kernel_at(const std::string& path);

}  // namespace weft
