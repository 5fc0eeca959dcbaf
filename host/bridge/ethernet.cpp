#include "bridge/ethernet.h"

#include <string.h>

#include "bridge/devices.h"

namespace weft {

Ethernet::Ethernet(const ClusterSpec& spec, std::vector<std::unique_ptr<ChipProcess>>& chips)
    : spec_(spec), chips_(chips), link_of_port_(spec.num_chips * abi::kMaxPorts, -1) {
    for (const LinkSpec& l : spec.links) {
        auto link = std::make_unique<Link>();
        link->end[0] = l.a;
        link->end[1] = l.b;
        link->line = l.line;
        link_of_port_[l.a.chip * abi::kMaxPorts + l.a.port] = static_cast<int>(links_.size());
        link_of_port_[l.b.chip * abi::kMaxPorts + l.b.port] = static_cast<int>(links_.size());
        links_.push_back(std::move(link));
    }
}

int Ethernet::link_index(uint32_t chip, uint32_t port) const {
    if (chip >= spec_.num_chips || port >= abi::kMaxPorts) return -1;
    return link_of_port_[chip * abi::kMaxPorts + port];
}

int Ethernet::peer_chip(uint32_t chip, uint32_t port) const {
    const int li = link_index(chip, port);
    if (li < 0) return -1;
    const Link& l = *links_[li];
    return static_cast<int>(l.end[0].chip == chip && l.end[0].port == port ? l.end[1].chip : l.end[0].chip);
}

void Ethernet::publish_port_states() {
    for (uint32_t chip = 0; chip < spec_.num_chips; ++chip) {
        auto& cb = chips_[chip]->control();
        for (uint32_t port = 0; port < spec_.board.ports.size(); ++port) {
            int li = link_index(chip, port);
            abi::PortState& ps = cb.port[port];
            if (li < 0) {
                ps.state = abi::kLinkUnwired;
                continue;
            }
            const Link& l = *links_[li];
            const PortRef& peer = l.end[0].chip == chip && l.end[0].port == port ? l.end[1] : l.end[0];
            ps.peer_chip = peer.chip;
            ps.peer_port = peer.port;
            __atomic_store_n(const_cast<uint32_t*>(&ps.state), l.up ? abi::kLinkUp : abi::kLinkDown, __ATOMIC_RELEASE);
        }
    }
}

void Ethernet::set_link_up(size_t link, bool up) {
    links_.at(link)->up = up;
    publish_port_states();
}

void Ethernet::chip_died(uint32_t chip) {
    for (auto& l : links_)
        if (l->end[0].chip == chip || l->end[1].chip == chip) l->up = false;
    publish_port_states();
}

uint32_t Ethernet::exec(uint32_t chip, uint32_t port, const abi::EthCommand& c) {
    int li = link_index(chip, port);
    if (li < 0) return abi::kRingLinkDown;
    Link& link = *links_[li];
    if (!link.up) return abi::kRingLinkDown;
    const int side = link.end[0].chip == chip && link.end[0].port == port ? 0 : 1;
    ChipProcess& peer = *chips_[link.end[1 - side].chip];
    if (!peer.alive()) return abi::kRingLinkDown;
    const ChipMemory& local = chips_[chip]->memory();
    const ChipMemory& remote = peer.memory();
    LinkDirectionCounters& counters = link.dir[side];
    switch (c.op) {
        case abi::kEthSendBytes: {
            uint8_t* s = local.at(c.src, c.len);
            uint8_t* d = remote.at(c.dst, c.len);
            if (!s || !d) return abi::kRingBadAddress;
            memcpy(d, s, c.len);
            const uint32_t mtu = spec_.link_model.mtu ? spec_.link_model.mtu : 16384;
            counters.frames += (c.len + mtu - 1) / mtu;
            counters.bytes += c.len;
            return abi::kRingOk;
        }
        case abi::kEthSendWord: {
            if (c.dst & 3) return abi::kRingBadAddress;
            auto* w = reinterpret_cast<uint32_t*>(remote.at(c.dst, 4));
            if (!w) return abi::kRingBadAddress;
            __atomic_store_n(w, c.value, __ATOMIC_RELEASE);
            counters.frames += 1;
            counters.bytes += 4;
            return abi::kRingOk;
        }
    }
    return abi::kRingBadOpcode;
}

uint32_t Ethernet::run_port(uint32_t chip, uint32_t port, uint32_t budget) {
    abi::EthRing& ring = chips_[chip]->control().eth[port];
    return consume_ring(ring, budget, [&](const abi::EthCommand& c) { return exec(chip, port, c); });
}

}  // namespace weft
