// The bridge's TT-link cable (two MACs and a faulty wire, frames as views):
// what the Ethernet data path relies on. Every case checks the bytes that
// landed, exactly once and in order, and the counters that say why.
#include "devices/tt_link_cable.h"

#include <string.h>

#include <string>
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

TtLinkConfig config(bool compliance = false) {
    TtLinkConfig c;
    c.compliance_mode = compliance;
    c.window = 8;
    c.retransmit_timeout = 10;
    c.timeouts_before_retrain = 4;
    return c;
}

// Sends `frames` frames of `size` bytes from end 0 (borrowed from `src`) into
// the far memory, pumping with a clock that advances by `step` per pump.
struct Rig {
    std::vector<uint8_t> src, dst;
    std::vector<uint64_t> order;  // dst offsets in delivery order
    TtLinkCable cable;
    uint64_t now = 0;

    Rig(const TtLinkConfig& c, const WireFaults& w, size_t bytes)
        : src(bytes), dst(bytes, 0), cable(c, w, [this](int receiver, uint64_t d, const uint8_t* p, size_t n) {
              assert_int_equal(receiver, 1);
              assert_true(d + n <= dst.size());
              memcpy(dst.data() + d, p, n);
              order.push_back(d);
          }) {
        for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 13 + (i >> 9));
    }

    // Returns how many pumps it took; fails after max_pumps.
    uint64_t send_all(size_t size, uint64_t max_pumps = 1000000) {
        size_t off = 0;
        uint64_t pumps = 0;
        while (off < src.size() || cable.mac(0).frames_pending()) {
            while (off < src.size() && cable.mac(0).can_send()) {
                const size_t n = std::min(size, src.size() - off);
                cable.mac(0).send_borrowed(off, src.data() + off, n);
                off += n;
            }
            cable.pump(now += 5);
            if (++pumps > max_pumps) fail_msg("not delivered after %llu pumps", (unsigned long long)max_pumps);
        }
        return pumps;
    }

    // src[0, bytes) (default: all of it) landed, frame by frame in order.
    void assert_exactly_once_in_order(size_t size, size_t bytes = SIZE_MAX) {
        bytes = std::min(bytes, src.size());
        assert_memory_equal(dst.data(), src.data(), bytes);
        assert_int_equal(order.size(), (bytes + size - 1) / size);
        for (size_t i = 0; i < order.size(); ++i) assert_int_equal(order[i], i * size);
    }
};

void test_clean_wire_delivers_in_one_pump(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 8 * 1024);
    assert_int_equal(r.send_all(1024), 1);  // a window's worth, acknowledged within the pump
    r.assert_exactly_once_in_order(1024);
    const CableDirectionCounters& c = r.cable.counters(0);
    assert_int_equal(c.frames.load(), 8);
    assert_int_equal(c.delivered.load(), 8);
    assert_int_equal(c.retransmits.load() + c.crc_errors.load() + c.dropped.load(), 0);
    assert_true(r.cable.quiet());
    assert_int_equal(static_cast<int>(r.cable.state()), static_cast<int>(CableState::kUp));
}

void test_drops_and_bit_errors_are_repaired(void**) {
    Rig r(config(), WireFaults{0.05, 1e-4, 42}, 1 << 20);
    r.send_all(2048);
    r.assert_exactly_once_in_order(2048);
    const CableDirectionCounters& c = r.cable.counters(0);
    assert_true(c.dropped.load() > 0);
    assert_true(c.crc_errors.load() > 0);  // corrupted frames went through the real CRC check
    assert_true(c.retransmits.load() > 0);
    assert_int_equal(c.delivered.load(), (1 << 20) / 2048);
}

void test_faults_set_while_running(void**) {
    Rig r(config(), WireFaults{0, 0, 3}, 256 * 1024);
    r.cable.set_faults({0.2, 0, 0, 0});
    r.send_all(1024);
    r.assert_exactly_once_in_order(1024);
    assert_true(r.cable.counters(0).dropped.load() > 0);
    assert_true(r.cable.faults().drop_rate == 0.2);
}

