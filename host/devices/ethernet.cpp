#include "devices/ethernet.h"

#include <string.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "devices/devices.h"

namespace weft {
namespace {

template <typename T>
T load_acquire(const volatile T& v) {
    return __atomic_load_n(const_cast<T*>(&v), __ATOMIC_ACQUIRE);
}
template <typename T>
void store_release(volatile T& v, T value) {
    __atomic_store_n(const_cast<T*>(&v), value, __ATOMIC_RELEASE);
}

}  // namespace

uint64_t Ethernet::steady_now_us() {
    using namespace std::chrono;
    return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

Ethernet::Ethernet(const ClusterSpec& spec, std::vector<DeviceChip*> chips, Clock now_us)
    : spec_(spec),
      chips_(std::move(chips)),
      now_us_(std::move(now_us)),
      ports_(static_cast<uint32_t>(spec.board.ports.size())),
      link_of_port_(spec.num_chips * ports_, -1),
      tx_(spec.num_chips * ports_),
      frame_payload_(std::min<uint32_t>(spec.link_model.mtu ? spec.link_model.mtu : 16384, abi::kTtLinkMaxPayload)) {
    for (uint32_t c = 0; c < spec.num_chips; ++c) landed_.push_back(CoreTouches{&spec.board, &chips_[c]->memory()});
    for (const LinkSpec& l : spec.links) {
        auto link = std::make_unique<Link>();
        link->end[0] = l.a;
        link->end[1] = l.b;
        link->line = l.line;
        Link* raw = link.get();
        // The cluster file's wire options: the faults the cable starts with
        // (weft fault changes them later) and its own reproducible stream.
        const LinkOptions o = spec.link_options(links_.size());
        const WireFaults wire{o.drop_rate, o.bit_error_rate, o.seed};
        link->cable = std::make_unique<TtLinkCable>(bridge_tt_link_config(o.compliance), wire,
                                                    [this, raw](int receiver, uint64_t dst, const uint8_t* p,
                                                                size_t n) { deliver(*raw, receiver, dst, p, n); });
        if (o.flap_period_ms || o.bandwidth_gbps > 0 || o.latency_us > 0) {
            CableFaults f = link->cable->faults();
            f.flap_period_ms = o.flap_period_ms;
            f.flap_down_ms = o.flap_down_ms;
            f.bandwidth_gbps = o.bandwidth_gbps;
            f.latency_us = o.latency_us;
            link->cable->set_faults(f);  // values the cluster file parser already checked
        }
        link_of_port_[l.a.chip * ports_ + l.a.port] = static_cast<int>(links_.size());
        link_of_port_[l.b.chip * ports_ + l.b.port] = static_cast<int>(links_.size());
        links_.push_back(std::move(link));
    }
}

int Ethernet::link_index(uint32_t chip, uint32_t port) const {
    if (chip >= spec_.num_chips || port >= ports_) return -1;
    return link_of_port_[chip * ports_ + port];
}

bool Ethernet::in_flight() const {
    for (const auto& l : links_)
        if (l->cable->plugged() && !l->cable->quiet()) return true;
    return false;
}

long Ethernet::until_frame_due_us() const {
    const uint64_t now = now_us_();
    double due = std::numeric_limits<double>::infinity();
    for (const auto& l : links_)
        if (l->cable->plugged()) due = std::min(due, l->cable->next_due_us(now));
    if (due == std::numeric_limits<double>::infinity()) return -1;
    return long(std::ceil(due - double(now)));  // next_due_us gives only times ahead
}

int Ethernet::peer_chip(uint32_t chip, uint32_t port) const {
    const int li = link_index(chip, port);
    if (li < 0) return -1;
    const Link& l = *links_[li];
    return static_cast<int>(l.end[1 - l.side(chip, port)].chip);
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
            const PortRef& peer = l.end[1 - l.side(chip, port)];
            ps.peer_chip = peer.chip;
            ps.peer_port = peer.port;
            store_release(ps.state, l.cable->plugged() ? uint32_t(abi::kLinkUp) : uint32_t(abi::kLinkDown));
        }
    }
}

void Ethernet::set_link_up(size_t link, bool up) {
    links_.at(link)->cable->set_plugged(up);
    publish_port_states();
}

void Ethernet::chip_died(uint32_t chip) {
    for (auto& l : links_)
        if (l->end[0].chip == chip || l->end[1].chip == chip) l->cable->set_plugged(false);
    publish_port_states();
}

void Ethernet::deliver(const Link& link, int receiver, uint64_t dst, const uint8_t* payload, size_t len) {
    const ChipMemory& mem = chips_[link.end[receiver].chip]->memory();
    uint8_t* d = mem.at(dst, len);
    if (!d) {
        ++const_cast<Link&>(link).misaddressed;
        return;
    }
    if (len == 4 && (dst & 3) == 0) {
        // A word (send_word) is one store, released after every byte before it.
        uint32_t w;
        memcpy(&w, payload, 4);
        __atomic_store_n(reinterpret_cast<uint32_t*>(d), w, __ATOMIC_RELEASE);
    } else {
        memcpy(d, payload, len);
    }
    landed_[link.end[receiver].chip].write(dst, len);
}

