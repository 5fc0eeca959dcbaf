#include "devices/cluster_devices.h"

namespace weft {

ClusterDevices::ClusterDevices(const ClusterSpec& spec, std::vector<DeviceChip*> chips, Ethernet::Clock now_us)
    : spec_(spec), chips_(chips), ethernet_(spec, std::move(chips), std::move(now_us)) {
    for (size_t i = 0; i < chips_.size(); ++i) counters_.push_back(std::make_unique<DeviceCounters>());
    link_seen_.assign(chips_.size() * spec.board.ports.size(), ~0u);  // the first pass tells every port's core
}

bool ClusterDevices::serve_cores(uint32_t id, Touched& touched) {
    abi::ChipControlBlock& cb = chips_[id]->control();
    const ChipMemory& mem = chips_[id]->memory();
    DeviceCounters& counters = *counters_[id];
    bool work = false;
    for (uint32_t c = 0; c < spec_.board.cores.size(); ++c) {
        CoreTouches writes{&spec_.board, &mem};
        // A core whose ring advanced may wait for room or for its commands' end.
        if (run_noc_ring(mem, spec_.board, cb.noc[c], kBudget, counters, &writes) +
            run_math_ring(mem, cb.math[c], kBudget, counters, &writes)) {
            touched.cores |= 1u << c;
            work = true;
        }
        touched.cores |= writes.cores;
        touched.others |= writes.l1 & ~(1u << c);
    }
    return work;
}

bool ClusterDevices::serve_ports(uint32_t id, std::vector<Touched>& touched) {
    bool work = false;
    for (uint32_t p = 0; p < spec_.board.ports.size(); ++p) {
        if (!ethernet_.run_port(id, p, kBudget)) continue;
        work = true;
        // The port's ERISC core drives its ring; a worker may too (eth waits name the port).
        touched[id] |= Touched{1u << spec_.board.ports[p].core, 1u << p};
        // The far end's ring may advance too (acknowledgements); frames
        // landing there are collected below, by the cores they land in.
        const int li = ethernet_.link_index(id, p);
        if (li < 0) continue;  // no cable: its commands were refused
        const Link& link = *ethernet_.links()[li];
        const PortRef& far = link.end[1 - link.side(id, p)];
        touched[far.chip] |= Touched{1u << spec_.board.ports[far.port].core, 1u << far.port};
    }
    for (uint32_t c = 0; c < chips_.size(); ++c) {
        const CoreTouches landed = ethernet_.take_landed(c);
        touched[c].cores |= landed.cores;
        touched[c].others |= landed.l1;
    }
    return work;
}

// A cable that went down or came back is news from outside, as a peer's
// write is: it may end a wait that only the peer could have ended (a router's
// move onto its fallback).
void ClusterDevices::note_link_changes(uint32_t id, Touched& touched) {
    const abi::ChipControlBlock& cb = chips_[id]->control();
    const size_t ports = spec_.board.ports.size();
    for (uint32_t p = 0; p < ports; ++p) {
        const uint32_t state = __atomic_load_n(const_cast<const uint32_t*>(&cb.port[p].state), __ATOMIC_ACQUIRE);
        uint32_t& seen = link_seen_[id * ports + p];
        if (state == seen) continue;
        seen = state;
        const uint32_t core = 1u << spec_.board.ports[p].core;
        touched |= Touched{core, 1u << p, core};
    }
}

bool ClusterDevices::serve_chip(uint32_t id, std::vector<Touched>& touched) {
    if (!chips_[id]->alive()) return false;
    note_link_changes(id, touched[id]);
    const bool cores = serve_cores(id, touched[id]);
    return serve_ports(id, touched) || cores;
}

bool ClusterDevices::serve_all(std::vector<Touched>* gathered) {
    std::vector<Touched> own;
    if (!gathered) own.resize(chips_.size());
    std::vector<Touched>& touched = gathered ? *gathered : own;  // serve_chip adds to it
    bool work = false;
    for (uint32_t i = 0; i < chips_.size(); ++i) work |= serve_chip(i, touched);
    return work;
}

}  // namespace weft
