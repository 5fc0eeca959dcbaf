// TT-link's Go-Back-N engine: two endpoints joined by a wire the test controls
// step by step (what it drops, corrupts, duplicates or reorders, and when).
// Every case checks the exact payload stream each side delivers, then counters.
#include "devices/tt_link.h"

#include <string.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "common/error.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

using Bytes = std::vector<uint8_t>;

struct Message {
    uint64_t dst;
    Bytes payload;
};

// Message i of one direction. Its size and bytes vary with i (the first eight
// bytes are i itself), so a lost, repeated or swapped payload can't pass.
Message message(int direction, uint64_t i) {
    Message m{0x1'0000'0000ull * (direction + 1) + i * 64, Bytes(8 + (i * 7 + direction) % 41)};
    memcpy(m.payload.data(), &i, 8);
    for (size_t k = 8; k < m.payload.size(); ++k) m.payload[k] = static_cast<uint8_t>(i * 31 + k * 7 + direction);
    return m;
}

uint64_t payload_bytes(int direction, uint64_t count) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < count; ++i) sum += message(direction, i).payload.size();
    return sum;
}

// The upper layer at the receiving end of one direction: each delivery must be
// the next message of that direction.
struct StreamChecker {
    int direction;
    uint64_t delivered = 0, wrong = 0;

    void check(uint64_t dst, const uint8_t* payload, size_t len) {
        const Message want = message(direction, delivered++);
        if (dst != want.dst || len != want.payload.size() || memcmp(payload, want.payload.data(), len) != 0) ++wrong;
    }
};

TtLinkConfig arq_config() {
    TtLinkConfig c;
    c.window = 32;
    c.retransmit_timeout = 8;  // steps; a round trip takes one or two
    c.timeouts_before_retrain = 8;
    return c;
}

std::optional<abi::TtLinkHeader> header_of(const Bytes& frame) {
    const auto decoded = decode_frame(frame.data(), frame.size());
    if (!decoded) return std::nullopt;
    return decoded->header;
}

bool is_data(const Bytes& frame) {
    const auto h = header_of(frame);
    return h && (h->flags & abi::kTtLinkData);
}

// Endpoint A (side 0) and B (side 1) joined by wire 0 (A to B) and wire 1 (B to
// A). Each step: both upper layers send what their windows allow, both MACs
// put out every frame they have, the wire does what the test says (optional
// FaultyWire, then the meddler, which may edit, hold back or reorder the step's
// frames), everything left arrives, and the clock advances by one.
class Link {
public:
    using Meddler = std::function<void(int direction, std::deque<Bytes>& wire)>;

    Link(const TtLinkConfig& config, uint64_t a_to_b, uint64_t b_to_a)
        : total_{a_to_b, b_to_a},
          end_{TtLinkEndpoint(config, deliver_into(1), count_retrain(0)),
               TtLinkEndpoint(config, deliver_into(0), count_retrain(1))} {}
    Link(const Link&) = delete;  // the endpoints' callbacks point into this object
    Link& operator=(const Link&) = delete;

    TtLinkEndpoint& a() { return end_[0]; }
    TtLinkEndpoint& b() { return end_[1]; }
    const StreamChecker& received(int direction) const { return checker_[direction]; }
    uint64_t now() const { return now_; }
    uint64_t retrain_callbacks(int side) const { return retrain_callbacks_[side]; }
    uint64_t frames_on_wire(int direction) const { return frames_on_wire_[direction]; }

    Meddler meddle;
    std::optional<FaultyWire> faults[2];

    void step() {
        for (int side = 0; side < 2; ++side) feed(side);
        for (int side = 0; side < 2; ++side) transmit(side);
        for (int direction = 0; direction < 2; ++direction) {
            std::deque<Bytes>& wire = wire_[direction];
            if (meddle) meddle(direction, wire);
            for (; !wire.empty(); wire.pop_front())
                end_[1 - direction].receive(wire.front().data(), wire.front().size());
        }
        ++now_;
        for (TtLinkEndpoint& e : end_) e.tick(now_);
    }

    bool done() const {
        return checker_[0].delivered == total_[0] && checker_[1].delivered == total_[1] && end_[0].idle() &&
               end_[1].idle();
    }

