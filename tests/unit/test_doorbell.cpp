// The bridge's doorbell decisions (host/devices/doorbell.cpp): who is rung, and
// that each sleep and each launch is rung for once; and the mask that carries
// a ring to every core the ABI allows (abi::DoorbellMask).
#include <memory>
#include <vector>

#include "devices/doorbell.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

constexpr uint64_t kBase = 0x80000000;

struct Chip {
    std::vector<uint8_t> ram = std::vector<uint8_t>(1 << 20, 0);
    abi::ChipControlBlock cb{};
    ChipMemory mem{ram.data(), kBase, ram.size()};
    Doorbell bell;
    Chip() { bell.reset(cb); }
    uint32_t ring(bool touched = true, uint32_t cores = 8) {
        return bell.cores_to_ring(cb, mem, cores, touched ? Touched::everything() : Touched{});
    }
    uint32_t ring(Touched touched) { return bell.cores_to_ring(cb, mem, 8, touched); }
    uint32_t& word(uint64_t addr) { return *reinterpret_cast<uint32_t*>(ram.data() + (addr - kBase)); }
    void sleep_on(uint32_t core, uint32_t kind, uint64_t addr = 0, uint32_t value = 0) {
        abi::HartStatus& st = cb.hart[core];
        st.state = abi::kHartRunning;
        st.wait_kind = kind;
        st.wait_addr = addr;
        st.wait_value = value;
        cb.doorbell[core].seq = abi::doorbell_arm(cb.doorbell[core].seq);
    }
};

void test_sleeper_rung_once_per_sleep(void**) {
    Chip c;
    c.sleep_on(5, abi::kWaitEdm);
    assert_int_equal(c.ring(), 1u << 5);
    assert_int_equal(c.ring(), 0);                                   // the same sleep again: already rung
    c.cb.doorbell[5].seq = abi::doorbell_arm(c.cb.doorbell[5].seq);  // woke, nothing to do, sleeps again
    assert_int_equal(c.ring(), 1u << 5);
}

void test_untouched_chip_is_not_rung(void**) {
    Chip c;
    c.sleep_on(1, abi::kWaitEdm);
    assert_int_equal(c.ring(false), 0);
    assert_int_equal(c.ring(true), 1u << 1);
}

void test_disarmed_core_is_not_rung(void**) {
    Chip c;
    c.sleep_on(2, abi::kWaitNocRing);
    c.cb.doorbell[2].seq = abi::doorbell_disarm(c.cb.doorbell[2].seq);
    assert_false(abi::doorbell_armed(c.cb.doorbell[2].seq));
    assert_int_equal(c.ring(), 0);
}

void test_semaphore_wait_rung_only_when_reached(void**) {
    Chip c;
    const uint64_t sem = kBase + 0x1000;
    c.sleep_on(4, abi::kWaitSemaphore, sem, 3);
    c.word(sem) = 2;
    assert_int_equal(c.ring(), 0);
    c.word(sem) = 3;
    assert_int_equal(c.ring(), 1u << 4);
}

// A pass that wrote into one core's L1 rings the EDM or router asleep there,
// not the one beside it; a worker's semaphore wait is decided by its value.
void test_resident_rung_only_for_its_own_cores_changes(void**) {
    Chip c;
    c.sleep_on(1, abi::kWaitEdm);
    c.sleep_on(3, abi::kWaitFabricRouter);
    assert_int_equal(c.ring(Touched{1u << 1, 0}), 1u << 1);
    assert_int_equal(c.ring(Touched{1u << 5, 0}), 0);
    assert_int_equal(c.ring(Touched{1u << 3, 0}), 1u << 3);
}

// An EDM or router that waits on none of its own commands (kWaitOthersOnly)
// sleeps through its own rings finishing and its own writes; what another
// core or the peer wrote into its L1 rings it. Without the flag it is rung
// for both, as a worker on a NoC ring is.
void test_resident_waiting_on_others_only_sleeps_through_its_own_completions(void**) {
    Chip c;
    c.sleep_on(1, abi::kWaitEdm, 0, abi::kWaitOthersOnly);
    c.sleep_on(3, abi::kWaitFabricRouter, 0, abi::kWaitOthersOnly);
    c.sleep_on(5, abi::kWaitFabricRouter);
    c.sleep_on(6, abi::kWaitNocRing, 0, abi::kWaitOthersOnly);  // not an owned kind: the flag means nothing
    const uint32_t own = 1u << 1 | 1u << 3 | 1u << 5 | 1u << 6;
    assert_int_equal(c.ring(Touched{own, 1u << 0, 0}), 1u << 5 | 1u << 6);
    assert_int_equal(c.ring(Touched{1u << 3, 0, 1u << 3}), 1u << 3);
    assert_int_equal(c.ring(Touched{1u << 1, 0, 1u << 1}), 1u << 1);
}

void test_eth_wait_rung_when_its_port_moves(void**) {
    Chip c;
    c.sleep_on(4, abi::kWaitEthRing, 2);
    assert_int_equal(c.ring(Touched{0, 1u << 1}), 0);
    assert_int_equal(c.ring(Touched{0, 1u << 2}), 1u << 4);
}

