// The devices of every chip in a cluster: each chip's NoC and math engines (a
// command ring per core) and the Ethernet cables between the chips. They keep
// no thread of their own: whoever drives them (weft-bridge's engine thread, a
// unit test's loop, a simulator) serves one chip at a time.
#pragma once
#include <stdint.h>

#include <memory>
#include <vector>

#include "devices/device_chip.h"
#include "devices/devices.h"
#include "devices/ethernet.h"
#include "driver/cluster_file.h"

namespace weft {

class ClusterDevices {
public:
    // Commands served per ring per pass: keeps one busy ring from starving the rest.
    static constexpr uint32_t kBudget = 64;

    // chips[i] is chip i of the spec; the spec and the chips outlive the devices.
    ClusterDevices(const ClusterSpec& spec, std::vector<DeviceChip*> chips,
                   Ethernet::Clock now_us = Ethernet::steady_now_us);

    // Executes the chip's queued device commands; adds to `touched` (one entry
    // per chip) what they changed on every chip. True if any ran.
    bool serve_chip(uint32_t chip, std::vector<Touched>& touched);
    // Every chip once, in order. True if any command ran.
    // `touched`, if given (one entry per chip), gathers what the pass touched.
    bool serve_all(std::vector<Touched>* touched = nullptr);

    size_t size() const { return chips_.size(); }
    Ethernet& ethernet() { return ethernet_; }
    DeviceCounters& counters(uint32_t chip) { return *counters_[chip]; }
    const DeviceCounters& counters(uint32_t chip) const { return *counters_[chip]; }

private:
    bool serve_cores(uint32_t chip, Touched& touched);
    bool serve_ports(uint32_t chip, std::vector<Touched>& touched);
    void note_link_changes(uint32_t chip, Touched& touched);

    const ClusterSpec& spec_;
    std::vector<DeviceChip*> chips_;
    std::vector<std::unique_ptr<DeviceCounters>> counters_;  // atomics: they stay put
    Ethernet ethernet_;
    std::vector<uint32_t> link_seen_;  // per chip and port: the state its cores last heard of
};

}  // namespace weft