void test_pulled_cable_waits_then_resumes(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 64 * 1024);
    r.cable.set_plugged(false);
    for (size_t off = 0; off < 8 * 1024; off += 1024) r.cable.mac(0).send_borrowed(off, r.src.data() + off, 1024);
    for (int i = 0; i < 100; ++i) assert_int_equal(r.cable.pump(r.now += 5), 0);  // nothing moves, nothing fails
    assert_int_equal(r.cable.counters(0).frames.load(), 0);
    assert_int_equal(static_cast<int>(r.cable.state()), static_cast<int>(CableState::kDown));
    assert_int_equal(r.cable.mac(0).counters().timeouts, 0);  // no timer runs on a dark fibre
    r.cable.set_plugged(true);
    r.cable.pump(r.now += 5);
    assert_int_equal(r.cable.retrains(), 1);  // plugging back resynchronises, counted
    // The rest of the buffer after the frames queued while it was out.
    size_t off = 8 * 1024;
    while (off < r.src.size() || r.cable.mac(0).frames_pending()) {
        while (off < r.src.size() && r.cable.mac(0).can_send()) {
            r.cable.mac(0).send_borrowed(off, r.src.data() + off, 1024);
            off += 1024;
        }
        r.cable.pump(r.now += 5);
    }
    r.assert_exactly_once_in_order(1024);
}

void test_pulled_mid_window_loses_nothing(void**) {
    Rig r(config(), WireFaults{0.3, 0, 9}, 64 * 1024);  // lossy, so frames are in flight when pulled
    size_t off = 0;
    for (int round = 0; off < r.src.size() || r.cable.mac(0).frames_pending(); ++round) {
        while (off < r.src.size() && r.cable.mac(0).can_send()) {
            r.cable.mac(0).send_borrowed(off, r.src.data() + off, 1024);
            off += 1024;
        }
        r.cable.set_plugged(round % 7 != 3);  // pulled every seventh pump
        r.cable.pump(r.now += 5);
        assert_true(round < 100000);
    }
    r.assert_exactly_once_in_order(1024);
    assert_true(r.cable.retrains() > 0);
}

void test_compliance_mode_loses_bad_frames(void**) {
    Rig r(config(true), WireFaults{0, 1e-4, 5}, 256 * 1024);
    r.send_all(2048);  // completes: compliance mode never waits for acks
    const CableDirectionCounters& c = r.cable.counters(0);
    assert_true(c.crc_errors.load() > 0);
    assert_int_equal(c.retransmits.load(), 0);
    assert_int_equal(c.delivered.load() + c.crc_errors.load(), 128);  // every bad frame simply lost
    assert_true(memcmp(r.dst.data(), r.src.data(), r.src.size()) != 0);
    assert_true(r.cable.compliance_mode());
}

// The same corrupting wire (same seed, same frames) under both modes: TT-link
// resends what the CRC refused, compliance mode loses exactly those frames.
void test_same_wire_compliance_loses_ttlink_repairs(void**) {
    const WireFaults wire{0, 2e-5, 77};  // about one 2 KiB frame in three corrupted
    Rig ttlink(config(false), wire, 256 * 1024);
    ttlink.send_all(2048);
    ttlink.assert_exactly_once_in_order(2048);
    assert_true(ttlink.cable.counters(0).crc_errors.load() > 0);
    assert_true(ttlink.cable.counters(0).retransmits.load() > 0);

    Rig compliance(config(true), wire, 256 * 1024);
    compliance.send_all(2048);
    const CableDirectionCounters& c = compliance.cable.counters(0);
    assert_true(c.crc_errors.load() > 0);
    assert_int_equal(c.retransmits.load(), 0);
    // Each refused frame is a 2 KiB hole in the far memory; nothing else is.
    uint64_t holes = 0;
    for (size_t off = 0; off < compliance.src.size(); off += 2048)
        holes += memcmp(compliance.dst.data() + off, compliance.src.data() + off, 2048) != 0;
    assert_int_equal(holes, c.crc_errors.load());
    assert_int_equal(compliance.order.size(), 128 - holes);
}

// Pumps until the cable has switched to the mode asked for; fails otherwise.
void pump_until_switched(Rig& r) {
    for (int i = 0; r.cable.mode_change_pending(); ++i) {
        if (i > 100000) fail_msg("the mode change never happened");
        r.cable.pump(r.now += 5);
    }
}