void test_word_wait_rung_only_when_equal(void**) {
    Chip c;
    const uint64_t w = kBase + 0x2000;
    c.word(w) = 1;
    c.sleep_on(2, abi::kWaitWord, w, 0);
    assert_int_equal(c.ring(), 0);
    c.word(w) = 0;
    assert_int_equal(c.ring(), 1u << 2);
}

// The idle hart on watch hears every ring on the chip's line anyway: a device
// touch never rings it (a launch does, below).
void test_idle_hart_not_rung_for_device_touches(void**) {
    Chip c;
    c.sleep_on(0, abi::kWaitLaunch);
    c.cb.hart[0].state = abi::kHartReady;
    assert_int_equal(c.ring(), 0);
}

void test_launch_rung_once_for_its_core(void**) {
    Chip c;
    c.cb.hart[6].state = abi::kHartReady;
    assert_int_equal(c.ring(false), 0);  // nothing posted
    c.cb.host.launch[6].seq = 1;
    assert_int_equal(c.ring(false), 1u << 6);
    assert_int_equal(c.ring(false), 0);
    c.cb.hart[6].state = abi::kHartRunning;  // picked up; the next launch is rung again once posted
    c.cb.hart[6].done_seq = 1;
    c.cb.hart[6].state = abi::kHartDone;
    c.cb.host.launch[6].seq = 2;
    assert_int_equal(c.ring(false), 1u << 6);
}

void test_launches_posted_before_reset_are_not_rung(void**) {
    Chip c;
    c.cb.host.launch[3].seq = 7;
    c.cb.hart[3].done_seq = 6;  // pending, but posted before the bridge started watching
    c.bell.reset(c.cb);
    assert_int_equal(c.ring(false), 0);
}

void test_several_cores_in_one_byte(void**) {
    Chip c;
    c.sleep_on(0, abi::kWaitEthRing);
    c.sleep_on(7, abi::kWaitEdm);
    assert_int_equal(c.ring(), (1u << 0) | (1u << 7));
}

void test_host_ring_rung_once_per_request(void**) {
    Chip c;
    c.cb.host.ring[3] = 7;  // asked before the bridge looked: not rung
    c.bell.reset(c.cb);
    assert_int_equal(c.ring(false), 0);
    c.cb.host.ring[3] = c.cb.host.ring[3] + 1;  // a resident image asked to stop, say
    assert_int_equal(c.ring(false), 1u << 3);   // whether or not a device touched the chip
    assert_int_equal(c.ring(false), 0);
}

// A chip with 16 cores: the high eight are rung like the low ones.
void test_cores_8_to_15_are_rung(void**) {
    Chip c;
    c.sleep_on(8, abi::kWaitEdm);
    c.sleep_on(11, abi::kWaitNocRing);
    c.cb.hart[12].state = abi::kHartReady;
    c.cb.host.launch[12].seq = 1;
    c.cb.host.ring[15] = c.cb.host.ring[15] + 1;
    assert_int_equal(c.ring(true, 16), (1u << 8) | (1u << 11) | (1u << 12) | (1u << 15));
    assert_int_equal(c.ring(true, 16), 0);
    assert_int_equal(c.ring(true, 12), 0);  // a 12-core chip: core 15 does not exist
    c.cb.doorbell[11].seq = abi::doorbell_arm(c.cb.doorbell[11].seq);
    assert_int_equal(c.ring(true, 12), 1u << 11);
}

// What the bridge posts is what the core taking the doorbell wakes, each ring once.
void test_mask_carries_all_16_cores(void**) {
    abi::DoorbellMask m{};
    abi::doorbell_post(m, (1u << 0) | (1u << 9) | (1u << 15));
    assert_int_equal(abi::doorbell_take(m, 16), (1u << 0) | (1u << 9) | (1u << 15));
    assert_int_equal(abi::doorbell_take(m, 16), 0);
    abi::doorbell_post(m, 1u << 14);
    abi::doorbell_post(m, 1u << 14);  // twice before anyone took it: one wake-up
    assert_int_equal(abi::doorbell_take(m, 16), 1u << 14);
    abi::doorbell_post(m, 0xffff);
    assert_int_equal(abi::doorbell_take(m, 12), 0x0fff);  // a 12-core chip looks at its own
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleeper_rung_once_per_sleep),
        cmocka_unit_test(test_untouched_chip_is_not_rung),
        cmocka_unit_test(test_disarmed_core_is_not_rung),
        cmocka_unit_test(test_semaphore_wait_rung_only_when_reached),
        cmocka_unit_test(test_resident_rung_only_for_its_own_cores_changes),
        cmocka_unit_test(test_resident_waiting_on_others_only_sleeps_through_its_own_completions),
        cmocka_unit_test(test_eth_wait_rung_when_its_port_moves),
        cmocka_unit_test(test_word_wait_rung_only_when_equal),
        cmocka_unit_test(test_idle_hart_not_rung_for_device_touches),
        cmocka_unit_test(test_launch_rung_once_for_its_core),
        cmocka_unit_test(test_launches_posted_before_reset_are_not_rung),
        cmocka_unit_test(test_several_cores_in_one_byte),
        cmocka_unit_test(test_host_ring_rung_once_per_request),
        cmocka_unit_test(test_cores_8_to_15_are_rung),
        cmocka_unit_test(test_mask_carries_all_16_cores),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
