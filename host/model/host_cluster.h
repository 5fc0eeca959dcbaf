// The host-model machine: a cluster of host-memory chips in one process, for
// tests and models that run firmware logic on several chips at once: each
// chip's memory (devices/host_chip.h), its harts (host_board::Chip), all on
// one clock, and the devices library's engines between them, cabled as the
// cluster spec says. A test may step the cores itself (every core's sleep
// runs the devices once, so firmware that waits for a device gets it
// served), or launch the firmware's kernels through the Machine seam, as
// the collective runner does, and wait for them.
#pragma once
#include <stdint.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "devices/cluster_devices.h"
#include "devices/host_chip.h"
#include "driver/cluster_file.h"
#include "driver/machine.h"
#include "host_board.h"
#include "model/kernel_fibers.h"

namespace weft::model {

class HostCluster : public Machine {
public:
    // `ram_bytes`: what each chip keeps of the board's RAM, from its start;
    // 0: all of it, a mapping per chip. Otherwise one arena for every chip
    // (host_chip.h): for models of thousands of chips, which use little of it.
    explicit HostCluster(const ClusterSpec& spec, uint64_t ram_bytes = 0);

    const ClusterSpec& spec() const { return spec_; }
    uint32_t chip_count() const override { return spec_.num_chips; }
    const BoardInfo& board() const override { return spec_.board; }
    // Every cable of the file, those unplugged down.
    ClusterTopology topology() override;
    // Pulls the cable at `port` of `chip` out before a fabric is planned (a
    // cable that fails under traffic is the timed engine's): the topology
    // and both chips' port states show it down. Throws weft::Error where no
    // cable is.
    void unplug(uint32_t chip, uint32_t port);
    FabricSpec fabric_spec() const override { return spec_.fabric; }
    HostChip& memory(uint32_t chip) { return *memory_.at(chip); }
    host_board::Core& core(uint32_t chip, uint32_t id) { return harts_.at(chip)->core(id); }
    host_board::Clock& clock() { return clock_; }
    ClusterDevices& devices() { return *devices_; }

    // One pass over every chip's devices; true if any command ran.
    bool step_devices() { return devices_->serve_all(&touched_); }
    // What the device passes and host writes touched on each chip since the
    // last call: what a doorbell would ring its sleepers for.
    std::vector<Touched> take_touched() {
        std::vector<Touched> t(spec_.num_chips);
        t.swap(touched_);
        return t;
    }
    // Host bytes of [addr, addr + len) of the board's memory map on `chip`.
    uint8_t* bytes(uint32_t chip, uint64_t addr, uint64_t len) { return memory(chip).at(addr, len); }
    // Where a host builder (EdmLinkBuilder::write) puts device configuration.
    // Bytes that already read as written are not stored again: a page of the
    // arena nobody wrote reads as zeros without being backed, and a model of
    // thousands of chips would otherwise back every page a clear reaches.
    void write(uint32_t chip, uint64_t addr, const void* data, size_t len) override {
        if (len) {  // an empty vector's data() may be null
            uint8_t* at = bytes(chip, addr, len);
            if (std::memcmp(at, data, len) != 0) std::memcpy(at, data, len);
        }
        touched_.at(chip) = Touched::everything();  // as the host rings whom it configures
    }
    void clear(uint32_t chip, uint64_t addr, size_t len) override {
        uint8_t* at = bytes(chip, addr, len);
        if (len && (at[0] != 0 || std::memcmp(at, at + 1, len - 1) != 0)) std::memset(at, 0, len);
        touched_.at(chip) = Touched::everything();
    }
    void read(uint32_t chip, uint64_t addr, void* data, size_t len) override {
        if (len) std::memcpy(data, bytes(chip, addr, len), len);
    }
    // Every core and port ring of every chip has no command left.
    bool rings_idle();

    // ---- Kernels (host_cluster_kernels.cpp): the firmware's own, built for
    // the host board (host_kernels.h), launched by the image's name. The
    // machine runs while the host waits (wait_all, pass_time), one core at a
    // time, its clock following the host's from the first launch.
    std::string name() const override { return spec_.name; }
    abi::ChipControlBlock& control(uint32_t chip) override;
    bool alive(uint32_t) const override { return true; }
    std::string death_of(uint32_t chip) const override {
        return "chip " + std::to_string(chip) + " is a host-model chip, which does not die";
    }
    std::string describe_fault(uint32_t chip, uint32_t core) override;
    std::vector<std::pair<CoreRef, uint32_t>> launch_all(const std::vector<Launch>& launches) override;
    std::vector<KernelResult> wait_all(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                       std::chrono::milliseconds timeout, const Watch& watch) override;
    std::string stop_kernels(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                             std::chrono::milliseconds timeout) override;
    std::string hang_report(const std::vector<CoreRef>& waiting) override;
    // A host write (write, clear) marks its chip touched already: the next
    // round wakes its kernels.
    void ring_core(uint32_t, uint32_t) override {}
    // One process owns a host model.
    void claim(const std::string&) override {}
    void adopt_resident(uint32_t, uint32_t) override {}
    void forget_resident(uint32_t, uint32_t) override {}
    void pass_time(std::chrono::microseconds nap) override;

private:
    // One anonymous mapping, unmapped after the chips in it (declared first).
    struct Arena {
        uint8_t* base = nullptr;
        uint64_t size = 0;
        Arena() = default;
        Arena(const Arena&) = delete;
        Arena& operator=(const Arena&) = delete;
        ~Arena();
    };

    const ClusterSpec& spec_;
    Arena arena_;
    host_board::Clock clock_;
    std::vector<std::unique_ptr<HostChip>> memory_;
    std::vector<std::unique_ptr<host_board::Chip>> harts_;
    std::unique_ptr<ClusterDevices> devices_;
    std::vector<Touched> touched_;
    std::set<std::pair<uint32_t, uint32_t>> unplugged_;  // (chip, port), both ends of each
    std::unique_ptr<KernelFibers> kernels_;              // from the first launch
    std::chrono::steady_clock::time_point started_;      // of the first launch: the clock's zero

    // How far an idle round moves the clock at most, in ticks: a kernel's
    // timer is never missed, and a stuck machine still reaches its deadlines.
    static constexpr uint64_t kIdleSkip = 100'000;
    uint32_t post_launch(const Launch& l);
    void run_round();
    std::vector<KernelResult> wait_or_throw(const std::vector<std::pair<CoreRef, uint32_t>>& launched,
                                            std::chrono::milliseconds timeout, const Watch& watch);
};

}  // namespace weft::model