// Queues src[from, to) in frames of `size`, pumping as it goes, then pumps
// until every frame is done.
void send_range(Rig& r, size_t from, size_t to, size_t size) {
    size_t off = from;
    for (int i = 0; off < to || r.cable.mac(0).frames_pending(); ++i) {
        if (i > 1000000) fail_msg("range [%zu, %zu) not sent", from, to);
        while (off < to && r.cable.mac(0).can_send()) {
            r.cable.mac(0).send_borrowed(off, r.src.data() + off, size);
            off += size;
        }
        r.cable.pump(r.now += 5);
    }
}

void test_mode_switch_at_run_time(void**) {
    constexpr size_t kPhase = 128 * 1024, kFrame = 2048;
    Rig r(config(false), WireFaults{0.3, 0, 13}, 3 * kPhase);
    // Phase 1, TT-link on a lossy wire: queue a window, then ask for compliance
    // mode with frames unacknowledged. The MACs stop taking frames, Go-Back-N
    // finishes what it holds, and only then do both ends switch.
    size_t queued = 0;
    for (; queued < kPhase && r.cable.mac(0).can_send(); queued += kFrame)
        r.cable.mac(0).send_borrowed(queued, r.src.data() + queued, kFrame);
    r.cable.pump(r.now += 5);
    assert_true(r.cable.mac(0).frames_pending() > 0);
    r.cable.set_mode(true);
    r.cable.pump(r.now += 5);
    assert_false(r.cable.mac(0).can_send());  // held while draining
    pump_until_switched(r);
    assert_true(r.cable.compliance_mode() && r.cable.mac(0).compliance_mode() && r.cable.mac(1).compliance_mode());
    assert_true(r.cable.mac(0).can_send());
    r.assert_exactly_once_in_order(kFrame, queued);  // every frame queued under TT-link, despite the drops
    assert_true(r.cable.counters(0).retransmits.load() > 0);

    // Phase 2, compliance mode on a corrupting wire: bad frames are lost.
    r.cable.set_faults({0, 2e-5, 0, 0});
    const uint64_t retx_before = r.cable.counters(0).retransmits.load();
    const uint64_t crc_before = r.cable.counters(0).crc_errors.load();
    send_range(r, queued, 2 * kPhase, kFrame);
    const uint64_t lost = r.cable.counters(0).crc_errors.load() - crc_before;
    assert_true(lost > 0);
    assert_int_equal(r.cable.counters(0).retransmits.load(), retx_before);
    assert_int_equal(r.order.size(), 2 * kPhase / kFrame - lost);

    // Phase 3, back to TT-link on the same wire: sequence numbers restart on
    // both ends together, and every frame lands again.
    r.cable.set_mode(false);
    pump_until_switched(r);
    assert_false(r.cable.compliance_mode());
    send_range(r, 2 * kPhase, 3 * kPhase, kFrame);
    assert_memory_equal(r.dst.data() + 2 * kPhase, r.src.data() + 2 * kPhase, kPhase);
    assert_true(r.cable.counters(0).retransmits.load() > retx_before);
    assert_int_equal(r.order.size(), 3 * kPhase / kFrame - lost);  // phase 3's frames all landed, once each
    for (size_t i = r.order.size() - kPhase / kFrame; i < r.order.size(); ++i)
        assert_int_equal(r.order[i], 2 * kPhase + (i - (r.order.size() - kPhase / kFrame)) * kFrame);
}

void test_mode_switch_taken_back(void**) {
    // Asked for and taken back before the next pump: no hold stays behind.
    Rig r(config(false), WireFaults{0, 0, 1}, 64 * 1024);
    r.cable.set_mode(true);
    r.cable.set_mode(false);
    assert_false(r.cable.mode_change_pending());
    r.send_all(1024);
    r.assert_exactly_once_in_order(1024);
    assert_false(r.cable.compliance_mode());
}

void test_flapping_link_still_delivers(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 128 * 1024);
    CableFaults f;
    f.flap_period_ms = 2;  // on the rig's µs clock: down 1000 of every 2000, 200 pumps each
    f.flap_down_ms = 1;
    r.cable.set_faults(f);
    r.send_all(1024);
    r.assert_exactly_once_in_order(1024);
    assert_true(r.cable.retrains() > 0);  // each time the carrier came back
}