    bool run(uint64_t max_steps) {
        for (uint64_t i = 0; i < max_steps && !done(); ++i) step();
        return done();
    }

    // Everything arrived exactly once, in order, byte for byte.
    void assert_all_delivered() const {
        for (int direction = 0; direction < 2; ++direction) {
            assert_int_equal(checker_[direction].delivered, total_[direction]);
            assert_int_equal(checker_[direction].wrong, 0);
        }
        assert_int_equal(end_[1].counters().frames_received, total_[0]);
        assert_int_equal(end_[0].counters().frames_received, total_[1]);
    }

private:
    TtLinkEndpoint::DeliverFn deliver_into(int direction) {
        return
            [this, direction](uint64_t dst, const uint8_t* p, size_t len) { checker_[direction].check(dst, p, len); };
    }
    TtLinkEndpoint::RetrainFn count_retrain(int side) {
        return [this, side] { ++retrain_callbacks_[side]; };
    }

    void feed(int side) {
        while (sent_[side] < total_[side] && end_[side].can_send()) {
            const Message m = message(side, sent_[side]++);
            end_[side].send(m.dst, m.payload.data(), m.payload.size());
        }
    }

    void transmit(int side) {
        while (std::optional<Bytes> frame = end_[side].next_frame()) {
            ++frames_on_wire_[side];
            if (faults[side]) frame = faults[side]->carry(std::move(*frame));
            if (frame) wire_[side].push_back(std::move(*frame));
        }
    }

    uint64_t total_[2];
    uint64_t sent_[2] = {};
    StreamChecker checker_[2] = {{0}, {1}};
    uint64_t retrain_callbacks_[2] = {};
    uint64_t frames_on_wire_[2] = {};
    TtLinkEndpoint end_[2];
    std::deque<Bytes> wire_[2];
    uint64_t now_ = 0;
};

// Holds back a direction's frames for `steps` steps, then lets the batch
// arrive newest first, so every ack but the first of a batch arrives stale.
class ReverseBatches {
public:
    explicit ReverseBatches(uint64_t steps) : steps_(steps) {}

    void operator()(std::deque<Bytes>& wire, uint64_t now) {
        for (Bytes& f : wire) held_.push_back(std::move(f));
        wire.clear();
        if (now % steps_ != steps_ - 1) return;
        for (auto it = held_.rbegin(); it != held_.rend(); ++it) {
            const auto h = header_of(*it);
            if (h && newest_ && static_cast<int16_t>(h->rx_seq - *newest_) < 0) ++stale_;
            if (h && (!newest_ || static_cast<int16_t>(h->rx_seq - *newest_) > 0)) newest_ = h->rx_seq;
            wire.push_back(std::move(*it));
        }
        held_.clear();
    }
    uint64_t stale() const { return stale_; }  // frames that arrived with an older ack than one already seen

private:
    uint64_t steps_;
    std::deque<Bytes> held_;
    std::optional<uint16_t> newest_;
    uint64_t stale_ = 0;
};

// A slow wire: at most `per_step` frames get through per step, the rest queue
// in order. Spreads a window's frames over several steps, so acks come in a
// steady stream instead of one per window.
class Pace {
public:
    explicit Pace(size_t per_step) : per_step_(per_step) {}

    void operator()(std::deque<Bytes>& wire) {
        for (Bytes& f : wire) queue_.push_back(std::move(f));
        wire.clear();
        for (size_t i = 0; i < per_step_ && !queue_.empty(); ++i) {
            wire.push_back(std::move(queue_.front()));
            queue_.pop_front();
        }
    }

private:
    size_t per_step_;
    std::deque<Bytes> queue_;
};

void assert_no_faults_seen(const TtLinkCounters& c) {
    assert_int_equal(c.retransmits, 0);
    assert_int_equal(c.timeouts, 0);
    assert_int_equal(c.crc_errors, 0);
    assert_int_equal(c.out_of_order, 0);
    assert_int_equal(c.retrains, 0);
}

// ---------------------------------------------------------------------------

