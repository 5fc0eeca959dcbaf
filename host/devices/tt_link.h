// TT-link, the Layer-2 protocol of the emulated Ethernet links (the TT-Fabric architecture spec,
// "TT-link mode"). Every frame carries a 16-byte header and a CRC-32 trailer
// (weft/abi/tt_link.h); a Go-Back-N ARQ resends whatever the wire lost or
// corrupted, so the upper layer sees every payload exactly once and in order.
// In compliance mode the same frames travel without ARQ: a bad frame is lost.
//
// The engine is bookkeeping only: no threads, sockets or QEMU. The caller moves
// frames between two endpoints over a wire of its own and tells them the time,
// so the caller (a test, or the bridge through FaultyWire) decides what the wire
// drops, corrupts, duplicates or reorders, and every run is reproducible.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "weft/abi/tt_link.h"

namespace weft {

// CRC-32 as Ethernet's FCS computes it. Chainable: pass the previous result as
// `crc` to continue over more bytes.
uint32_t tt_link_crc32(const void* data, size_t len, uint32_t crc = 0);

struct DecodedFrame {
    abi::TtLinkHeader header;
    std::span<const uint8_t> payload;  // views the bytes given to decode_frame
};

// header.length payload bytes are read from `payload` (may be null when 0).
std::vector<uint8_t> encode_frame(const abi::TtLinkHeader& header, const uint8_t* payload);
// nullopt when the frame is truncated, its length field disagrees with its
// size, or its CRC is wrong: on a real MAC all three are just a bad FCS.
std::optional<DecodedFrame> decode_frame(const uint8_t* bytes, size_t len);
// encode_frame into a buffer the caller reuses (no allocation once it is big enough).
void encode_frame_into(const abi::TtLinkHeader& header, const uint8_t* payload, std::vector<uint8_t>& out);

// A frame as a MAC hands it to the wire without building it: the header and
// where the payload lies (header.length bytes). A wire that leaves the frame
// alone never needs its bytes or its CRC; only one that corrupts it does.
struct FrameView {
    abi::TtLinkHeader header;
    const uint8_t* payload;  // valid until the endpoint is next called
};

struct TtLinkConfig {
    bool compliance_mode = false;  // no ARQ: deliver good frames, drop bad ones
    // Data frames sent but not yet acknowledged (compliance: queued, not yet
    // sent). At most kMaxWindow so an old ack can't pass for a new one.
    uint16_t window = 32;
    // In the caller's time units (see TtLinkEndpoint::tick): how long the oldest
    // unacked frame waits for its ack before everything unacked is sent again.
    uint64_t retransmit_timeout = 100;
    // Consecutive timeouts with no ack making progress before the link retrains.
    uint32_t timeouts_before_retrain = 8;

    static constexpr uint16_t kMaxWindow = 0x7fff;  // half the 16-bit sequence space, less one
};

struct TtLinkCounters {
    uint64_t frames_sent = 0;      // data frames put on the wire, retransmissions included
    uint64_t bytes_sent = 0;       // their payload bytes
    uint64_t frames_received = 0;  // data frames delivered to the upper layer
    uint64_t retransmits = 0;      // data frames put on the wire again
    uint64_t bytes_resent = 0;     // their payload bytes
    uint64_t crc_errors = 0;       // frames dropped because decode_frame refused them
    uint64_t duplicates = 0;       // data frames dropped: already delivered
    uint64_t out_of_order = 0;     // data frames dropped: an earlier one is still missing
    uint64_t timeouts = 0;         // retransmit (or retrain request) timer expiries
    uint64_t retrains = 0;         // retrain handshakes this endpoint started
    uint64_t acks_sent = 0;        // ack-only frames (piggybacked acks are free)
    uint64_t frames_done = 0;      // data frames the sender is finished with: acknowledged
                                   // (compliance: put on the wire). The upper layer's completions.
};

// One MAC's side of a TT-link: the sending direction (Go-Back-N window and
// retransmit timer) and the receiving direction (in-order acceptance and the
// cumulative ack) together, so acks ride on data frames when there are any.
//
// Retrain: after timeouts_before_retrain timeouts without progress (or when
// retrain() is called) the endpoint stops sending data and sends a RETRAIN
// request every retransmit_timeout until the peer's RETRAIN answer arrives. Each
// side's RETRAIN frame carries its receiver's next expected sequence number, so
// the other side frees exactly what was delivered and resends the rest from
// there. Sequence numbers are kept, not reset to zero: frames of the old run
// still on the wire then fall out as duplicates instead of passing for new ones
// (the header has no room for an epoch). Nothing is lost or delivered twice.
class TtLinkEndpoint {
public:
    // The payload pointer is valid only during the call.
    using DeliverFn = std::function<void(uint64_t dst, const uint8_t* payload, size_t len)>;
    using RetrainFn = std::function<void()>;

