// The device command rings end to end on the host: the firmware's producer
// (chips/qemu-virt ring code over the host board) against weft-bridge's
// consumer, with the test playing the DMA engine whenever the firmware sleeps.

#include <cstring>
#include <memory>
#include <vector>

#include "devices/devices.h"
#include "hal/eth.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "hal/wait.h"
#include "host_board.h"
#include "weft/abi/fault.h"

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

constexpr uint64_t kRamBase = 0x80000000;
constexpr uint64_t kRamSize = 1 << 20;

using host_board::Panic;

// One core of one chip, current for the whole test.
struct Fixture {
    std::unique_ptr<abi::ChipControlBlock> cb = std::make_unique<abi::ChipControlBlock>();
    std::vector<uint8_t> ram = std::vector<uint8_t>(kRamSize);
    ChipMemory mem{ram.data(), kRamBase, kRamSize};
    BoardInfo board;
    DeviceCounters counters;
    uint32_t core = 4;
    uint32_t budget = 3;  // small, so the producer meets a full ring
    host_board::Clock clock;
    host_board::Core hart{*cb, core, clock};
    host_board::Enter entered{hart};

    Fixture() {
        hart.on_sleep = [this] {
            run_noc_ring(mem, board, cb->noc[core], budget, counters);
            run_math_ring(mem, cb->math[core], budget, counters);
        };
        hart.throw_on_panic();
    }
    uint8_t* at(uint64_t addr) { return ram.data() + (addr - kRamBase); }
    uint32_t word(uint64_t addr) {
        uint32_t v;
        memcpy(&v, at(addr), 4);
        return v;
    }
};

void test_writes_complete_in_order_across_wrap(void**) {
    Fixture f;
    const uint64_t src = kRamBase, dst = kRamBase + 0x10000, sem = kRamBase + 0x80000;
    const uint32_t n = 3 * abi::kNocSlots + 5;  // wraps the ring three times
    for (uint32_t i = 0; i < n; ++i) {
        memset(f.at(src + 64 * (i % 512)), int(i & 0xff), 64);
        noc::async_write(src + 64 * (i % 512), dst + 64 * i, 64);
        noc::semaphore_inc(sem, 1);
    }
    noc::barrier();
    assert_int_equal(f.cb->noc[f.core].head, 2 * n);
    assert_int_equal(f.cb->noc[f.core].tail, 2 * n);
    assert_int_equal(f.word(sem), n);
    for (uint32_t i = 0; i < n; ++i) assert_int_equal(f.at(dst + 64 * i)[63], i & 0xff);
    assert_true(f.hart.sleeps > 0);  // the ring filled and the producer waited
    assert_int_equal(f.counters.noc_bytes.load(), 64ull * n);
}

// The engines name the cores whose L1 they wrote, so the bridge rings a core
// asleep on its own work only when that work moved (devices/doorbell.h); a
// write outside every L1 names them all.
void test_engines_name_the_cores_they_wrote(void**) {
    Fixture f;
    f.board.cores.resize(4);
    for (uint32_t c = 0; c < 4; ++c) f.board.cores[c].l1 = Region{kRamBase + 0x10000 * (c + 1), 0x10000};
    const uint64_t src = kRamBase, l1_of_2 = kRamBase + 0x30000, elsewhere = kRamBase + 0x90000;
    abi::NocRing& r = f.cb->noc[f.core];
    CoreTouches t{&f.board};
    noc::async_write(src, l1_of_2 + 64, 64);
    run_noc_ring(f.mem, f.board, r, 10, f.counters, &t);
    assert_int_equal(t.cores, 1u << 2);
    noc::semaphore_inc(kRamBase + 0x10000 + 8, 1);  // core 0's L1
    run_noc_ring(f.mem, f.board, r, 10, f.counters, &t);
    assert_int_equal(t.cores, (1u << 2) | 1u);
    CoreTouches math{&f.board};
    math::semaphore_inc(l1_of_2 + 128, 1);
    run_math_ring(f.mem, f.cb->math[f.core], 10, f.counters, &math);
    assert_int_equal(math.cores, 1u << 2);
    noc::async_write(src, elsewhere, 64);
    run_noc_ring(f.mem, f.board, r, 10, f.counters, &t);
    assert_int_equal(t.cores, ~0u);
}