void test_bad_faults_are_refused_by_name(void**) {
    const auto expect = [](CableFaults f, const char* what) {
        try {
            check_cable_faults(f);
            fail_msg("accepted a bad fault: expected '%s'", what);
        } catch (const Error& e) {
            if (!strstr(e.what(), what)) fail_msg("'%s' lacks '%s'", e.what(), what);
        }
    };
    expect({1.5, 0, 0, 0}, "frame drop rate must be within [0, 1], not 1.5");
    expect({0, -1e-6, 0, 0}, "bit-error rate must be within [0, 1]");
    expect({0, 0, 100, 100}, "down 100 ms is not shorter than the period of 100 ms");
    expect({0, 0, 0, 5}, "a flap needs a period");
    check_cable_faults({0.01, 1e-6, 100, 20});  // fine
    expect({0, 0, 0, 0, -1, 0}, "link bandwidth must be 0 (unshaped) or within [0.000001, 10000] GB/s");
    expect({0, 0, 0, 0, 1e-300, 0}, "link bandwidth must be 0 (unshaped) or within [0.000001, 10000] GB/s, not 1e-300");
    expect({0, 0, 0, 0, 1, -5}, "link latency must be within");
    check_cable_faults({0, 0, 0, 0, 12.5, 2});  // fine
}

CableFaults shaping(double gbps, double latency_us, double drop = 0) {
    CableFaults f;
    f.drop_rate = drop;
    f.bandwidth_gbps = gbps;
    f.latency_us = latency_us;
    return f;
}

constexpr double kFrameOverhead = sizeof(abi::TtLinkHeader) + sizeof(abi::TtLinkTrailer);

// A shaped wire carries frames at its rate, never faster, and a window that
// covers the rate keeps it busy: the transfer takes its size over the rate.
void test_shaped_wire_runs_at_its_rate(void**) {
    constexpr size_t kFrame = 1024, kFrames = 64;
    constexpr double kGBps = 0.1;  // 1024 B frames: about 10.4 us each
    Rig r(config(), WireFaults{0, 0, 1}, kFrame * kFrames);
    r.cable.set_faults(shaping(kGBps, 0));
    const double per_frame_us = (kFrame + kFrameOverhead) / (kGBps * 1e3);
    const uint64_t t0 = r.now;
    size_t off = 0;
    while (off < r.src.size() || r.cable.mac(0).frames_pending()) {
        while (off < r.src.size() && r.cable.mac(0).can_send()) {
            r.cable.mac(0).send_borrowed(off, r.src.data() + off, kFrame);
            off += kFrame;
        }
        r.cable.pump(r.now += 1);
        // Never ahead of the wire: frame k lands no earlier than (k + 1) frame times.
        assert_true(double(r.order.size()) * per_frame_us <= double(r.now - t0) + 1e-9);
        if (r.now - t0 > 100000) fail_msg("not delivered after 100 ms of wire time");
    }
    r.assert_exactly_once_in_order(kFrame);
    const double took = double(r.now - t0), ideal = kFrames * per_frame_us;
    if (took < ideal || took > ideal + 10)
        fail_msg("64 frames took %.1f us on the wire, expected %.1f us (+ an ack's trip)", took, ideal);
    assert_int_equal(r.cable.counters(0).retransmits.load(), 0);  // the timer allowed for the slow wire
}

