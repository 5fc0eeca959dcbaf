// One Ethernet cable in TT-link mode: the MACs at its two ends (TtLinkEndpoint)
// and the wire between them (FaultyWire, one per direction), as the bridge's
// Ethernet data path drives them. Frames travel as views (header + where the
// payload lies in the sending chip's memory), so a frame the wire leaves alone
// costs the receiving MAC's copy of its payload and nothing else.
//
// Threads: pump() and the MACs belong to the engine thread. set_plugged(),
// set_faults() and the published counters are for any thread (the control
// socket); new faults take effect at the engine's next pump.
#pragma once
#include <stdint.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "devices/tt_link.h"

namespace weft {

// What can be changed on a cable while it runs: its faults and its shaping.
struct CableFaults {
    double drop_rate = 0;       // per frame
    double bit_error_rate = 0;  // per bit
    // Flapping: the carrier goes down for flap_down_ms out of every
    // flap_period_ms (from when the flap was set). 0: steady.
    uint32_t flap_period_ms = 0, flap_down_ms = 0;
    // Shaping, each direction on its own (full duplex). bandwidth_gbps is in
    // GB/s (1e9 bytes/s) of whole frames, header and trailer included; 0 is
    // unshaped (frames cross at the engine's copy speed). latency_us is the
    // time on the wire after a frame's last byte is sent; 0 is none.
    double bandwidth_gbps = 0, latency_us = 0;
    bool shaped() const { return bandwidth_gbps > 0 || latency_us > 0; }
};
// Throws weft::Error naming the bad value (rates outside [0, 1], a flap whose
// down time is not shorter than its period, a negative or absurd shaping).
void check_cable_faults(const CableFaults& f);

// The TT-link parameters the bridge runs its cables' MACs with (times in µs).
TtLinkConfig bridge_tt_link_config(bool compliance_mode);

enum class CableState : uint32_t { kUp = 0, kDown = 1, kRetraining = 2 };
const char* cable_state_name(CableState s);

// Counters of one direction (traffic sent by one end), readable from any thread.
struct CableDirectionCounters {
    std::atomic<uint64_t> frames{0};       // data frames put on the wire, retransmissions included
    std::atomic<uint64_t> bytes{0};        // their payload bytes
    std::atomic<uint64_t> delivered{0};    // data frames the far MAC accepted (exactly once each)
    std::atomic<uint64_t> retransmits{0};  // data frames put on the wire again
    std::atomic<uint64_t> bytes_resent{0};  // their payload bytes
    std::atomic<uint64_t> crc_errors{0};   // frames the far MAC refused for a bad CRC
    std::atomic<uint64_t> dropped{0};      // frames the wire lost
    std::atomic<uint64_t> timeouts{0};     // retransmit timer expiries at the sending MAC
};

class TtLinkCable {
public:
    // receiver: the end (0 or 1) whose chip the payload lands in.
    using DeliverFn = std::function<void(int receiver, uint64_t dst, const uint8_t* payload, size_t len)>;

    TtLinkCable(const TtLinkConfig& config, const WireFaults& wire, DeliverFn deliver);

    TtLinkEndpoint& mac(int end) { return *mac_[end]; }
    // Moves frames both ways until neither MAC has more to say, after firing
    // the timers due at now_us. Returns the data frames delivered.
    uint64_t pump(uint64_t now_us);
    // Nothing for pump() to do: both MACs idle, the cable steady, no new
    // faults. Lets the engine skip idle cables on every pass.
    bool quiet() const {
        return mac_[0]->idle() && mac_[1]->idle() && carrier_ == plugged() && !flap_period_us_ && transit_[0].empty() &&
               transit_[1].empty() && acks_ahead_[0].empty() && acks_ahead_[1].empty() &&
               !faults_changed_.load(std::memory_order_relaxed) && !mode_change_pending();
    }