void test_crc32_check_value(void**) {
    const char* check = "123456789";
    assert_int_equal(tt_link_crc32(check, 9), 0xCBF43926u);
    assert_int_equal(tt_link_crc32(check + 4, 5, tt_link_crc32(check, 4)), 0xCBF43926u);  // chained
    assert_int_equal(tt_link_crc32(nullptr, 0), 0);
    assert_int_equal(tt_link_crc32(nullptr, 0, 0x12345678u), 0x12345678u);  // no bytes: a chain goes on unchanged
}

// Ethernet's FCS from its definition, one bit at a time, so frames keep the
// CRC they had whatever computes it.
uint32_t bitwise_crc32(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320u : 0);
    }
    return ~crc;
}

void test_crc32_matches_definition(void**) {
    Bytes data(300);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 151 + 7);
    for (size_t n = 0; n <= data.size(); n += 13) {
        assert_int_equal(tt_link_crc32(data.data(), n), bitwise_crc32(data.data(), n));
        const size_t half = n / 2;
        assert_int_equal(tt_link_crc32(data.data() + half, n - half, tt_link_crc32(data.data(), half)),
                         bitwise_crc32(data.data(), n));
    }
}

void test_frame_round_trip_and_rejects(void**) {
    const Message m = message(0, 5);
    const abi::TtLinkHeader h{m.dst, 65535, 7, static_cast<uint16_t>(m.payload.size()), abi::kTtLinkData};
    const Bytes frame = encode_frame(h, m.payload.data());
    assert_int_equal(frame.size(), 16 + m.payload.size() + 4);

    const auto decoded = decode_frame(frame.data(), frame.size());
    assert_true(decoded.has_value());
    assert_int_equal(decoded->header.dst, m.dst);
    assert_int_equal(decoded->header.tx_seq, 65535);
    assert_int_equal(decoded->header.rx_seq, 7);
    assert_int_equal(decoded->header.flags, abi::kTtLinkData);
    assert_int_equal(decoded->payload.size(), m.payload.size());
    assert_memory_equal(decoded->payload.data(), m.payload.data(), m.payload.size());

    // Any single flipped bit, anywhere (header, payload or trailer), is caught.
    for (size_t bit = 0; bit < frame.size() * 8; ++bit) {
        Bytes bad = frame;
        bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        assert_false(decode_frame(bad.data(), bad.size()).has_value());
    }
    assert_false(decode_frame(frame.data(), frame.size() - 1).has_value());  // truncated
    assert_false(decode_frame(frame.data(), 19).has_value());                // shorter than header + trailer
    Bytes longer = frame;
    longer.push_back(0);
    assert_false(decode_frame(longer.data(), longer.size()).has_value());

    const Bytes ack = encode_frame({0, 3, 4, 0, abi::kTtLinkAck}, nullptr);
    assert_int_equal(ack.size(), 20);
    assert_true(decode_frame(ack.data(), ack.size()).has_value());
}

void test_in_order_delivery(void**) {
    Link link(arq_config(), 500, 300);
    assert_true(link.run(1000));
    link.assert_all_delivered();

    const TtLinkCounters& a = link.a().counters();
    const TtLinkCounters& b = link.b().counters();
    assert_no_faults_seen(a);
    assert_no_faults_seen(b);
    assert_int_equal(a.duplicates + b.duplicates, 0);
    assert_int_equal(a.frames_sent, 500);
    assert_int_equal(b.frames_sent, 300);
    assert_int_equal(a.bytes_sent, payload_bytes(0, 500));
    assert_int_equal(b.bytes_sent, payload_bytes(1, 300));
    // Every frame on the wire is a data frame or an ack-only frame; acks ride
    // on data while B has some, so B sends fewer ack-only frames than A sent data.
    assert_int_equal(link.frames_on_wire(0), a.frames_sent + a.acks_sent);
    assert_int_equal(link.frames_on_wire(1), b.frames_sent + b.acks_sent);
    assert_true(b.acks_sent > 0 && b.acks_sent < 500);
}