// Each direction is its own wire: sending both ways at once takes as long as
// one way, because acks do not wait behind the other direction's data. The
// traffic is the EDM's (each 16 KiB payload followed by a 4-byte counter, so
// half the window's frames are small) and the MACs run the bridge's config.
void test_shaped_wire_is_full_duplex(void**) {
    constexpr size_t kFrame = 16384, kFrames = 128, kCounters = kFrame * kFrames;
    constexpr double kGBps = 0.5;
    std::vector<uint8_t> src[2], dst[2];
    for (int e = 0; e < 2; ++e) {
        src[e].resize(kFrame * kFrames);
        dst[e].assign(kCounters + 4, 0);
        for (size_t i = 0; i < src[e].size(); ++i) src[e][i] = static_cast<uint8_t>(i * 7 + e);
    }
    TtLinkCable cable(bridge_tt_link_config(false), WireFaults{0, 0, 1},
                      [&](int receiver, uint64_t d, const uint8_t* p, size_t n) {
                          memcpy(dst[receiver].data() + d, p, n);
                      });
    cable.set_faults(shaping(kGBps, 0));
    uint64_t now = 0;
    size_t next[2] = {0, 0};  // frames queued: even ones payloads, odd ones counters
    while (next[0] < 2 * kFrames || next[1] < 2 * kFrames || cable.mac(0).frames_pending() ||
           cable.mac(1).frames_pending()) {
        for (int e = 0; e < 2; ++e)
            for (; next[e] < 2 * kFrames && cable.mac(e).can_send(); ++next[e]) {
                const uint32_t count = static_cast<uint32_t>(next[e] / 2 + 1);
                if (next[e] % 2 == 0)
                    cable.mac(e).send_borrowed((count - 1) * kFrame, src[e].data() + (count - 1) * kFrame, kFrame);
                else
                    cable.mac(e).send_borrowed(kCounters, reinterpret_cast<const uint8_t*>(&count), 4);
            }
        cable.pump(now += 1);
        if (now > 100000) fail_msg("not delivered after 100 ms of wire time");
    }
    // End 0's bytes land at end 1 and the other way round, the last counter last.
    for (int e = 0; e < 2; ++e) {
        assert_memory_equal(dst[1 - e].data(), src[e].data(), src[e].size());
        uint32_t last;
        memcpy(&last, dst[1 - e].data() + kCounters, 4);
        assert_int_equal(last, kFrames);
    }
    const double ideal = kFrames * (kFrame + 4 + 2 * kFrameOverhead) / (kGBps * 1e3);
    if (double(now) > ideal * 1.1) fail_msg("both ways took %.0f us; one way alone takes %.0f us", double(now), ideal);
    assert_int_equal(cable.counters(0).retransmits.load() + cable.counters(1).retransmits.load(), 0);
}

// An ack does not wait behind the data its end has queued on the wire: it
// goes after the frame being sent, as a MAC slips a control frame in.
void test_ack_goes_ahead_of_queued_data(void**) {
    constexpr size_t kFrame = 16384;
    constexpr double kGBps = 0.5, kLatencyUs = 2;  // a 16 KiB frame: about 33 us on the wire
    std::vector<uint8_t> src(8 * kFrame, 0x5a), dst[2];
    for (auto& d : dst) d.assign(src.size(), 0);
    std::vector<uint64_t> order;
    TtLinkCable cable(bridge_tt_link_config(false), WireFaults{0, 0, 1},
                      [&](int receiver, uint64_t d, const uint8_t* p, size_t n) {
                          memcpy(dst[receiver].data() + d, p, n);
                          if (receiver == 0) order.push_back(d);
                      });
    cable.set_faults(shaping(kGBps, kLatencyUs));
    for (size_t f = 0; f < 8; ++f) cable.mac(1).send_borrowed(f * kFrame, src.data() + f * kFrame, kFrame);
    cable.mac(0).send_borrowed(0, src.data(), 1024);
    cable.pump(1);   // end 1's wire is booked for about 265 us; end 0's frame lands at about 5 us
    cable.pump(10);  // end 1 owes the ack
    cable.pump(40);  // after end 1's first frame (done at about 34 us) and the latency
    assert_int_equal(cable.mac(0).frames_pending(), 0);
    assert_int_equal(cable.counters(0).retransmits.load(), 0);
    for (uint64_t now = 41; cable.mac(1).frames_pending() && now < 2000; now += 5) cable.pump(now);
    assert_int_equal(order.size(), 8);  // the queued data still lands, whole and in order
    for (size_t f = 0; f < 8; ++f) assert_int_equal(order[f], f * kFrame);
    assert_memory_equal(dst[0].data(), src.data(), src.size());
    assert_true(cable.quiet());
}

