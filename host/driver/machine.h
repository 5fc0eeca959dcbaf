// A set of chips as the host runtime sees it, whatever runs them: the QEMU
// cluster (driver/cluster.h) or the host-model machine
// (host/model/host_cluster.h), where the firmware's own code runs on host
// memory. The builders place and write their configuration through it, the
// collective runner launches and waits for kernels through it, the fabric
// starts its routers as resident images (driver/resident.h) through it, and
// a wait that times out tells where every core stands through it: so an op
// is planned and run the same way on both.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "driver/board.h"
#include "driver/chip_writer.h"
#include "driver/cluster_topology.h"
#include "driver/fabric_spec.h"
#include "driver/kernel_launch.h"
#include "weft/abi/control_block.h"

namespace weft {

class Machine : public ChipWriter {
public:
    virtual uint32_t chip_count() const = 0;
    virtual const BoardInfo& board() const = 0;
    // Meshes, coordinates and cables, with each cable's state now.
    virtual ClusterTopology topology() = 0;
    // The cluster file's fabric: settings.
    virtual FabricSpec fabric_spec() const = 0;
    virtual void read(uint32_t chip, uint64_t address, void* data, size_t bytes) = 0;

    // ---- Kernels: what the runner and the fabric need of a machine.
    // The cluster file's name ("ring8"): what the cost model was fitted on.
    virtual std::string name() const = 0;
    // The chip's control block (weft/abi/control_block.h): its harts'
    // states, ports, launches and resident images, as the firmware keeps them.
    virtual abi::ChipControlBlock& control(uint32_t chip) = 0;
    virtual bool alive(uint32_t chip) const = 0;
    // Why a chip is not alive, for an error that names it ("chip 5 died (...)").
    virtual std::string death_of(uint32_t chip) const = 0;
    // "chip 1 core 3 (worker) kernel 'ccl_worker' FAULT: ...", or "" if it did not fault.
    virtual std::string describe_fault(uint32_t chip, uint32_t core) = 0;
    // Launches each kernel on its core, in order; returns each launch's
    // sequence number, to wait for. Throws weft::Error for a busy core.
    virtual std::vector<std::pair<CoreRef, uint32_t>> launch_all(const std::vector<Launch>& launches) = 0;
    // Asked as a wait goes whether something the kernels rely on has failed
    // (a fabric router): a non-empty answer ends the wait as an Error.
    using Watch = std::function<std::string()>;
    // Until every launch has finished. Throws FaultError on a fault,
    // TimeoutError with the hang report when nothing moves for `timeout`,
    // Error when the watch or a dead chip ends it; in every case the launches
    // still running are stopped first, so the cores are ready for the next.
    virtual std::vector<KernelResult> wait_all(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                               std::chrono::milliseconds timeout, const Watch& watch) = 0;
    // Asks the launches still running to stop and waits up to `timeout`;
    // returns what it did ("" if nothing ran).
    virtual std::string stop_kernels(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                     std::chrono::milliseconds timeout) = 0;
    // Where every chip and core stands; `waiting` marks the cores still owed.
    virtual std::string hang_report(const std::vector<CoreRef>& waiting) = 0;
    // Wakes a core asleep on its doorbell after the host wrote what it waits for.
    virtual void ring_core(uint32_t chip, uint32_t core) = 0;
    // Claims the machine for this process's ops (the QEMU cluster has one
    // owner at a time); `what` names the op for a client left waiting.
    virtual void claim(const std::string& what) = 0;
    // Lets another client have the machine between this one's ops.
    virtual void release() {}
    // The processes whose CPU time a wait counts (driver/stall_clock.h); none: wall time.
    virtual std::vector<int> processes() const { return {}; }
    // The resident images this process started (driver/resident.h).
    virtual void adopt_resident(uint32_t chip, uint32_t core) = 0;
    virtual void forget_resident(uint32_t chip, uint32_t core) = 0;
    // Lets the chips move on while the host polls them: the QEMU cluster's
    // run by themselves (the host naps `nap`); the model's run now.
    virtual void pass_time(std::chrono::microseconds nap) = 0;
    // What the cables carried (payload once, not resent) and the doorbells
    // rung so far, all chips: the QEMU bridge counts them; zeros where
    // nothing does.
    struct Traffic {
        uint64_t wire_bytes = 0, doorbells = 0;
    };
    virtual Traffic traffic() { return {}; }
    // Settings a machine applies before a runner's ops (QEMU: WEFT_ACTIVE_WAKE_US).
    virtual void apply_wake_override() {}
    // Asked at each look of a wait on kernels (QEMU: every 100 ms): true
    // stops them, and the wait throws weft::Error saying it was interrupted
    // (Python's Ctrl-C). Empty: never.
    void on_interrupt(std::function<bool()> asked) { interrupt_ = std::move(asked); }

protected:
    bool interrupt_asked() const { return interrupt_ && interrupt_(); }

private:
    std::function<bool()> interrupt_;
};

// One chip of a machine, read as the hang report's wait decoders read it.
class MachineChip {
public:
    MachineChip(Machine& machine, uint32_t id) : machine_(machine), id_(id) {}
    uint32_t id() const { return id_; }
    const BoardInfo& board() const { return machine_.board(); }
    const abi::ChipControlBlock& control() const { return machine_.control(id_); }
    void read(uint64_t address, void* data, size_t bytes) const { machine_.read(id_, address, data, bytes); }
    uint32_t read32(uint64_t address) const {
        uint32_t v = 0;
        read(address, &v, sizeof v);
        return v;
    }

private:
    Machine& machine_;
    uint32_t id_;
};

// What the control block says of a core: the kernel it runs or last ran,
// and the resident image it runs ("" for none).
std::string kernel_name(Machine& machine, uint32_t chip, uint32_t core);
std::string resident_name(Machine& machine, uint32_t chip, uint32_t core);
// The launch `seq` on (chip, core) has ended (returned, faulted or stopped).
bool finished(Machine& machine, uint32_t chip, uint32_t core, uint32_t seq);
// What the core's last launch returned; throws FaultError describing a fault.
KernelResult result(Machine& machine, uint32_t chip, uint32_t core);
// A sum that changes whenever anything on the machine moves (hart_state.h).
uint64_t activity(Machine& machine);
// The hang report's part every machine has: dead chips, down cables, and
// each busy or owed core with the wait it posted (driver/hang_report.cpp).
std::string machine_hang_report(Machine& machine, const std::vector<CoreRef>& waiting);

// Some chips of a machine as a machine of their own, numbered by index (a
// per-mesh fabric's chips): chip i is chips[i]; `topology` holds the cables
// among them in those numbers (ClusterTopology::among).
class MappedMachine final : public Machine {
public:
    MappedMachine(Machine& whole, std::vector<uint32_t> chips, ClusterTopology topology)
        : whole_(whole), chips_(std::move(chips)), topology_(std::move(topology)) {}
    void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) override {
        whole_.write(chips_.at(chip), address, data, bytes);
    }
    void clear(uint32_t chip, uint64_t address, size_t bytes) override { whole_.clear(chips_.at(chip), address, bytes); }
    void read(uint32_t chip, uint64_t address, void* data, size_t bytes) override {
        whole_.read(chips_.at(chip), address, data, bytes);
    }
    uint32_t chip_count() const override { return static_cast<uint32_t>(chips_.size()); }
    const BoardInfo& board() const override { return whole_.board(); }
    ClusterTopology topology() override { return topology_; }
    FabricSpec fabric_spec() const override { return whole_.fabric_spec(); }
    std::string name() const override { return whole_.name(); }
    abi::ChipControlBlock& control(uint32_t chip) override { return whole_.control(chips_.at(chip)); }
    bool alive(uint32_t chip) const override { return whole_.alive(chips_.at(chip)); }
    std::string death_of(uint32_t chip) const override { return whole_.death_of(chips_.at(chip)); }
    std::string describe_fault(uint32_t chip, uint32_t core) override {
        return whole_.describe_fault(chips_.at(chip), core);
    }
    std::vector<std::pair<CoreRef, uint32_t>> launch_all(const std::vector<Launch>& launches) override;
    std::vector<KernelResult> wait_all(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                       std::chrono::milliseconds timeout, const Watch& watch) override {
        return whole_.wait_all(to_whole(launched), timeout, watch);
    }
    std::string stop_kernels(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                             std::chrono::milliseconds timeout) override {
        return whole_.stop_kernels(to_whole(launched), timeout);
    }
    std::string hang_report(const std::vector<CoreRef>& waiting) override;
    void ring_core(uint32_t chip, uint32_t core) override { whole_.ring_core(chips_.at(chip), core); }
    void claim(const std::string& what) override { whole_.claim(what); }
    void release() override { whole_.release(); }
    std::vector<int> processes() const override { return whole_.processes(); }
    void adopt_resident(uint32_t chip, uint32_t core) override { whole_.adopt_resident(chips_.at(chip), core); }
    void forget_resident(uint32_t chip, uint32_t core) override { whole_.forget_resident(chips_.at(chip), core); }
    void pass_time(std::chrono::microseconds nap) override { whole_.pass_time(nap); }
    Traffic traffic() override { return whole_.traffic(); }

private:
    // Launches numbered by index as the whole machine numbers them, and back.
    std::vector<std::pair<CoreRef, uint32_t>> to_whole(std::vector<std::pair<CoreRef, uint32_t>> launched) const;

    Machine& whole_;
    std::vector<uint32_t> chips_;
    ClusterTopology topology_;
};

}  // namespace weft