void test_frame_loss_both_directions(void**) {
    Link link(arq_config(), 3000, 3000);
    link.faults[0].emplace(WireFaults{0.10, 0, 11});
    link.faults[1].emplace(WireFaults{0.10, 0, 12});
    assert_true(link.run(50000));
    link.assert_all_delivered();

    for (int side = 0; side < 2; ++side) {
        const TtLinkCounters& c = side ? link.b().counters() : link.a().counters();
        assert_true(link.faults[side]->stats().dropped > 0);
        assert_true(c.retransmits > 0);
        assert_true(c.timeouts > 0);
        assert_int_equal(c.frames_sent, 3000 + c.retransmits);
        assert_true(c.duplicates + c.out_of_order > 0);  // the receiver threw away what Go-Back-N resent
        assert_int_equal(c.crc_errors, 0);
        assert_int_equal(c.retrains, 0);
    }
}

void test_duplicated_frames(void**) {
    Link link(arq_config(), 1000, 1000);
    uint64_t data_copies[2] = {}, seen[2] = {};
    link.meddle = [&](int direction, std::deque<Bytes>& wire) {
        std::deque<Bytes> out;
        for (Bytes& f : wire) {
            const bool copy = seen[direction]++ % 3 == 0;  // data and ack-only frames alike
            if (copy && is_data(f)) ++data_copies[direction];
            out.push_back(f);
            if (copy) out.push_back(std::move(f));
        }
        wire = std::move(out);
    };
    assert_true(link.run(10000));
    link.assert_all_delivered();

    // Each copy of a data frame arrives right after its accepted original; an
    // extra ack changes nothing. Nothing is lost, so nothing is resent.
    assert_true(data_copies[0] > 0 && data_copies[1] > 0);
    assert_int_equal(link.b().counters().duplicates, data_copies[0]);
    assert_int_equal(link.a().counters().duplicates, data_copies[1]);
    assert_no_faults_seen(link.a().counters());
    assert_no_faults_seen(link.b().counters());
}

void test_stale_acks_ignored(void**) {
    TtLinkEndpoint a(arq_config(), [](uint64_t, const uint8_t*, size_t) {});
    const Message m = message(0, 0);
    for (int i = 0; i < 10; ++i) a.send(m.dst, m.payload.data(), m.payload.size());
    int frames = 0;
    while (a.next_frame()) ++frames;
    assert_int_equal(frames, 10);

    const auto ack = [&](uint16_t rx_seq) {
        const Bytes f = encode_frame({0, 0, rx_seq, 0, abi::kTtLinkAck}, nullptr);
        a.receive(f.data(), f.size());
        return a.frames_pending();
    };
    assert_int_equal(ack(5), 5);      // frees 0..4
    assert_int_equal(ack(3), 5);      // stale
    assert_int_equal(ack(5), 5);      // repeated
    assert_int_equal(ack(0), 5);      // stale, from the start
    assert_int_equal(ack(65535), 5);  // "behind" 0 modulo 2^16: stale
    assert_int_equal(ack(11), 5);     // beyond anything sent: ignored
    assert_int_equal(ack(10), 0);
    assert_false(a.next_frame().has_value());  // an ack is not acknowledged
    a.tick(1000);
    assert_int_equal(a.counters().timeouts, 0);
    assert_int_equal(a.counters().retransmits, 0);
    assert_true(a.idle());
}

void test_receiver_across_wrap(void**) {
    uint64_t delivered = 0;
    TtLinkEndpoint b(arq_config(), [&](uint64_t dst, const uint8_t*, size_t) { delivered += dst == 7; });
    const auto data = [&](uint16_t tx_seq) {
        const uint8_t byte = 0;
        const Bytes f = encode_frame({7, tx_seq, 0, 1, abi::kTtLinkData}, &byte);
        b.receive(f.data(), f.size());
    };
    for (uint32_t seq = 0; seq <= 65535; ++seq) data(static_cast<uint16_t>(seq));
    data(0);  // the 65537th frame
    assert_int_equal(delivered, 65537);

    data(65535);  // just behind the wrap: a duplicate
    data(65000);
    assert_int_equal(b.counters().duplicates, 2);
    data(3);  // ahead of the expected 1
    assert_int_equal(b.counters().out_of_order, 1);
    assert_int_equal(delivered, 65537);

    const std::optional<Bytes> ack = b.next_frame();
    assert_true(ack.has_value());
    assert_int_equal(header_of(*ack)->flags, abi::kTtLinkAck);
    assert_int_equal(header_of(*ack)->rx_seq, 1);  // cumulative, wrapped
    assert_int_equal(b.counters().acks_sent, 1);
}

