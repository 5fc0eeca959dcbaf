// A firmware unit test of the outside project's own (weft_add_firmware_test):
// firmware logic written against weft's HAL, stepped on the host board. A
// core issues a NoC write; the test plays the NoC engine when the core would
// sleep and checks the command the firmware queued, then a panic is caught.
#include <memory>

#include "hal/mailbox.h"
#include "hal/noc.h"
#include "host_board.h"
#include "weft/abi/fault.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

void test_a_noc_write_is_queued_and_a_panic_caught(void**) {
    auto cb = std::make_unique<abi::ChipControlBlock>();
    host_board::Clock clock;
    host_board::Core core(*cb, 4, clock);
    core.throw_on_panic();
    host_board::Enter entered(core);
    noc::async_write(0x1000, 0x2000, 64);
    const abi::NocRing& ring = cb->noc[4];
    assert_int_equal(ring.tail, 1);
    assert_int_equal(ring.slots[0].src, 0x1000);
    assert_int_equal(ring.slots[0].dst, 0x2000);
    assert_int_equal(ring.slots[0].len, 64);
    bool caught = false;
    try {
        mailbox::panic(abi::kPanicAssert, 7);
    } catch (const host_board::Panic& p) {
        caught = p.code == abi::kPanicAssert && p.detail == 7;
    }
    assert_true(caught);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_a_noc_write_is_queued_and_a_panic_caught)};
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
