// The bridge's TT-link cable (two MACs and a faulty wire, frames as views):
// what the Ethernet data path relies on. Every case checks the bytes that
// landed, exactly once and in order, and the counters that say why.
#include "bridge/tt_link_cable.h"

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

    void assert_exactly_once_in_order(size_t size) {
        assert_memory_equal(dst.data(), src.data(), src.size());
        assert_int_equal(order.size(), (src.size() + size - 1) / size);
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
        cmocka_unit_test(test_flapping_link_still_delivers),
        cmocka_unit_test(test_bad_faults_are_refused_by_name),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
