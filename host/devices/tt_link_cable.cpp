#include "devices/tt_link_cable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "common/error.h"
#include "driver/cluster_file.h"
#include "weft/abi/control_block.h"

namespace weft {

void check_cable_faults(const CableFaults& f) {
    const auto is_rate = [](double r) { return r >= 0 && r <= 1; };  // also refuses NaN
    if (!is_rate(f.drop_rate)) throw Error("frame drop rate must be within [0, 1], not " + std::to_string(f.drop_rate));
    if (!is_rate(f.bit_error_rate))
        throw Error("bit-error rate must be within [0, 1], not " + std::to_string(f.bit_error_rate));
    if (f.flap_period_ms && f.flap_down_ms >= f.flap_period_ms)
        throw Error("a flapping link must be up part of each period: down " + std::to_string(f.flap_down_ms) +
                    " ms is not shorter than the period of " + std::to_string(f.flap_period_ms) + " ms");
    if (!f.flap_period_ms && f.flap_down_ms) throw Error("a flap needs a period as well as a down time");
    // Upper bounds keep the arithmetic sane; no emulated link comes near them.
    if (!(f.bandwidth_gbps == 0 || (f.bandwidth_gbps >= kMinLinkGBps && f.bandwidth_gbps <= kMaxLinkGBps))) {
        char got[32];
        snprintf(got, sizeof got, "%g", f.bandwidth_gbps);
        throw Error(std::string("link bandwidth must be 0 (unshaped) or within [0.000001, 10000] GB/s, not ") + got);
    }
    if (!(f.latency_us >= 0 && f.latency_us <= kMaxLinkLatencyUs))
        throw Error("link latency must be within [0, 1000000] us, not " + std::to_string(f.latency_us));
}

namespace {
// How far ahead of now a shaped wire's serialiser may be booked: a NIC's TX
// queue. The engine pumps every few µs when busy, but a loaded host can
// deschedule it for a scheduler tick; with this much queued the wire stays
// busy across such a gap and the average rate stays the configured one.
constexpr double kWireQueueUs = 500;
}  // namespace

TtLinkConfig bridge_tt_link_config(bool compliance_mode) {
    TtLinkConfig c;
    c.compliance_mode = compliance_mode;
    // On an unshaped wire frames reach the far MAC within the pump that sends
    // them, so an ack is late only when it was lost: the timer need not wait
    // for a round trip, just long enough that a lossy link still moves (a
    // shaped cable stretches it by its window's time on the wire, see
    // TtLinkCable). The window is twice a port's command ring (a command is a
    // frame or more), so on a shaped wire the ring, not the MAC, bounds what
    // is in flight: a round trip there is the wire's queue plus an ack.
    c.window = 2 * abi::kEthSlots;
    c.retransmit_timeout = 200;
    c.timeouts_before_retrain = 8;
    return c;
}

const char* cable_state_name(CableState s) {
    switch (s) {
        case CableState::kUp: return "up";
        case CableState::kDown: return "down";
        case CableState::kRetraining: return "retraining";
    }
    return "?";
}

TtLinkCable::TtLinkCable(const TtLinkConfig& config, const WireFaults& wire, DeliverFn deliver)
    : wire_{FaultyWire(wire), FaultyWire(WireFaults{wire.drop_rate, wire.bit_error_rate, wire.seed ^ 0x5eed})},
      deliver_(std::move(deliver)),
      compliance_(config.compliance_mode),
      mode_wanted_(config.compliance_mode),
      base_retransmit_timeout_(config.retransmit_timeout) {
    for (int end = 0; end < 2; ++end)
        mac_[end] = std::make_unique<TtLinkEndpoint>(config, [this, end](uint64_t dst, const uint8_t* p, size_t n) {
            deliver_(end, dst, p, n);
        });
    faults_.drop_rate = wire.drop_rate;
    faults_.bit_error_rate = wire.bit_error_rate;
}

void TtLinkCable::set_faults(const CableFaults& f) {
    check_cable_faults(f);
    std::lock_guard<std::mutex> lock(faults_mutex_);
    faults_ = f;
    faults_changed_.store(true, std::memory_order_release);
}

CableFaults TtLinkCable::faults() const {
    std::lock_guard<std::mutex> lock(faults_mutex_);
    return faults_;
}

void TtLinkCable::take_new_faults(uint64_t now_us) {
    if (!faults_changed_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(faults_mutex_);
    faults_changed_.store(false, std::memory_order_relaxed);
    for (FaultyWire& w : wire_) w.set_rates(faults_.drop_rate, faults_.bit_error_rate);
    flap_period_us_ = uint64_t(faults_.flap_period_ms) * 1000;
    flap_down_us_ = uint64_t(faults_.flap_down_ms) * 1000;
    flap_epoch_us_ = now_us;
    const bool reshaped = bandwidth_gbps_ != faults_.bandwidth_gbps || latency_us_ != faults_.latency_us;
    bandwidth_gbps_ = faults_.bandwidth_gbps;
    latency_us_ = faults_.latency_us;
    if (reshaped) retime_wires(now_us);
    // Go-Back-N must not time out on frames that are merely slow: a full
    // window's serialisation, the queue ahead of it and a round trip of latency.
    uint64_t timeout = base_retransmit_timeout_;
    if (faults_.shaped()) {
        const double frame = sizeof(abi::TtLinkHeader) + abi::kTtLinkMaxPayload + sizeof(abi::TtLinkTrailer);
        const double window_us = bandwidth_gbps_ > 0 ? mac_[0]->config().window * frame / (bandwidth_gbps_ * 1e3) : 0;
        timeout += static_cast<uint64_t>(2 * (window_us + kWireQueueUs + 2 * latency_us_));
    }
    for (auto& mac : mac_) mac->set_retransmit_timeout(timeout);
}

// New shaping holds from now: what is still being serialised leaves at the
// new rate (a wire slowed to a crawl and freed again must not keep its
// bookings for hours); what has left arrives as it was booked to.
void TtLinkCable::retime_wires(uint64_t now_us) {
    for (int from = 0; from < 2; ++from) {
        double start = double(now_us), arrived = 0;
        for (InTransit& t : transit_[from]) {
            if (t.wire_done_us > double(now_us)) {
                const double bytes = double(sizeof(abi::TtLinkHeader) + t.header.length + sizeof(abi::TtLinkTrailer));
                t.wire_done_us = start + (bandwidth_gbps_ > 0 ? bytes / (bandwidth_gbps_ * 1e3) : 0);
                t.arrive_us = std::max(t.wire_done_us + latency_us_, arrived);  // never ahead of one sent before it
                start = t.wire_done_us;
            }
            arrived = t.arrive_us;
        }
        wire_free_us_[from] = std::min(wire_free_us_[from], start);
    }
}

void TtLinkCable::change_mode_when_drained() {
    // Held only while a change waits (asked for and taken back: released).
    const bool pending = mode_change_pending();
    mac_[0]->hold(pending);
    mac_[1]->hold(pending);
    if (!pending) return;
    if (!mac_[0]->idle() || !mac_[1]->idle() || !transit_[0].empty() || !transit_[1].empty() ||
        !acks_ahead_[0].empty() || !acks_ahead_[1].empty())
        return;
    const bool wanted = mode_wanted_.load(std::memory_order_acquire);
    for (auto& mac : mac_) {
        mac->set_mode(wanted);
        mac->hold(false);
    }
    compliance_.store(wanted, std::memory_order_release);
}

bool TtLinkCable::carrier(uint64_t now_us) const {
    if (!plugged()) return false;
    if (!flap_period_us_) return true;
    return (now_us - flap_epoch_us_) % flap_period_us_ >= flap_down_us_;  // down first, then up
}

bool TtLinkCable::wire_ready(int from, uint64_t now_us) const {
    return wire_free_us_[from] < double(now_us) + kWireQueueUs;
}

bool TtLinkCable::put_on_wire(int from, const FrameView& frame, size_t bytes, InTransit& t) {
    const FaultyWire::Fate fate = wire_[from].judge(bytes);
    if (fate == FaultyWire::Fate::kDropped) return false;
    t.header = frame.header;
    if (fate == FaultyWire::Fate::kCorrupted) {
        encode_frame_into(frame.header, frame.payload, t.owned);
        wire_[from].corrupt(t.owned.data());
        t.corrupted = true;
    } else if (frame.payload && (mac_[from]->compliance_mode() || frame.header.length <= 8)) {
        // A compliance frame is done once sent (its source may be reused while
        // it travels), and a small payload lives in a MAC slot: keep a copy.
        t.owned.assign(frame.payload, frame.payload + frame.header.length);
    } else {
        t.payload = frame.payload;
    }
    return true;
}

void TtLinkCable::send_shaped(int from, const FrameView& frame, uint64_t now_us) {
    const size_t bytes = sizeof(abi::TtLinkHeader) + frame.header.length + sizeof(abi::TtLinkTrailer);
    // A lost frame took its time on the wire all the same.
    const double start = std::max(double(now_us), wire_free_us_[from]);
    wire_free_us_[from] = start + (bandwidth_gbps_ > 0 ? double(bytes) / (bandwidth_gbps_ * 1e3) : 0);
    InTransit t;
    t.wire_done_us = wire_free_us_[from];
    t.arrive_us = t.wire_done_us + latency_us_;
    if (put_on_wire(from, frame, bytes, t)) transit_[from].push_back(std::move(t));
}

void TtLinkCable::send_ack_ahead(int from, const FrameView& frame, uint64_t now_us) {
    const size_t bytes = sizeof(abi::TtLinkHeader) + sizeof(abi::TtLinkTrailer);
    const double serialise_us = bandwidth_gbps_ > 0 ? double(bytes) / (bandwidth_gbps_ * 1e3) : 0;
    // After the frame on the wire now (the first queued one still leaving).
    // Frames queued later start the ack's own time later; those already
    // booked keep their times (a header's worth: tens of ns at these rates).
    double start = double(now_us);
    for (const InTransit& q : transit_[from])
        if (q.wire_done_us > start) {
            start = q.wire_done_us;
            break;
        }
    wire_free_us_[from] += serialise_us;
    InTransit t;
    t.wire_done_us = start + serialise_us;
    t.arrive_us = t.wire_done_us + latency_us_;
    if (!acks_ahead_[from].empty()) t.arrive_us = std::max(t.arrive_us, acks_ahead_[from].back().arrive_us);
    if (put_on_wire(from, frame, bytes, t)) acks_ahead_[from].push_back(std::move(t));
}

bool TtLinkCable::deliver_arrived(int from, uint64_t now_us) {
    bool any = false;
    std::deque<InTransit>& data = transit_[from];
    std::deque<InTransit>& acks = acks_ahead_[from];
    for (;;) {
        // The two queues merged by arrival time (acks first on a tie: they were sent first).
        const bool data_due = !data.empty() && data.front().arrive_us <= double(now_us);
        const bool ack_due = !acks.empty() && acks.front().arrive_us <= double(now_us);
        if (!data_due && !ack_due) break;
        std::deque<InTransit>& q = ack_due && (!data_due || acks.front().arrive_us <= data.front().arrive_us) ? acks
                                                                                                              : data;
        InTransit t = std::move(q.front());
        q.pop_front();
        TtLinkEndpoint& to = *mac_[1 - from];
        if (t.corrupted) to.receive(t.owned.data(), t.owned.size());
        else
            to.receive_good(t.header, t.owned.empty() ? t.payload : t.owned.data());
        any = true;
    }
    return any;
}

void TtLinkCable::transmit(int from, const FrameView& frame) {
    TtLinkEndpoint& to = *mac_[1 - from];
    const size_t bytes = sizeof(abi::TtLinkHeader) + frame.header.length + sizeof(abi::TtLinkTrailer);
    switch (wire_[from].judge(bytes)) {
        case FaultyWire::Fate::kDropped: return;
        case FaultyWire::Fate::kIntact:
            // A CRC computed over a frame the wire did not touch always matches
            // the one the sender would have put in its trailer, so neither end
            // computes it: an intact frame costs the payload copy only.
            return to.receive_good(frame.header, frame.payload);
        case FaultyWire::Fate::kCorrupted:
            // The real thing: the frame with its CRC, bits flipped, checked by
            // the receiving MAC (which drops it, barring a 2^-32 miss).
            encode_frame_into(frame.header, frame.payload, scratch_);
            wire_[from].corrupt(scratch_.data());
            return to.receive(scratch_.data(), scratch_.size());
    }
}

uint64_t TtLinkCable::pump(uint64_t now_us) {
    take_new_faults(now_us);
    const uint64_t delivered_before = mac_[0]->counters().frames_received + mac_[1]->counters().frames_received;
    if (!carrier(now_us)) {
        // No light on the fibre: nothing is sent and no timer runs, so a
        // pulled cable costs the engine nothing while it waits.
        if (carrier_) {
            carrier_ = false;
            for (auto& q : transit_) q.clear();  // what was on the fibre is lost
            for (auto& q : acks_ahead_) q.clear();
            publish();
        }
        return 0;
    }
    if (!carrier_) {
        // The cable is back: resynchronise both ends' sequence numbers (the
        // peer answers and resends from where we stand).
        carrier_ = true;
        mac_[0]->retrain();
    }
    mac_[0]->tick(now_us);
    mac_[1]->tick(now_us);
    // Each round drains both MACs; an exchange ends within a few rounds (data,
    // ack; or retrain request, answer, data, ack). The cap is a guard only.
    const bool shaped = bandwidth_gbps_ > 0 || latency_us_ > 0;
    for (int round = 0; round < 64; ++round) {
        bool said = false;
        for (int end = 0; end < 2; ++end) {
            // Frames still on a wire whose shaping was just lifted go first: order is kept.
            const bool delay_line = shaped || !transit_[end].empty() || !acks_ahead_[end].empty();
            if (delay_line) said |= deliver_arrived(end, now_us);
            FrameView frame;
            // A data frame queued now would start only when the wire is free:
            // an ack owed meanwhile goes ahead of the queue, as a MAC slips a
            // control frame between two data frames.
            if (delay_line && wire_free_us_[end] > double(now_us) && mac_[end]->next_ack_view(frame)) {
                send_ack_ahead(end, frame, now_us);
                said = true;
            }
            while ((!delay_line || wire_ready(end, now_us)) && mac_[end]->next_frame_view(frame)) {
                if (delay_line) send_shaped(end, frame, now_us);
                else
                    transmit(end, frame);
                said = true;
            }
        }
        if (!said) break;
    }
    change_mode_when_drained();
    publish();
    return mac_[0]->counters().frames_received + mac_[1]->counters().frames_received - delivered_before;
}

void TtLinkCable::publish() {
    constexpr auto kRelaxed = std::memory_order_relaxed;
    uint64_t retrains = 0;
    for (int end = 0; end < 2; ++end) {
        const TtLinkCounters& tx = mac_[end]->counters();
        const TtLinkCounters& rx = mac_[1 - end]->counters();
        CableDirectionCounters& d = dir_[end];
        d.frames.store(tx.frames_sent, kRelaxed);
        d.bytes.store(tx.bytes_sent, kRelaxed);
        d.delivered.store(rx.frames_received, kRelaxed);
        d.retransmits.store(tx.retransmits, kRelaxed);
        d.bytes_resent.store(tx.bytes_resent, kRelaxed);
        d.crc_errors.store(rx.crc_errors, kRelaxed);
        d.dropped.store(wire_[end].stats().dropped, kRelaxed);
        d.timeouts.store(tx.timeouts, kRelaxed);
        retrains += tx.retrains;
    }
    retrains_.store(retrains, kRelaxed);
    const CableState s = !carrier_                                        ? CableState::kDown
                         : mac_[0]->retraining() || mac_[1]->retraining() ? CableState::kRetraining
                                                                          : CableState::kUp;
    state_.store(static_cast<uint32_t>(s), kRelaxed);
}

double TtLinkCable::next_due_us(uint64_t now_us) const {
    // Only times still ahead: a frame already due that the last pump did not
    // deliver waits for its receiver, not for the clock.
    double due = std::numeric_limits<double>::infinity();
    const auto ahead = [&](double at) {
        if (at > double(now_us)) due = std::min(due, at);
    };
    for (int d = 0; d < 2; ++d) {
        for (const InTransit& t : transit_[d])
            if (t.arrive_us > double(now_us)) {
                ahead(t.arrive_us);
                break;
            }
        if (!acks_ahead_[d].empty()) ahead(acks_ahead_[d].front().arrive_us);
        ahead(wire_free_us_[d] - kWireQueueUs);
    }
    return due;
}

}  // namespace weft
