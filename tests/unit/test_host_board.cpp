// The host board's per-core context (boards/host/host_board.h): whichever
// core is current is the one the HAL acts for, a core's sleep may step other
// cores and come back to it, and each thread has a current core of its own.
#include <memory>
#include <thread>

#include "hal/mailbox.h"
#include "hal/timer.h"
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

// Two chips of four harts, one clock.
struct TwoChips {
    std::unique_ptr<abi::ChipControlBlock> cb[2] = {std::make_unique<abi::ChipControlBlock>(),
                                                    std::make_unique<abi::ChipControlBlock>()};
    host_board::Clock clock;
    host_board::Chip chip[2] = {{*cb[0], 4, clock}, {*cb[1], 4, clock}};
    TwoChips() {
        cb[0]->host.chip_id = 0;
        cb[1]->host.chip_id = 1;
    }
};

uint32_t where() { return mailbox::chip_id() * 100 + mailbox::core_id(); }

void test_the_hal_acts_for_the_current_core(void**) {
    TwoChips t;
    assert_int_equal(host_board::run_as(t.chip[1].core(3), where), 103);
    host_board::Enter outer(t.chip[0].core(2));
    assert_int_equal(where(), 2);
    {
        host_board::Enter inner(t.chip[1].core(1));
        assert_int_equal(where(), 101);
        mailbox::set_progress(7);  // lands in chip 1's status of hart 1, nowhere else
    }
    assert_int_equal(where(), 2);
    assert_int_equal(t.cb[1]->hart[1].progress, 7);
    assert_int_equal(t.cb[0]->hart[1].progress, 0);
}

// A sleeping core's on_sleep steps another chip's core, then the sleeper goes on as itself.
void test_a_sleep_steps_other_cores(void**) {
    TwoChips t;
    uint32_t seen_in_sleep = 0;
    t.chip[0].core(0).on_sleep = [&] { seen_in_sleep = host_board::run_as(t.chip[1].core(2), where); };
    host_board::run_as(t.chip[0].core(0), [&] {
        timer::sleep_until(timer::now() + 50);
        assert_int_equal(where(), 0);
    });
    assert_int_equal(seen_in_sleep, 102);
    assert_int_equal(t.chip[0].core(0).sleeps, 1);
    assert_int_equal(t.clock.now, 50);  // the chips' shared time moved on
}

// A panic thrown out of a core leaves the core that was current before it current again.
void test_panic_restores_the_previous_core(void**) {
    TwoChips t;
    t.chip[1].throw_on_panic();
    host_board::Enter outer(t.chip[0].core(3));
    try {
        host_board::run_as(t.chip[1].core(0), [] { mailbox::panic(abi::kPanicBadArgs, 9); });
        fail_msg("panic returned");
    } catch (const host_board::Panic& p) {
        assert_int_equal(p.detail, 9);
    }
    assert_int_equal(where(), 3);
}

void test_each_thread_has_its_own_current_core(void**) {
    TwoChips t;
    host_board::Enter here(t.chip[0].core(1));
    uint32_t there = 0;
    std::thread other([&] { there = host_board::run_as(t.chip[1].core(3), where); });
    other.join();
    assert_int_equal(there, 103);
    assert_int_equal(where(), 1);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_hal_acts_for_the_current_core),
        cmocka_unit_test(test_a_sleep_steps_other_cores),
        cmocka_unit_test(test_panic_restores_the_previous_core),
        cmocka_unit_test(test_each_thread_has_its_own_current_core),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