void test_reordered_acks(void**) {
    TtLinkConfig config = arq_config();
    config.retransmit_timeout = 32;  // a paced window plus the held-back acks stay well under it
    Link link(config, 2000, 0);
    Pace pace(4);
    ReverseBatches reverse(4);
    link.meddle = [&](int direction, std::deque<Bytes>& wire) {
        if (direction == 0) pace(wire);
        if (direction == 1) reverse(wire, link.now());
    };
    assert_true(link.run(10000));
    link.assert_all_delivered();

    assert_true(reverse.stale() > 100);
    assert_no_faults_seen(link.a().counters());
    assert_int_equal(link.b().counters().duplicates, 0);
    assert_int_equal(link.a().counters().frames_sent, 2000);
}

void test_sequence_wrap(void**) {
    constexpr uint64_t kMessages = 70000;
    TtLinkConfig config = arq_config();
    config.retransmit_timeout = 32;
    Link link(config, kMessages, 0);
    Pace pace(4);
    // Around the wrap (last 36 and first 41 sequence numbers), drop every 9th
    // data frame and every 5th ack-only frame, retransmissions included; and
    // let acks arrive in reversed batches throughout.
    const auto near_wrap = [](uint16_t seq) { return seq >= 65500 || seq <= 40; };
    bool wrapping = false;  // sequence numbers have come close to the wrap
    uint64_t data_seen = 0, acks_seen = 0, dropped_before = 0, dropped_after = 0, acks_dropped = 0;
    ReverseBatches reverse(4);
    link.meddle = [&](int direction, std::deque<Bytes>& wire) {
        std::erase_if(wire, [&](const Bytes& f) {
            const abi::TtLinkHeader h = *header_of(f);
            if (direction == 0 && (h.flags & abi::kTtLinkData)) {
                if (h.tx_seq >= 65000) wrapping = true;
                if (!wrapping || !near_wrap(h.tx_seq) || ++data_seen % 9) return false;
                ++(h.tx_seq >= 65500 ? dropped_before : dropped_after);
                return true;
            }
            if (direction == 1 && wrapping && near_wrap(h.rx_seq) && ++acks_seen % 5 == 0) {
                ++acks_dropped;
                return true;
            }
            return false;
        });
        if (direction == 0) pace(wire);
        if (direction == 1) reverse(wire, link.now());
    };
    assert_true(link.run(100000));
    link.assert_all_delivered();

    const TtLinkCounters& a = link.a().counters();
    const TtLinkCounters& b = link.b().counters();
    assert_true(dropped_before > 0 && dropped_after > 0 && acks_dropped > 0);
    assert_true(reverse.stale() > 1000);
    assert_true(a.retransmits > 0 && a.timeouts > 0);
    assert_int_equal(a.frames_sent, kMessages + a.retransmits);
    assert_true(b.out_of_order > 0);
    assert_int_equal(a.retrains + b.retrains, 0);
}

void test_bit_errors_recovered(void**) {
    Link link(arq_config(), 3000, 3000);
    link.faults[0].emplace(WireFaults{0, 2e-4, 21});
    link.faults[1].emplace(WireFaults{0, 2e-4, 22});
    assert_true(link.run(50000));
    link.assert_all_delivered();

    // CRC-32 catches every corrupted frame, each counted where it arrived.
    for (int side = 0; side < 2; ++side) {
        const TtLinkCounters& sender = side ? link.b().counters() : link.a().counters();
        const TtLinkCounters& receiver = side ? link.a().counters() : link.b().counters();
        const FaultyWire::Stats& wire = link.faults[side]->stats();
        assert_true(wire.corrupted > 0);
        assert_int_equal(wire.dropped, 0);
        assert_int_equal(receiver.crc_errors, wire.corrupted);
        assert_true(sender.retransmits > 0);
        assert_int_equal(sender.frames_sent, 3000 + sender.retransmits);
        assert_int_equal(sender.retrains, 0);
    }
}