void test_increment_lands_after_write(void**) {
    Fixture f;
    const uint64_t src = kRamBase, dst = kRamBase + 0x1000, sem = kRamBase + 0x2000;
    memset(f.at(src), 0xab, 256);
    // The consumer checks, at the moment the increment executes, that the payload is there.
    int incs_after_payload = 0;
    f.hart.on_sleep = [&] {
        abi::NocRing& r = f.cb->noc[f.core];
        while (r.head != r.tail) {
            const abi::NocCommand& c = r.slots[r.head % abi::kNocSlots];
            const bool inc = c.op == abi::kNocSemInc;
            run_noc_ring(f.mem, f.board, r, 1, f.counters);
            if (inc && f.at(dst)[255] == 0xab) ++incs_after_payload;
        }
    };
    noc::async_write(src, dst, 256);
    noc::semaphore_inc(sem, 1);
    noc::barrier();
    assert_int_equal(incs_after_payload, 1);
    assert_int_equal(f.word(sem), 1);
    // Fused: the payload and the increment in one command.
    memset(f.at(src), 0xcd, 256);
    noc::async_write_inc(src, dst + 512, 256, sem, 2);
    noc::barrier();
    assert_int_equal(f.at(dst + 512)[0], 0xcd);
    assert_int_equal(f.word(sem), 3);
}

void test_bad_address_panics_with_ring_error(void**) {
    Fixture f;
    noc::async_write(kRamBase, kRamBase, 16);
    noc::async_write(kRamBase, 0x7000000000ull, 64);
    try {
        noc::barrier();
        fail_msg("barrier returned although the engine refused a command");
    } catch (const Panic& p) {
        assert_int_equal(p.code, abi::kPanicRingError);
        assert_int_equal(p.detail, abi::ring_error_detail(abi::kRingNoc, f.core, abi::kRingBadAddress, 1));
    }
    assert_int_equal(f.cb->noc[f.core].head, 1);  // the ring stopped at the bad command
}

void test_semaphore_wait_posts_wait_site(void**) {
    Fixture f;
    const uint64_t sem = kRamBase + 0x100;
    uint32_t* word = reinterpret_cast<uint32_t*>(f.at(sem));
    int sleeps = 0;
    abi::HartStatus& st = f.cb->hart[f.core];
    f.hart.on_sleep = [&] {
        // While the firmware sleeps, its status names the exact wait.
        assert_int_equal(st.wait_kind, abi::kWaitSemaphore);
        assert_int_equal(st.wait_addr, reinterpret_cast<uint64_t>(word));
        assert_int_equal(st.wait_value, 3);
        if (++sleeps == 5) *word = 3;
    };
    noc::semaphore_wait(reinterpret_cast<uint64_t>(word), 3);
    assert_int_equal(sleeps, 5);
    assert_int_equal(st.wait_kind, abi::kWaitNone);
}

void test_device_wait_sleeps_on_doorbell(void**) {
    Fixture f;
    uint32_t flag = 0;
    const abi::HartDoorbell& bell = f.cb->doorbell[f.core];
    std::vector<uint64_t> times;
    f.hart.on_sleep = [&] {
        // Armed while asleep (odd), a new number each sleep so the device rings once per sleep.
        assert_true(bell.seq & 1);
        if (!times.empty()) assert_int_equal(bell.seq, 2 * times.size() + 1);
        times.push_back(f.clock.now);
        if (times.size() == 4) flag = 1;
    };
    noc::semaphore_wait(reinterpret_cast<uint64_t>(&flag), 1);
    // No back-off: the doorbell wakes it; the alarm is only the fallback (5 ms = 50000 ticks).
    assert_int_equal(times.size(), 4);
    assert_int_equal(times[1] - times[0], 50000);
    assert_int_equal(times[3] - times[2], 50000);
    assert_false(bell.seq & 1);  // disarmed once the wait is over
}

void test_timed_wait_backoff_grows_to_cap(void**) {
    Fixture f;
    uint32_t flag = 0;
    std::vector<uint64_t> times;
    f.hart.on_sleep = [&] {
        times.push_back(f.clock.now);
        if (times.size() == 20) flag = 1;
    };
    // A wait no device ends (a lock another core holds) polls on a timer.
    wait_until([&] { return flag == 1; }, abi::kWaitWord, reinterpret_cast<uint64_t>(&flag), 1, 500);
    // Intervals double from 5 µs and stop at the cap (500 µs = 5000 ticks).
    assert_int_equal(times[1] - times[0], 50);
    assert_int_equal(times[2] - times[1], 100);
    assert_int_equal(times[19] - times[18], 5000);
}