    // Throws weft::Error on an unusable config.
    TtLinkEndpoint(const TtLinkConfig& config, DeliverFn deliver, RetrainFn on_retrain = {});

    // --- Upper layer to wire ---
    bool can_send() const;  // the window has room for one more frame
    // Queues a payload (copied) with the next tx_seq. Throws weft::Error when
    // !can_send() or len > abi::kTtLinkMaxPayload: the caller must back off.
    void send(uint64_t dst, const uint8_t* payload, size_t len);
    // send() without the copy, for a DMA engine whose source stays put: the
    // payload must stay valid and unchanged until counters().frames_done says
    // the frame is done. Payloads of up to 8 bytes are copied anyway (a word
    // command's value lives in a ring slot the producer reuses).
    void send_borrowed(uint64_t dst, const uint8_t* payload, size_t len);
    // The next frame this MAC puts on the wire, or nullopt when it has nothing
    // to say. Call until nullopt after each send(), receive() and tick().
    std::optional<std::vector<uint8_t>> next_frame();
    // The same without encoding: false when there is nothing to say.
    bool next_frame_view(FrameView& out);
    // An ack-only frame if one is owed (false otherwise), for a wire that
    // sends acks ahead of the data frames it has queued: a data frame queued
    // now would carry the ack only once the queue ahead of it has gone.
    bool next_ack_view(FrameView& out);

    // --- Wire to upper layer ---
    // A frame off the wire, good or bad. May call the deliver callback.
    void receive(const uint8_t* frame, size_t len);
    // A frame known to be intact (its CRC matches), already split in header
    // and payload; receive() ends here after decode_frame.
    void receive_good(const abi::TtLinkHeader& header, const uint8_t* payload);
    // A frame whose CRC did not match.
    void receive_bad() { ++counters_.crc_errors; }

    // Advances time (monotonic, caller's units); fires the timers that are due.
    void tick(uint64_t now);
    // Starts a retrain handshake now (e.g. when the bridge brings a link back
    // up; it may call this on both ends). No-op in compliance mode.
    void retrain();

    // Holding: can_send() says no, so the upper layer stops queueing while
    // what is queued drains (before a mode change).
    void hold(bool held) { held_ = held; }
    // Switches between TT-link and compliance mode. Only while idle() and with
    // nothing on the wire, and on both ends of the link at once (as a PHY
    // renegotiates both ends): sequence numbers restart at 0 on both, since
    // compliance mode does not keep them in step. Counters carry on. Throws
    // weft::Error when not idle.
    void set_mode(bool compliance);
    bool compliance_mode() const { return config_.compliance_mode; }
    // A shaped wire holds frames longer than the config assumed: the timer must
    // outlast a window's serialisation plus the round trip, or every frame is
    // sent twice.
    void set_retransmit_timeout(uint64_t timeout) { config_.retransmit_timeout = timeout; }
    const TtLinkConfig& config() const { return config_; }

    bool retraining() const { return retraining_; }
    // Frames the peer has not acknowledged yet (compliance: not yet sent).
    size_t frames_pending() const { return outgoing_.size(); }
    // Nothing to send, nothing unacknowledged, no handshake under way.
    bool idle() const;
    const TtLinkCounters& counters() const { return counters_; }

private:
    struct OutgoingFrame {
        uint64_t dst = 0;
        const uint8_t* data = nullptr;  // the payload: borrowed, owned.data() or small
        uint32_t len = 0;
        uint8_t small[8];            // payloads of up to 8 bytes live here
        std::vector<uint8_t> owned;  // send()'s copy; empty when borrowed
        uint64_t sent_at = 0;        // last time it went on the wire: the retransmit timer's start
        bool sent_before = false;
    };