void test_retrain_after_dead_wire(void**) {
    Link link(arq_config(), 5000, 5000);
    // B to A dies first (acks lost while A's data still arrives), then both
    // directions, then the wire recovers.
    link.meddle = [&](int direction, std::deque<Bytes>& wire) {
        const uint64_t dies = direction == 1 ? 100 : 250;
        if (link.now() >= dies && link.now() < 400) wire.clear();
    };
    while (link.now() < 400) link.step();
    assert_true(link.a().retraining());
    assert_true(link.received(0).delivered < 5000);

    assert_true(link.run(50000));
    link.assert_all_delivered();
    for (int side = 0; side < 2; ++side) {
        const TtLinkCounters& c = side ? link.b().counters() : link.a().counters();
        assert_true(c.retrains >= 1);
        assert_int_equal(link.retrain_callbacks(side), c.retrains);
        assert_true(c.timeouts >= arq_config().timeouts_before_retrain);
        assert_int_equal(c.frames_sent, 5000 + c.retransmits);
    }
    assert_false(link.a().retraining() || link.b().retraining());
    // A resent data B had already delivered; B threw it away, never delivered it twice.
    assert_true(link.b().counters().duplicates > 0);
}

// The retrain threshold exactly: timeouts_before_retrain consecutive timeouts
// with no ack making progress, not one fewer; an ack that frees a frame starts
// the count again; the handshake's answer ends it.
void test_retrain_after_exactly_n_timeouts(void**) {
    TtLinkConfig config = arq_config();
    config.retransmit_timeout = 10;
    config.timeouts_before_retrain = 4;
    int retrain_callbacks = 0;
    TtLinkEndpoint a(
        config, [](uint64_t, const uint8_t*, size_t) {}, [&] { ++retrain_callbacks; });
    const Message m = message(0, 0);
    for (int i = 0; i < 3; ++i) a.send(m.dst, m.payload.data(), m.payload.size());
    uint64_t now = 0;
    // One retransmit period with nothing acknowledged: the frames on the wire
    // at its end (a timeout resends the whole window; a retrain sends a request).
    const auto dead_period = [&] {
        std::vector<abi::TtLinkHeader> out;
        while (std::optional<Bytes> f = a.next_frame()) out.push_back(*header_of(*f));
        a.tick(now += config.retransmit_timeout);
        return out;
    };
    const auto ack = [&](uint16_t rx_seq, uint16_t flags = abi::kTtLinkAck) {
        const Bytes f = encode_frame({0, 0, rx_seq, 0, flags}, nullptr);
        a.receive(f.data(), f.size());
    };

    assert_int_equal(dead_period().size(), 3);  // first transmission
    for (int timeout = 1; timeout <= 3; ++timeout) {
        assert_int_equal(a.counters().timeouts, timeout);
        assert_false(a.retraining());
        const auto resent = dead_period();  // Go-Back-N: the whole window again
        assert_int_equal(resent.size(), 3);
        assert_int_equal(resent[0].tx_seq, 0);
        assert_int_equal(resent[0].flags, abi::kTtLinkData);
    }
    assert_int_equal(a.counters().timeouts, 4);  // the 4th, with no progress: retrain
    assert_true(a.retraining());
    assert_int_equal(a.counters().retrains, 1);
    assert_int_equal(retrain_callbacks, 1);
    assert_int_equal(a.counters().retransmits, 9);
    // While retraining, only requests go out (one per period), never data.
    for (int i = 0; i < 3; ++i) {
        const auto out = dead_period();
        assert_int_equal(out.size(), 1);
        assert_int_equal(out[0].flags, abi::kTtLinkRetrain);
    }
    assert_int_equal(a.counters().retrains, 1);  // one handshake, however long it takes

    // The answer says the peer holds frame 0: frame 0 is done, 1 and 2 go again.
    ack(1, abi::kTtLinkRetrain | abi::kTtLinkAck);
    assert_false(a.retraining());
    assert_int_equal(a.frames_pending(), 2);
    assert_int_equal(a.counters().frames_done, 1);

    // Progress resets the count: 3 timeouts, an ack freeing a frame, 3 more:
    // six in all but never four in a row, so no second retrain.
    for (int i = 0; i < 3; ++i) dead_period();           // each sends 1 and 2, and times out
    assert_int_equal(a.counters().timeouts, 4 + 3 + 3);  // data, unanswered requests, data again
    assert_false(a.retraining());
    ack(2);
    for (int i = 0; i < 3; ++i) dead_period();
    assert_false(a.retraining());
    assert_int_equal(a.counters().retrains, 1);
    dead_period();  // the 4th in a row since the ack
    assert_true(a.retraining());
    assert_int_equal(a.counters().retrains, 2);
    assert_int_equal(retrain_callbacks, 2);
    ack(3, abi::kTtLinkRetrain | abi::kTtLinkAck);
    assert_true(a.idle());
    assert_int_equal(a.counters().frames_done, 3);
}