void test_math_engine_reduces(void**) {
    Fixture f;
    const uint64_t a = kRamBase, b = kRamBase + 0x1000, out = kRamBase + 0x2000;
    float fa[4] = {1.5f, -2, 3, 1e30f}, fb[4] = {2.5f, 2, -7, 1e30f};
    memcpy(f.at(a), fa, sizeof fa);
    memcpy(f.at(b), fb, sizeof fb);
    math::eltwise(abi::kMathSum, abi::kF32, a, b, out, 4);
    math::barrier();
    float r[4];
    memcpy(r, f.at(out), sizeof r);
    assert_true(r[0] == 4.0f && r[1] == 0.0f && r[2] == -4.0f && r[3] == 2e30f);

    int32_t ia[2] = {INT32_MAX, -5}, ib[2] = {1, 7};
    memcpy(f.at(a), ia, sizeof ia);
    memcpy(f.at(b), ib, sizeof ib);
    math::eltwise(abi::kMathSum, abi::kI32, a, b, out, 2);
    math::eltwise(abi::kMathMax, abi::kI32, a, b, out + 8, 2);
    math::barrier();
    int32_t ir[4];
    memcpy(ir, f.at(out), sizeof ir);
    assert_int_equal(ir[0], INT32_MIN);  // wraps like the hardware
    assert_int_equal(ir[1], 2);
    assert_int_equal(ir[2], INT32_MAX);
    assert_int_equal(ir[3], 7);
    assert_int_equal(f.counters.math_elements.load(), 8);
}

// A buffer handed back through the math ring is handed back only after the
// reduction queued before it read the buffer: the increment runs in ring order.
void test_math_semaphore_follows_the_reduction(void**) {
    Fixture f;
    const uint64_t a = kRamBase, b = kRamBase + 0x1000, sem = kRamBase + 0x3000;
    int32_t ia[2] = {1, 2}, ib[2] = {10, 20};
    memcpy(f.at(a), ia, sizeof ia);
    memcpy(f.at(b), ib, sizeof ib);
    math::eltwise(abi::kMathSum, abi::kI32, a, b, a, 2);
    math::semaphore_inc(sem, 2);
    run_math_ring(f.mem, f.cb->math[f.core], 1, f.counters);  // the device runs one command
    assert_int_equal(f.word(a), 11);
    assert_int_equal(f.word(sem), 0);
    run_math_ring(f.mem, f.cb->math[f.core], 1, f.counters);
    assert_int_equal(f.word(sem), 2);
    math::semaphore_inc(kRamBase + 0x3001, 1);  // unaligned: refused like any bad address
    run_math_ring(f.mem, f.cb->math[f.core], 1, f.counters);
    assert_int_equal(f.cb->math[f.core].error, abi::kRingBadAddress);
}

void test_math_unknown_type_panics(void**) {
    Fixture f;
    math::eltwise(abi::kMathSum, static_cast<abi::DataType>(9), kRamBase, kRamBase, kRamBase, 1);
    try {
        math::barrier();
        fail_msg("barrier returned after a bad math command");
    } catch (const Panic& p) {
        assert_int_equal(p.detail, abi::ring_error_detail(abi::kRingMath, f.core, abi::kRingBadArgument, 0));
    }
}

void test_eth_port_out_of_range_panics(void**) {
    Fixture f;
    try {
        eth::send_word(99, kRamBase, 1);
        fail_msg("send on a port the board does not have");
    } catch (const Panic& p) {
        assert_int_equal(p.code, abi::kPanicBadArgs);
        assert_int_equal(p.detail, 99);
    }
}

void test_corrupt_tail_is_refused(void**) {
    Fixture f;
    abi::NocRing& r = f.cb->noc[f.core];
    r.tail = abi::kNocSlots + 7;  // more outstanding than the ring holds
    assert_int_equal(run_noc_ring(f.mem, f.board, r, 100, f.counters), 0);
    assert_int_equal(r.error, abi::kRingBadArgument);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_complete_in_order_across_wrap),
        cmocka_unit_test(test_engines_name_the_cores_they_wrote),
        cmocka_unit_test(test_increment_lands_after_write),
        cmocka_unit_test(test_bad_address_panics_with_ring_error),
        cmocka_unit_test(test_semaphore_wait_posts_wait_site),
        cmocka_unit_test(test_device_wait_sleeps_on_doorbell),
        cmocka_unit_test(test_timed_wait_backoff_grows_to_cap),
        cmocka_unit_test(test_math_engine_reduces),
        cmocka_unit_test(test_math_semaphore_follows_the_reduction),
        cmocka_unit_test(test_math_unknown_type_panics),
        cmocka_unit_test(test_eth_port_out_of_range_panics),
        cmocka_unit_test(test_corrupt_tail_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
