#include "devices/tt_link.h"

#include <string.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "common/error.h"

namespace weft {

// Frames are built by copying the header's bytes; the wire format is little-endian.
static_assert(std::endian::native == std::endian::little, "TT-link framing assumes a little-endian host");

namespace {

constexpr size_t kHeaderBytes = sizeof(abi::TtLinkHeader);
constexpr size_t kTrailerBytes = sizeof(abi::TtLinkTrailer);

// Serial-number arithmetic (RFC 1982) on 16-bit sequence numbers: how far `to`
// is ahead of `from`, negative when behind. Correct across the wrap as long as
// the two are less than half the sequence space apart.
int16_t seq_ahead(uint16_t from, uint16_t to) { return static_cast<int16_t>(static_cast<uint16_t>(to - from)); }

}  // namespace

// zlib's CRC-32 is Ethernet's (reflected 0x04c11db7, init and final xor all
// ones, chained by passing the previous result), so frames are unchanged.
uint32_t tt_link_crc32(const void* data, size_t len, uint32_t crc) {
    // zlib answers a null buffer with its initial value whatever `crc` is; no
    // bytes leave a chained CRC as it was.
    if (len == 0) return crc;
    return uint32_t(crc32_z(crc, static_cast<const Bytef*>(data), len));
}

void encode_frame_into(const abi::TtLinkHeader& header, const uint8_t* payload, std::vector<uint8_t>& frame) {
    frame.resize(kHeaderBytes + header.length + kTrailerBytes);
    memcpy(frame.data(), &header, kHeaderBytes);
    if (header.length) memcpy(frame.data() + kHeaderBytes, payload, header.length);
    const abi::TtLinkTrailer trailer{tt_link_crc32(frame.data(), kHeaderBytes + header.length)};
    memcpy(frame.data() + kHeaderBytes + header.length, &trailer, kTrailerBytes);
}

std::vector<uint8_t> encode_frame(const abi::TtLinkHeader& header, const uint8_t* payload) {
    std::vector<uint8_t> frame;
    encode_frame_into(header, payload, frame);
    return frame;
}

std::optional<DecodedFrame> decode_frame(const uint8_t* bytes, size_t len) {
    if (len < kHeaderBytes + kTrailerBytes) return std::nullopt;
    DecodedFrame frame{};
    memcpy(&frame.header, bytes, kHeaderBytes);
    const size_t covered = len - kTrailerBytes;
    if (covered - kHeaderBytes != frame.header.length) return std::nullopt;
    abi::TtLinkTrailer trailer;
    memcpy(&trailer, bytes + covered, kTrailerBytes);
    if (trailer.crc != tt_link_crc32(bytes, covered)) return std::nullopt;
    frame.payload = {bytes + kHeaderBytes, frame.header.length};
    return frame;
}

// ---------------------------------------------------------------------------
// TtLinkEndpoint

TtLinkEndpoint::OutgoingFrame& TtLinkEndpoint::FrameQueue::push_back() {
    if (count_ == slots_.size()) {
        if (count_ == capacity_) throw Error("TT-link frame queue is full: the caller must check can_send()");
        std::vector<OutgoingFrame> grown(std::min(capacity_, std::max<size_t>(4, 2 * slots_.size())));
        for (size_t i = 0; i < count_; ++i) {
            OutgoingFrame& from = (*this)[i];
            const bool small = from.data == from.small;  // points into the frame itself
            grown[i] = std::move(from);
            if (small) grown[i].data = grown[i].small;
        }
        slots_ = std::move(grown);
        first_ = 0;
    }
    return (*this)[count_++];
}

void TtLinkEndpoint::FrameQueue::pop_front(size_t n) {
    for (size_t i = 0; i < n; ++i) {
        OutgoingFrame& f = front();
        f.owned.clear();  // keeps its capacity for the next send()
        f.data = nullptr;
        first_ = (first_ + 1) % slots_.size();
        --count_;
    }
}

TtLinkEndpoint::TtLinkEndpoint(const TtLinkConfig& config, DeliverFn deliver, RetrainFn on_retrain)
    : config_(config),
      deliver_(std::move(deliver)),
      on_retrain_(std::move(on_retrain)),
      outgoing_(config.window == 0 || config.window > TtLinkConfig::kMaxWindow ? 1 : config.window) {
    if (config_.window == 0 || config_.window > TtLinkConfig::kMaxWindow)
        throw Error("TT-link window must be 1.." + std::to_string(TtLinkConfig::kMaxWindow) + " frames, not " +
                    std::to_string(config_.window));
    if (config_.retransmit_timeout == 0) throw Error("TT-link retransmit timeout must be positive");
    if (config_.timeouts_before_retrain == 0) throw Error("TT-link timeouts_before_retrain must be positive");
    if (!deliver_) throw Error("TT-link endpoint needs a deliver callback");
}

bool TtLinkEndpoint::can_send() const { return !held_ && outgoing_.size() < config_.window; }

void TtLinkEndpoint::set_mode(bool compliance) {
    if (!idle()) throw Error("TT-link mode change while frames are queued or unacknowledged: hold() and drain first");
    config_.compliance_mode = compliance;
    base_seq_ = 0;
    next_to_send_ = 0;
    expected_seq_ = 0;
    timeouts_without_progress_ = 0;
}

TtLinkEndpoint::OutgoingFrame& TtLinkEndpoint::queue(uint64_t dst, const uint8_t* payload, size_t len) {
    if (!can_send()) throw Error("TT-link send with a full window: wait for can_send()");
    if (len > abi::kTtLinkMaxPayload)
        throw Error("TT-link payload of " + std::to_string(len) + " bytes exceeds the frame limit of " +
                    std::to_string(abi::kTtLinkMaxPayload));
    OutgoingFrame& f = outgoing_.push_back();
    f.dst = dst;
    f.len = static_cast<uint32_t>(len);
    f.sent_at = 0;
    f.sent_before = false;
    if (len <= sizeof f.small) {
        if (len) memcpy(f.small, payload, len);
        f.data = f.small;
    } else {
        f.data = payload;
    }
    return f;
}

void TtLinkEndpoint::send(uint64_t dst, const uint8_t* payload, size_t len) {
    OutgoingFrame& f = queue(dst, payload, len);
    if (len > sizeof f.small) {
        f.owned.assign(payload, payload + len);
        f.data = f.owned.data();
    }
}

void TtLinkEndpoint::send_borrowed(uint64_t dst, const uint8_t* payload, size_t len) { queue(dst, payload, len); }

bool TtLinkEndpoint::idle() const { return outgoing_.empty() && !ack_owed_ && !retraining_ && !retrain_answer_due_; }

std::optional<std::vector<uint8_t>> TtLinkEndpoint::next_frame() {
    FrameView v;
    if (!next_frame_view(v)) return std::nullopt;
    return encode_frame(v.header, v.payload);
}

bool TtLinkEndpoint::next_frame_view(FrameView& out) {
    if (config_.compliance_mode) return next_compliance_frame(out);
    if (retrain_answer_due_) {
        retrain_answer_due_ = false;
        control_frame(abi::kTtLinkRetrain | abi::kTtLinkAck, out);
        return true;
    }
    if (retraining_) {
        // Data waits for the handshake; the link is not trusted until then.
        if (retrain_request_due_) {
            retrain_request_due_ = false;
            retrain_request_sent_at_ = now_;
            control_frame(abi::kTtLinkRetrain, out);
            return true;
        }
    } else if (next_to_send_ < outgoing_.size()) {
        data_frame(next_to_send_++, out);
        return true;
    }
    if (ack_owed_) {
        ++counters_.acks_sent;
        control_frame(abi::kTtLinkAck, out);
        return true;
    }
    return false;
}

bool TtLinkEndpoint::next_ack_view(FrameView& out) {
    if (config_.compliance_mode || !ack_owed_) return false;
    ++counters_.acks_sent;
    control_frame(abi::kTtLinkAck, out);
    return true;
}

bool TtLinkEndpoint::next_compliance_frame(FrameView& out) {
    if (outgoing_.empty()) return false;
    data_frame(0, out);
    // Sent once, never again: park the payload so the view outlives the slot.
    OutgoingFrame& f = outgoing_.front();
    if (f.data == f.small) {
        memcpy(last_sent_small_, f.small, sizeof f.small);
        out.payload = last_sent_small_;
    } else if (!f.owned.empty()) {
        last_sent_.swap(f.owned);
    }
    outgoing_.pop_front(1);
    ++base_seq_;
    ++counters_.frames_done;
    return true;
}

void TtLinkEndpoint::data_frame(size_t index, FrameView& out) {
    OutgoingFrame& f = outgoing_[index];
    if (f.sent_before) ++counters_.retransmits, counters_.bytes_resent += f.len;
    f.sent_before = true;
    f.sent_at = now_;
    ++counters_.frames_sent;
    counters_.bytes_sent += f.len;
    ack_owed_ = false;  // the ack rides along
    out.header = {f.dst, static_cast<uint16_t>(base_seq_ + index), expected_seq_, static_cast<uint16_t>(f.len),
                  abi::kTtLinkData};
    out.payload = f.data;
}

void TtLinkEndpoint::control_frame(uint16_t flags, FrameView& out) {
    ack_owed_ = false;  // every frame carries rx_seq
    // tx_seq is informational here: where our sending side stands.
    const uint16_t tx_seq = flags & abi::kTtLinkRetrain ? base_seq_ : next_tx_seq();
    out.header = {0, tx_seq, expected_seq_, 0, flags};
    out.payload = nullptr;
}

void TtLinkEndpoint::receive(const uint8_t* bytes, size_t len) {
    const std::optional<DecodedFrame> frame = decode_frame(bytes, len);
    // Nothing in a bad frame can be trusted, not even whether it was data:
    // no ack for it; the sender's timer recovers it.
    if (!frame) return receive_bad();
    receive_good(frame->header, frame->payload.data());
}

void TtLinkEndpoint::receive_good(const abi::TtLinkHeader& h, const uint8_t* payload) {
    if (config_.compliance_mode) {
        if (h.flags & abi::kTtLinkData) {
            ++counters_.frames_received;
            deliver_(h.dst, payload, h.length);
        }
        return;
    }
    if (h.flags & abi::kTtLinkRetrain) return take_retrain_frame(h);
    take_ack(h.rx_seq);
    if (h.flags & abi::kTtLinkData) accept_data(h, {payload, h.length});
}

void TtLinkEndpoint::take_ack(uint16_t rx_seq) {
    const uint16_t newly_acked = static_cast<uint16_t>(rx_seq - base_seq_);
    // 0: a repeat of the last ack. More than we have outstanding: a stale ack
    // that lies behind base_seq_ modulo 2^16 (the window is under half the
    // sequence space, so it can't be confused with a new one).
    if (newly_acked == 0 || newly_acked > outgoing_.size()) return;
    outgoing_.pop_front(newly_acked);
    counters_.frames_done += newly_acked;
    base_seq_ = rx_seq;
    next_to_send_ = next_to_send_ > newly_acked ? next_to_send_ - newly_acked : 0;
    timeouts_without_progress_ = 0;
}

void TtLinkEndpoint::accept_data(const abi::TtLinkHeader& header, std::span<const uint8_t> payload) {
    ack_owed_ = true;  // accepted or not, the sender needs to hear where we stand
    const int16_t ahead = seq_ahead(expected_seq_, header.tx_seq);
    if (ahead < 0) {
        ++counters_.duplicates;
        return;
    }
    if (ahead > 0) {
        ++counters_.out_of_order;
        return;
    }
    ++expected_seq_;
    ++counters_.frames_received;
    deliver_(header.dst, payload.data(), payload.size());
}

void TtLinkEndpoint::take_retrain_frame(const abi::TtLinkHeader& header) {
    take_ack(header.rx_seq);  // the peer's receiver says exactly what it holds
    if (!(header.flags & abi::kTtLinkAck)) {
        retrain_answer_due_ = true;
        go_back();  // resend from where the peer stands now, not after our own timer
    }
    // Request or answer, we now know the peer's state: our handshake is done.
    // (retrain() already rewound the window, and held data back since.)
    retraining_ = false;
    retrain_request_due_ = false;
}

void TtLinkEndpoint::tick(uint64_t now) {
    now_ = now;
    if (config_.compliance_mode) return;
    if (retraining_) {
        const bool request_on_wire = !retrain_request_due_;
        if (request_on_wire && now_ - retrain_request_sent_at_ >= config_.retransmit_timeout) {
            ++counters_.timeouts;
            retrain_request_due_ = true;
        }
        return;
    }
    const bool timer_running = next_to_send_ > 0;  // the oldest unacked frame is on the wire
    if (!timer_running || now_ - outgoing_.front().sent_at < config_.retransmit_timeout) return;
    ++counters_.timeouts;
    if (++timeouts_without_progress_ >= config_.timeouts_before_retrain) retrain();
    else
        go_back();
}

void TtLinkEndpoint::retrain() {
    if (config_.compliance_mode || retraining_) return;
    ++counters_.retrains;
    retraining_ = true;
    retrain_request_due_ = true;
    timeouts_without_progress_ = 0;
    go_back();
    if (on_retrain_) on_retrain_();
}

// ---------------------------------------------------------------------------
// FaultyWire

FaultyWire::FaultyWire(const WireFaults& faults) : faults_(faults), rng_state_(faults.seed) {
    const auto is_rate = [](double r) { return r >= 0 && r <= 1; };  // also refuses NaN
    if (!is_rate(faults_.drop_rate) || !is_rate(faults_.bit_error_rate))
        throw Error("wire fault rates must be within [0, 1]");
    if (faults_.bit_error_rate > 0) clean_bits_left_ = clean_bits_before_next_error();
}

// splitmix64: small, fast, and the same sequence on every platform, which the
// standard library's distributions don't promise.
uint64_t FaultyWire::next_random() {
    uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double FaultyWire::uniform() { return static_cast<double>(next_random() >> 11) * 0x1.0p-53; }

uint64_t FaultyWire::clean_bits_before_next_error() {
    const double p = faults_.bit_error_rate;
    if (p >= 1) return 0;
    // Inverse CDF of the geometric distribution; 1 - uniform() is in (0, 1].
    const double gap = std::floor(std::log(1 - uniform()) / std::log1p(-p));
    // Capped far beyond any wire's lifetime, which keeps the cast defined and
    // the caller's position arithmetic from overflowing.
    constexpr uint64_t kNever = uint64_t(1) << 62;
    return gap < static_cast<double>(kNever) ? static_cast<uint64_t>(gap) : kNever;
}

bool FaultyWire::pick_flips(uint64_t bits) {
    flips_.clear();
    if (clean_bits_left_ >= bits) {
        clean_bits_left_ -= bits;
        return false;
    }
    uint64_t pos = clean_bits_left_;
    while (pos < bits) {
        flips_.push_back(pos);
        ++stats_.bits_flipped;
        pos += 1 + clean_bits_before_next_error();  // cannot overflow: the gap is capped at 2^62
    }
    clean_bits_left_ = pos - bits;
    ++stats_.corrupted;
    return true;
}

FaultyWire::Fate FaultyWire::judge(size_t frame_bytes) {
    ++stats_.frames;
    if (faults_.drop_rate > 0 && uniform() < faults_.drop_rate) {
        ++stats_.dropped;
        return Fate::kDropped;
    }
    if (faults_.bit_error_rate > 0 && pick_flips(uint64_t(frame_bytes) * 8)) return Fate::kCorrupted;
    return Fate::kIntact;
}

void FaultyWire::corrupt(uint8_t* frame) const {
    for (uint64_t pos : flips_) frame[pos / 8] ^= static_cast<uint8_t>(1u << (pos % 8));
}

std::optional<std::vector<uint8_t>> FaultyWire::carry(std::vector<uint8_t> frame) {
    switch (judge(frame.size())) {
        case Fate::kDropped: return std::nullopt;
        case Fate::kCorrupted: corrupt(frame.data()); break;
        case Fate::kIntact: break;
    }
    return frame;
}

void FaultyWire::set_rates(double drop_rate, double bit_error_rate) {
    const auto is_rate = [](double r) { return r >= 0 && r <= 1; };  // also refuses NaN
    if (!is_rate(drop_rate) || !is_rate(bit_error_rate)) throw Error("wire fault rates must be within [0, 1]");
    faults_.drop_rate = drop_rate;
    faults_.bit_error_rate = bit_error_rate;
    clean_bits_left_ = bit_error_rate > 0 ? clean_bits_before_next_error() : 0;
}

}  // namespace weft
