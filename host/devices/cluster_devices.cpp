#include "devices/cluster_devices.h"

namespace weft {

ClusterDevices::ClusterDevices(const ClusterSpec& spec, std::vector<DeviceChip*> chips, Ethernet::Clock now_us)
    : spec_(spec), chips_(chips), ethernet_(spec, std::move(chips), std::move(now_us)) {
    for (size_t i = 0; i < chips_.size(); ++i) counters_.push_back(std::make_unique<DeviceCounters>());
}

bool ClusterDevices::serve_cores(uint32_t id) {
    abi::ChipControlBlock& cb = chips_[id]->control();
    const ChipMemory& mem = chips_[id]->memory();
    DeviceCounters& counters = *counters_[id];
    uint32_t work = 0;
    for (uint32_t c = 0; c < spec_.board.cores.size(); ++c) {
        work += run_noc_ring(mem, spec_.board, cb.noc[c], kBudget, counters);
        work += run_math_ring(mem, cb.math[c], kBudget, counters);
    }
    return work != 0;
}

bool ClusterDevices::serve_ports(uint32_t id, std::vector<char>& touched) {
    bool work = false;
    for (uint32_t p = 0; p < spec_.board.ports.size(); ++p) {
        if (!ethernet_.run_port(id, p, kBudget)) continue;
        work = true;
        touched[id] = 1;
        const int peer = ethernet_.peer_chip(id, p);
        if (peer >= 0) touched[peer] = 1;
    }
    return work;
}

bool ClusterDevices::serve_chip(uint32_t id, std::vector<char>& touched) {
    if (!chips_[id]->alive()) return false;
    const bool cores = serve_cores(id);
    if (cores) touched[id] = 1;
    return serve_ports(id, touched) || cores;
}

bool ClusterDevices::serve_all() {
    std::vector<char> touched(chips_.size(), 0);
    bool work = false;
    for (uint32_t i = 0; i < chips_.size(); ++i) work |= serve_chip(i, touched);
    return work;
}

}  // namespace weft