CoreTouches Ethernet::take_landed(uint32_t chip) {
    const CoreTouches landed = landed_[chip];
    landed_[chip].cores = landed_[chip].l1 = 0;
    return landed;
}

uint32_t Ethernet::frame_commands(uint32_t chip, uint32_t port, int side, abi::EthRing& ring, TxPort& tx) {
    Link& link = *links_[link_index(chip, port)];
    TtLinkEndpoint& mac = link.cable->mac(side);
    const ChipMemory& local = chips_[chip]->memory();
    const ChipMemory& remote = chips_[link.end[1 - side].chip]->memory();
    const uint32_t tail = load_acquire(ring.tail);
    uint32_t frames = 0;
    const auto refuse = [&](uint32_t err) {
        ring.error_index = tx.next;
        store_release(ring.error, err);
    };
    while (tx.next != tail && mac.can_send()) {
        if (tail - ring.head > abi::EthRing::kSlots) {  // a tail beyond the ring's size: the producer is broken
            refuse(abi::kRingBadArgument);
            break;
        }
        const abi::EthCommand c = ring.slots[tx.next & (abi::kEthSlots - 1)];  // copy: the slot is shared memory
        uint32_t len = 0;
        if (c.op == abi::kEthSendWord) {
            if ((c.dst & 3) || !remote.at(c.dst, 4)) {
                refuse(abi::kRingBadAddress);
                break;
            }
            mac.send_borrowed(c.dst, reinterpret_cast<const uint8_t*>(&c.value), 4);  // small: copied
            ++frames;
            ++tx.queued;
        } else if (c.op == abi::kEthSendBytes) {
            const uint8_t* s = local.at(c.src, c.len);
            if (!s || !remote.at(c.dst, c.len)) {
                refuse(abi::kRingBadAddress);
                break;
            }
            len = c.len;
            if (len) {
                // The source stays put until the command completes (DMA rules),
                // so frames point into it instead of copying it.
                const uint32_t n = std::min(frame_payload_, len - tx.offset);
                mac.send_borrowed(c.dst + tx.offset, s + tx.offset, n);
                tx.offset += n;
                ++frames;
                ++tx.queued;
            }
        } else {
            refuse(abi::kRingBadOpcode);
            break;
        }
        if (tx.offset >= len) {
            tx.last_frame[tx.next & (abi::kEthSlots - 1)] = tx.queued;
            ++tx.next;
            tx.offset = 0;
        }
    }
    return frames;
}

uint32_t Ethernet::complete_commands(abi::EthRing& ring, TxPort& tx, uint64_t frames_done) {
    uint32_t head = ring.head, n = 0;
    while (head != tx.next && frames_done >= tx.last_frame[head & (abi::kEthSlots - 1)]) {
        ++head;
        ++n;
    }
    if (n) store_release(ring.head, head);
    return n;
}

uint32_t Ethernet::run_port(uint32_t chip, uint32_t port, uint32_t budget) {
    abi::EthRing& ring = chips_[chip]->control().eth[port];
    const int li = link_index(chip, port);
    const auto refuse_all = [&] {
        return consume_ring(ring, budget, [](const abi::EthCommand&) { return abi::kRingLinkDown; });
    };
    if (li < 0) return refuse_all();  // no cable on this port
    Link& link = *links_[li];
    const int side = link.side(chip, port);
    if (!chips_[link.end[1 - side].chip]->alive()) return refuse_all();  // a dead peer never comes back
    TxPort& tx = tx_[chip * ports_ + port];

    const uint32_t reset = load_acquire(ring.reset_seq);
    if (reset != ring.reset_ack) {
        // The producer gave up on what is queued: drop it and start clean.
        // Frames already with the MAC still go out (a MAC can't recall them);
        // later commands complete after them, in order.
        const uint32_t tail = load_acquire(ring.tail);
        tx.next = tail;
        tx.offset = 0;
        ring.error = abi::kRingOk;
        ring.error_index = 0;
        store_release(ring.head, tail);
        store_release(ring.reset_ack, reset);
        return 1;
    }

    TtLinkEndpoint& mac = link.cable->mac(side);
    uint32_t completed = 0;
    uint64_t delivered = 0;
    for (;;) {
        const uint32_t framed = ring.error == abi::kRingOk ? frame_commands(chip, port, side, ring, tx) : 0;
        if (framed || !link.cable->quiet()) delivered += link.cable->pump(now_us_());
        const uint32_t done = complete_commands(ring, tx, mac.counters().frames_done);
        completed += done;
        // Stop when nothing new was framed (the cable has been pumped: what is
        // left waits for a timer or a plug) or this ring had its share of the pass.
        if (framed == 0 || completed >= budget) break;
    }
    return completed + (completed == 0 && delivered ? 1 : 0);
}

}  // namespace weft