void test_explicit_retrain(void**) {
    // What the bridge does when it brings a link back up: retrain both ends
    // at once, here with A's last frames lost before their timer could fire.
    Link link(arq_config(), 1000, 1000);
    link.meddle = [&](int direction, std::deque<Bytes>& wire) {
        if (direction == 0 && link.now() >= 18) wire.clear();
    };
    while (link.now() < 20) link.step();
    link.meddle = nullptr;
    link.a().retrain();
    link.b().retrain();
    assert_true(link.a().retraining() && link.b().retraining());
    assert_true(link.run(10000));
    link.assert_all_delivered();
    for (int side = 0; side < 2; ++side) {
        const TtLinkCounters& c = side ? link.b().counters() : link.a().counters();
        assert_int_equal(c.retrains, 1);
        assert_int_equal(link.retrain_callbacks(side), 1);
        assert_int_equal(c.timeouts, 0);
        assert_int_equal(c.frames_sent, 1000 + c.retransmits);
    }
    assert_true(link.a().counters().retransmits > 0);  // the handshake, not a timer, resent them
}

void test_compliance_mode(void**) {
    TtLinkConfig config = arq_config();
    config.compliance_mode = true;
    std::vector<Message> got;
    TtLinkEndpoint a(config, [](uint64_t, const uint8_t*, size_t) {});
    TtLinkEndpoint b(config, [&](uint64_t dst, const uint8_t* p, size_t len) {
        got.push_back({dst, Bytes(p, p + len)});
    });

    std::vector<uint64_t> expected;
    for (uint64_t i = 0; i < 100; ++i) {
        const Message m = message(0, i);
        a.send(m.dst, m.payload.data(), m.payload.size());
        std::optional<Bytes> frame = a.next_frame();
        assert_true(frame.has_value());
        assert_false(a.next_frame().has_value());
        if (i % 10 == 3) continue;              // lost on the wire
        if (i % 10 == 7) (*frame)[20] ^= 0x10;  // a payload bit flipped
        b.receive(frame->data(), frame->size());
        assert_false(b.next_frame().has_value());  // compliance mode never acks
        if (i % 10 != 7) expected.push_back(i);
        a.tick(i * 1000);
    }
    a.tick(1'000'000);
    assert_false(a.next_frame().has_value());  // nor retransmits

    assert_int_equal(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
        const Message want = message(0, expected[k]);
        assert_int_equal(got[k].dst, want.dst);
        assert_true(got[k].payload == want.payload);
    }
    assert_int_equal(a.counters().frames_sent, 100);
    assert_int_equal(a.counters().retransmits, 0);
    assert_int_equal(a.counters().timeouts, 0);
    assert_int_equal(b.counters().frames_received, 80);
    assert_int_equal(b.counters().crc_errors, 10);
    assert_int_equal(b.counters().acks_sent, 0);
    assert_true(a.idle() && b.idle());

    // The window still bounds what may queue for the wire.
    for (int i = 0; i < config.window; ++i) a.send(0, nullptr, 0);
    assert_false(a.can_send());
    assert_true(a.next_frame().has_value());
    assert_true(a.can_send());
}

// A 64-byte frame whose contents vary with i.
Bytes test_frame(uint64_t i) {
    Bytes f(64);
    for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<uint8_t>(i * 13 + k);
    return f;
}

void test_faulty_wire_deterministic(void**) {
    const WireFaults faults{0.05, 1e-3, 7};
    FaultyWire first(faults), second(faults), other(WireFaults{0.05, 1e-3, 8});
    bool other_differs = false;
    for (uint64_t i = 0; i < 10000; ++i) {
        const auto x = first.carry(test_frame(i));
        const auto y = second.carry(test_frame(i));
        assert_true(x == y);
        if (other.carry(test_frame(i)) != x) other_differs = true;
    }
    assert_true(other_differs);
    assert_int_equal(first.stats().dropped, second.stats().dropped);
    assert_int_equal(first.stats().bits_flipped, second.stats().bits_flipped);
}