    // The unacknowledged frames, oldest first: a ring that grows, by doubling,
    // only as far as the traffic fills it (at most `window` slots), and is
    // reused after that, so a busy link never allocates to queue a frame and
    // a model of thousands of idle cables does not hold a window for each.
    class FrameQueue {
    public:
        explicit FrameQueue(size_t capacity) : capacity_(capacity) {}
        size_t size() const { return count_; }
        bool empty() const { return count_ == 0; }
        OutgoingFrame& operator[](size_t i) { return slots_[(first_ + i) % slots_.size()]; }
        OutgoingFrame& front() { return (*this)[0]; }
        OutgoingFrame& push_back();
        void pop_front(size_t n);

    private:
        std::vector<OutgoingFrame> slots_;
        size_t capacity_, first_ = 0, count_ = 0;
    };

    OutgoingFrame& queue(uint64_t dst, const uint8_t* payload, size_t len);
    bool next_compliance_frame(FrameView& out);
    void data_frame(size_t index, FrameView& out);
    void control_frame(uint16_t flags, FrameView& out);
    void take_ack(uint16_t rx_seq);
    void accept_data(const abi::TtLinkHeader& header, std::span<const uint8_t> payload);
    void take_retrain_frame(const abi::TtLinkHeader& header);
    void go_back() { next_to_send_ = 0; }
    uint16_t next_tx_seq() const { return static_cast<uint16_t>(base_seq_ + outgoing_.size()); }

    TtLinkConfig config_;
    DeliverFn deliver_;
    RetrainFn on_retrain_;
    TtLinkCounters counters_;
    uint64_t now_ = 0;

    // Sending: outgoing_[i] has tx_seq base_seq_ + i. Those before next_to_send_
    // are on the wire; Go-Back-N is rewinding next_to_send_ to 0.
    FrameQueue outgoing_;
    // Compliance mode forgets a frame once sent; its copy is parked here so the
    // view handed out stays valid until the next call.
    std::vector<uint8_t> last_sent_;
    uint8_t last_sent_small_[8];
    uint16_t base_seq_ = 0;
    size_t next_to_send_ = 0;
    uint32_t timeouts_without_progress_ = 0;

    // Receiving.
    uint16_t expected_seq_ = 0;
    bool ack_owed_ = false;  // a data frame arrived since our last frame told the peer expected_seq_

    bool held_ = false;

    // Retrain handshake.
    bool retraining_ = false;
    bool retrain_request_due_ = false;
    bool retrain_answer_due_ = false;
    uint64_t retrain_request_sent_at_ = 0;
};

// A reproducible unreliable wire: for a given seed, the same frames in give the
// same frames out. Each frame is dropped with probability drop_rate; each bit of
// a frame that survives flips independently with probability bit_error_rate.
struct WireFaults {
    double drop_rate = 0, bit_error_rate = 0;
    uint64_t seed = 1;
};

class FaultyWire {
public:
    struct Stats {
        uint64_t frames = 0, dropped = 0, corrupted = 0, bits_flipped = 0;
    };

    // Throws weft::Error when a rate is outside [0, 1].
    explicit FaultyWire(const WireFaults& faults);
    // The frame as it arrives at the far end, or nullopt if it was lost.
    std::optional<std::vector<uint8_t>> carry(std::vector<uint8_t> frame);

    // carry() in two steps, for a caller that keeps frames as views: decides a
    // frame's fate from its size alone (same random draws as carry()), and
    // for kCorrupted lists the bit positions to flip in flipped_bits().
    enum class Fate { kIntact, kDropped, kCorrupted };
    Fate judge(size_t frame_bytes);
    const std::vector<uint64_t>& flipped_bits() const { return flips_; }
    // Flips flipped_bits() in a frame judged kCorrupted.
    void corrupt(uint8_t* frame) const;

    // New rates from now on (the random stream goes on). Throws like the constructor.
    void set_rates(double drop_rate, double bit_error_rate);
    const WireFaults& faults() const { return faults_; }
    const Stats& stats() const { return stats_; }

private:
    uint64_t next_random();
    double uniform();  // in [0, 1)
    uint64_t clean_bits_before_next_error();
    bool pick_flips(uint64_t bits);  // fills flips_; false when the frame stays clean

    WireFaults faults_;
    uint64_t rng_state_;
    // Bit errors form one Bernoulli stream across frames; the gaps between them
    // are geometric, so one draw per error instead of one per bit.
    uint64_t clean_bits_left_ = 0;
    std::vector<uint64_t> flips_;  // reused: no allocation per corrupted frame once warm
    Stats stats_;
};

}  // namespace weft
