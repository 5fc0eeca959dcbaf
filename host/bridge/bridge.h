// weft-bridge: one process per cluster. It owns the chips (QEMU processes and
// their RAM), emulates their devices on an engine thread, and answers the
// control socket on the main thread.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bridge/chip_process.h"
#include "bridge/qemu_config.h"
#include "devices/cluster_devices.h"
#include "devices/doorbell.h"
#include "driver/cluster_file.h"

namespace weft {

struct BridgeOptions {
    std::string cluster_file;
    std::string run_dir;
    std::string qemu;
    std::string qemu_config;  // qemu/<chip>.args
    std::string boot_firmware;
    int boot_timeout_ms = 30000;
};

class Bridge {
public:
    Bridge(ClusterSpec spec, BridgeOptions options);
    ~Bridge();

    // Starts every chip and waits until all their cores are READY; throws
    // weft::Error naming the chips and cores that did not come up.
    void start();
    void start_engine();
    void stop();
    // Resets one chip through QMP and waits until all its cores are READY again.
    void reset_chip(uint32_t chip, int timeout_ms);
    // Reaps exited QEMUs (after SIGCHLD); returns a message per chip that died.
    std::vector<std::string> reap_children();

    const ClusterSpec& spec() const { return spec_; }
    const BridgeOptions& options() const { return options_; }
    std::vector<std::unique_ptr<ChipProcess>>& chips() { return chips_; }
    Ethernet& ethernet() { return devices_->ethernet(); }
    const DeviceCounters& counters(uint32_t chip) const { return devices_->counters(chip); }
    uint64_t engine_passes() const { return passes_; }

private:
    void engine_loop(uint32_t spin_passes, long nap_us);
    // Rings the chip's doorbell if a core sleeps on it or a launch awaits.
    void wake_cores(uint32_t chip, const Touched& touched);
    // Blocks until a core or the driver wakes the engine (true), or timeout_us.
    bool sleep_until_woken(long timeout_us);

    ClusterSpec spec_;
    BridgeOptions options_;
    QemuConfig qemu_config_;
    std::vector<std::unique_ptr<ChipProcess>> chips_;
    std::unique_ptr<ClusterDevices> devices_;
    std::thread engine_;
    std::atomic<bool> running_{false};
    std::atomic<uint64_t> passes_{0};
    std::vector<Doorbell> doorbells_;  // per chip
    uint32_t sleep_epoch_ = 0;
    int kick_fd_ = -1;  // datagrams from drivers: "a launch was posted"
};

}  // namespace weft
