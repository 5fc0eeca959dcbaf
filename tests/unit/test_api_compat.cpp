// Firmware test code written against weft 0.7 still builds and runs: the API
// it used (host_board::reset/state/throw_on_panic, eth::peer_chip and
// eth::tx_busy) was removed without notice in 0.7 and is back, deprecated
// (CHANGELOG.md). Built with deprecation warnings off, as such a project would
// be until it moves on.
#include <memory>

#include "hal/eth.h"
#include "hal/mailbox.h"
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

void test_the_07_host_board_and_eth_calls(void**) {
    auto cb = std::make_unique<abi::ChipControlBlock>();
    cb->port[1].peer_chip = 7;
    host_board::reset(cb.get(), 2);
    host_board::throw_on_panic();
    assert_int_equal(host_board::state().core, 2);
    assert_ptr_equal(host_board::state().control, cb.get());
    host_board::state().now = 1234;
    assert_int_equal(host_board::current().clock.now, 1234);
    assert_int_equal(eth::peer_chip(1), 7);
    assert_false(eth::tx_busy(1));
    cb->eth[1].tail = 3;  // three commands issued, none sent
    assert_true(eth::tx_busy(1));
    bool panicked = false;
    try {
        mailbox::panic(abi::kPanicAssert, 42);
    } catch (const host_board::Panic& p) {
        panicked = p.code == abi::kPanicAssert && p.detail == 42;
    }
    assert_true(panicked);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_07_host_board_and_eth_calls),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
