#include "model/host_cluster.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <string>

#include "boot/launch_protocol.h"
#include "common/error.h"
#include "hal/timer.h"

namespace weft::model {
namespace {

template <typename Ring>
bool idle(const Ring& ring) {
    return ring.head == ring.tail;
}

}  // namespace

HostCluster::Arena::~Arena() {
    if (base) munmap(base, size);
}

HostCluster::HostCluster(const ClusterSpec& spec, uint64_t ram_bytes) : spec_(spec) {
    const uint64_t slice = (ram_bytes + 4095) & ~uint64_t(4095);  // each chip's pages its own
    if (ram_bytes) {
        arena_.size = slice * spec.num_chips;
        void* p =
            mmap(nullptr, arena_.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw Error("cannot map " + std::to_string(arena_.size >> 20) + " MiB for " +
                        std::to_string(spec.num_chips) + " host chips: " + strerror(errno));
        arena_.base = static_cast<uint8_t*>(p);
    }
    std::vector<DeviceChip*> chips;
    const uint32_t cores = static_cast<uint32_t>(spec.board.cores.size());
    for (uint32_t i = 0; i < spec.num_chips; ++i) {
        memory_.push_back(
            ram_bytes ? std::make_unique<HostChip>(spec.board, i, spec.num_chips, arena_.base + slice * i, ram_bytes)
                      : std::make_unique<HostChip>(spec.board, i, spec.num_chips));
        chips.push_back(memory_.back().get());
        harts_.push_back(std::make_unique<host_board::Chip>(memory_.back()->control(), cores, clock_));
        harts_.back()->on_sleep([this] { step_devices(); });
        harts_.back()->throw_on_panic();
        host_board::Chip& harts = *harts_.back();
        const ChipMemory& ram = memory_.back()->memory();
        for (uint32_t c = 0; c < cores; ++c) {
            // The addresses the host gives the firmware resolve in this chip's memory.
            harts.core(c).ram = ram.host;
            harts.core(c).ram_base = spec.board.ram.base;
            harts.core(c).ram_size = ram.size;
            boot::post_ready(memory_.back()->control().host.launch[c], memory_.back()->control().hart[c]);
        }
    }
    // The cables run on the cores' clock: a run is the same every time.
    devices_ =
        std::make_unique<ClusterDevices>(spec, std::move(chips), [this] { return clock_.now / timer::ticks_per_us(); });
    devices_->ethernet().publish_port_states();
    touched_.resize(spec.num_chips);
}

ClusterTopology HostCluster::topology() {
    const ClusterTopology file = ClusterTopology::from_spec(spec_);
    if (unplugged_.empty()) return file;
    std::vector<LinkInfo> links = file.links();
    for (LinkInfo& l : links) l.up = !unplugged_.count({l.chip_a, l.port_a});
    return file.with_links(std::move(links));
}

void HostCluster::unplug(uint32_t chip, uint32_t port) {
    const int link = chip < spec_.num_chips ? devices_->ethernet().link_index(chip, port) : -1;
    if (link < 0)
        throw Error("chip " + std::to_string(chip) + " has no cable at port " + port_name(spec_.board, port) + " in " +
                    spec_.name);
    const Link& l = *devices_->ethernet().links()[size_t(link)];
    unplugged_.insert({l.end[0].chip, l.end[0].port});
    unplugged_.insert({l.end[1].chip, l.end[1].port});
    devices_->ethernet().set_link_up(size_t(link), false);  // the port states the routers read
}

bool HostCluster::rings_idle() {
    for (auto& chip : memory_) {
        const abi::ChipControlBlock& cb = chip->control();
        for (uint32_t c = 0; c < spec_.board.cores.size(); ++c)
            if (!idle(cb.noc[c]) || !idle(cb.math[c])) return false;
        for (uint32_t p = 0; p < spec_.board.ports.size(); ++p)
            if (!idle(cb.eth[p])) return false;
    }
    return true;
}

}  // namespace weft::model