// Latency holds each frame on the wire, and its ack on the way back.
void test_latency_delays_frames_and_acks(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 512);
    r.cable.set_faults(shaping(0, 100));
    r.cable.mac(0).send_borrowed(0, r.src.data(), 512);
    r.cable.pump(r.now = 1000);  // on the wire at 1000 us, lands at 1100
    r.cable.pump(r.now = 1099);
    assert_int_equal(r.order.size(), 0);
    r.cable.pump(r.now = 1100);
    assert_int_equal(r.order.size(), 1);
    assert_int_equal(r.cable.mac(0).frames_pending(), 1);  // the ack is still travelling
    assert_false(r.cable.quiet());
    r.cable.pump(r.now = 1200);
    assert_int_equal(r.cable.mac(0).frames_pending(), 0);
    assert_true(r.cable.quiet());
    r.assert_exactly_once_in_order(512);
    assert_int_equal(r.cable.counters(0).retransmits.load(), 0);
}

// Shaping and a lossy wire together: Go-Back-N still delivers exactly once.
void test_shaped_lossy_wire_still_delivers_exactly_once(void**) {
    Rig r(config(), WireFaults{0, 0, 7}, 256 * 1024);
    r.cable.set_faults(shaping(2, 20, 0.05));
    r.send_all(4096);
    r.assert_exactly_once_in_order(4096);
    assert_true(r.cable.counters(0).dropped.load() > 0);
    assert_true(r.cable.counters(0).retransmits.load() > 0);
}

// Frames still travelling when the shaping is lifted land before later ones.
void test_shaping_lifted_mid_flight_keeps_order(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 16 * 1024);
    r.cable.set_faults(shaping(0, 1000));
    for (size_t off = 0; off < 4 * 1024; off += 1024) r.cable.mac(0).send_borrowed(off, r.src.data() + off, 1024);
    r.cable.pump(r.now += 5);
    assert_int_equal(r.order.size(), 0);
    r.cable.set_faults(CableFaults{});
    r.send_all(1024);  // sends the rest (from offset 0: the rig starts over)
    // What was on the wire arrived first; the rig's resend of the same bytes
    // then lands again behind it.
    assert_true(r.order.size() >= 4);
    for (size_t i = 0; i < 4; ++i) assert_int_equal(r.order[i], i * 1024);
    assert_memory_equal(r.dst.data(), r.src.data(), r.src.size());
}

// A wire slowed to a crawl and then freed carries what it still had queued
// at the new rate: 1 KB/s would have held four 1 KiB frames for 4 s.
void test_a_crawl_lifted_frees_the_frames_queued_behind_it(void**) {
    Rig r(config(), WireFaults{0, 0, 1}, 4 * 1024);
    r.cable.set_faults(shaping(1e-6, 0));
    for (size_t off = 0; off < 4 * 1024; off += 1024) r.cable.mac(0).send_borrowed(off, r.src.data() + off, 1024);
    r.cable.pump(r.now += 5);
    assert_int_equal(r.order.size(), 0);
    r.cable.set_faults(CableFaults{});
    const uint64_t lifted = r.now;
    while (r.order.size() < 4) {
        r.cable.pump(r.now += 1);
        if (r.now - lifted > 1000) fail_msg("%zu of 4 frames 1 ms after the crawl was lifted", r.order.size());
    }
    r.assert_exactly_once_in_order(1024);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_wire_delivers_in_one_pump),
        cmocka_unit_test(test_drops_and_bit_errors_are_repaired),
        cmocka_unit_test(test_faults_set_while_running),
        cmocka_unit_test(test_pulled_cable_waits_then_resumes),
        cmocka_unit_test(test_pulled_mid_window_loses_nothing),
        cmocka_unit_test(test_compliance_mode_loses_bad_frames),
        cmocka_unit_test(test_same_wire_compliance_loses_ttlink_repairs),
        cmocka_unit_test(test_mode_switch_at_run_time),
        cmocka_unit_test(test_mode_switch_taken_back),
        cmocka_unit_test(test_flapping_link_still_delivers),
        cmocka_unit_test(test_bad_faults_are_refused_by_name),
        cmocka_unit_test(test_shaped_wire_runs_at_its_rate),
        cmocka_unit_test(test_shaped_wire_is_full_duplex),
        cmocka_unit_test(test_ack_goes_ahead_of_queued_data),
        cmocka_unit_test(test_latency_delays_frames_and_acks),
        cmocka_unit_test(test_shaped_lossy_wire_still_delivers_exactly_once),
        cmocka_unit_test(test_shaping_lifted_mid_flight_keeps_order),
        cmocka_unit_test(test_a_crawl_lifted_frees_the_frames_queued_behind_it),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