    // When, after now_us, the next frame on a shaped wire arrives or a busy
    // serialiser takes the next, in the engine's µs; infinity if never.
    double next_due_us(uint64_t now_us) const;

    // --- any thread ---
    void set_plugged(bool plugged) { plugged_.store(plugged, std::memory_order_release); }
    bool plugged() const { return plugged_.load(std::memory_order_acquire); }
    void set_faults(const CableFaults& f);  // throws like check_cable_faults
    CableFaults faults() const;
    // Asks for compliance or TT-link mode. The MACs stop taking frames, what
    // they hold drains (TT-link: acknowledged), then both ends switch at one
    // pump, so no frame is half in one mode and half in the other. A pulled
    // cable delays the switch until it is back.
    void set_mode(bool compliance) { mode_wanted_.store(compliance, std::memory_order_release); }
    bool compliance_mode() const { return compliance_.load(std::memory_order_acquire); }
    bool mode_change_pending() const {
        return mode_wanted_.load(std::memory_order_acquire) != compliance_.load(std::memory_order_acquire);
    }
    CableState state() const { return static_cast<CableState>(state_.load(std::memory_order_relaxed)); }
    const CableDirectionCounters& counters(int sender) const { return dir_[sender]; }
    uint64_t retrains() const { return retrains_.load(std::memory_order_relaxed); }

private:
    // A frame on a shaped wire: sent, not yet arrived.
    struct InTransit {
        double wire_done_us = 0;  // its last byte leaves the sender
        double arrive_us = 0;
        abi::TtLinkHeader header{};
        const uint8_t* payload = nullptr;  // TT-link data: the sender holds it until acknowledged
        std::vector<uint8_t> owned;        // else a copy; or the whole frame when corrupted
        bool corrupted = false;
    };

    void transmit(int from, const FrameView& frame);
    // Shaped wires: may `from` start another frame, and which frames are due.
    bool wire_ready(int from, uint64_t now_us) const;
    void send_shaped(int from, const FrameView& frame, uint64_t now_us);
    // An ack-only frame slipped in ahead of the data queued on the wire: it
    // waits for the frame being serialised, not for the whole queue.
    void send_ack_ahead(int from, const FrameView& frame, uint64_t now_us);
    // The frame as it travels (false: the wire lost it).
    bool put_on_wire(int from, const FrameView& frame, size_t bytes, InTransit& t);
    bool deliver_arrived(int from, uint64_t now_us);
    bool carrier(uint64_t now_us) const;
    void take_new_faults(uint64_t now_us);
    void retime_wires(uint64_t now_us);
    void change_mode_when_drained();
    void publish();

    std::unique_ptr<TtLinkEndpoint> mac_[2];
    FaultyWire wire_[2];  // wire_[i]: frames sent by end i
    DeliverFn deliver_;
    std::atomic<bool> compliance_;  // written by the engine thread only
    std::atomic<bool> mode_wanted_;
    std::vector<uint8_t> scratch_;      // a corrupted frame, built only when the wire corrupts one
    bool carrier_ = true;               // as of the last pump
    uint64_t base_retransmit_timeout_;  // the config's, for an unshaped wire
    double bandwidth_gbps_ = 0, latency_us_ = 0;
    double wire_free_us_[2] = {0, 0};      // when each direction's serialiser is done with what it has
    std::deque<InTransit> transit_[2];     // in arrival order (one serialiser, one latency)
    std::deque<InTransit> acks_ahead_[2];  // ack-only frames sent ahead of transit_, in arrival order
    uint64_t flap_period_us_ = 0, flap_down_us_ = 0, flap_epoch_us_ = 0;

    std::atomic<bool> plugged_{true};
    mutable std::mutex faults_mutex_;
    CableFaults faults_;  // guarded by faults_mutex_
    std::atomic<bool> faults_changed_{false};

    CableDirectionCounters dir_[2];
    std::atomic<uint64_t> retrains_{0};
    std::atomic<uint32_t> state_{0};
};

}  // namespace weft