uint64_t bits_differing(const Bytes& x, const Bytes& y) {
    uint64_t n = 0;
    for (size_t k = 0; k < x.size(); ++k) n += __builtin_popcount(x[k] ^ y[k]);
    return n;
}

void test_faulty_wire_rates(void**) {
    FaultyWire lossy(WireFaults{0.01, 0, 3});
    for (uint64_t i = 0; i < 100000; ++i) lossy.carry(test_frame(i));
    // 1000 expected, standard deviation about 31.
    assert_in_range(lossy.stats().dropped, 900, 1100);
    assert_int_equal(lossy.stats().bits_flipped, 0);

    FaultyWire noisy(WireFaults{0, 1e-3, 4});
    uint64_t flipped = 0, corrupted = 0;
    for (uint64_t i = 0; i < 20000; ++i) {
        const Bytes sent = test_frame(i);
        const Bytes got = *noisy.carry(sent);
        const uint64_t n = bits_differing(sent, got);
        flipped += n;
        corrupted += n > 0;
    }
    // 20000 frames * 512 bits * 1e-3 = 10240 flips (sd ~101); a frame survives
    // intact with probability 0.999^512 = 0.599, so about 8022 are hit (sd ~69).
    assert_int_equal(flipped, noisy.stats().bits_flipped);
    assert_int_equal(corrupted, noisy.stats().corrupted);
    assert_in_range(flipped, 9900, 10580);
    assert_in_range(corrupted, 7800, 8250);

    FaultyWire clean(WireFaults{});
    assert_true(*clean.carry(test_frame(1)) == test_frame(1));
    FaultyWire inverting(WireFaults{0, 1, 5});
    assert_int_equal(bits_differing(*inverting.carry(test_frame(2)), test_frame(2)), 512);
}

template <typename F>
bool throws_error(F&& f) {
    try {
        f();
    } catch (const Error&) {
        return true;
    }
    return false;
}

void test_misuse_is_refused(void**) {
    const auto deliver = [](uint64_t, const uint8_t*, size_t) {};
    TtLinkConfig config = arq_config();
    config.window = 0;
    assert_true(throws_error([&] { TtLinkEndpoint e(config, deliver); }));
    config.window = TtLinkConfig::kMaxWindow + 1;
    assert_true(throws_error([&] { TtLinkEndpoint e(config, deliver); }));

    config = arq_config();
    config.window = 2;
    TtLinkEndpoint e(config, deliver);
    const Bytes big(abi::kTtLinkMaxPayload + 1);
    assert_true(throws_error([&] { e.send(0, big.data(), big.size()); }));
    e.send(0, big.data(), 1);
    e.send(0, big.data(), 1);
    assert_true(throws_error([&] { e.send(0, big.data(), 1); }));  // window full

    assert_true(throws_error([] { FaultyWire w(WireFaults{1.5, 0, 1}); }));
    assert_true(throws_error([] { FaultyWire w(WireFaults{0, -0.1, 1}); }));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_check_value),
        cmocka_unit_test(test_crc32_matches_definition),
        cmocka_unit_test(test_frame_round_trip_and_rejects),
        cmocka_unit_test(test_in_order_delivery),
        cmocka_unit_test(test_frame_loss_both_directions),
        cmocka_unit_test(test_duplicated_frames),
        cmocka_unit_test(test_stale_acks_ignored),
        cmocka_unit_test(test_receiver_across_wrap),
        cmocka_unit_test(test_reordered_acks),
        cmocka_unit_test(test_sequence_wrap),
        cmocka_unit_test(test_bit_errors_recovered),
        cmocka_unit_test(test_retrain_after_dead_wire),
        cmocka_unit_test(test_retrain_after_exactly_n_timeouts),
        cmocka_unit_test(test_explicit_retrain),
        cmocka_unit_test(test_compliance_mode),
        cmocka_unit_test(test_faulty_wire_deterministic),
        cmocka_unit_test(test_faulty_wire_rates),
        cmocka_unit_test(test_misuse_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
