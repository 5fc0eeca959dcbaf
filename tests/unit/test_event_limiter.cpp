// The events.log rate limit: the first event from a place is logged, the same
// again within the window is counted, and the count comes out once the window
// is over; other places and later windows are unaffected.
#include <string>

#include "bridge/event_limiter.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using weft::EventLimiter;

namespace {

void test_repeats_are_counted_then_reported(void**) {
    EventLimiter l(1000);
    assert_true(l.admit("timeout chip 0", 0));
    for (uint64_t t = 10; t < 1000; t += 10) assert_false(l.admit("timeout chip 0", t));
    assert_true(l.admit("timeout chip 1", 500));  // another place: its own window
    assert_true(l.expired(999).empty());
    const auto out = l.expired(1000);
    assert_int_equal(out.size(), 1);
    assert_string_equal(out[0].first.c_str(), "timeout chip 0");
    assert_int_equal(out[0].second, 99);
    assert_true(l.admit("timeout chip 0", 1001));  // a new window logs again
    assert_true(l.expired(1500).empty());          // chip 1's window had nothing counted
}

void test_a_quiet_place_is_never_limited(void**) {
    EventLimiter l(1000);
    for (uint64_t t = 0; t < 10000; t += 1000) {
        assert_true(l.expired(t).empty());
        assert_true(l.admit("link down chip 2", t));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeats_are_counted_then_reported),
        cmocka_unit_test(test_a_quiet_place_is_never_limited),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
