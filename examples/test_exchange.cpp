// A first CMocka test of one's own firmware logic: the exchange kernel's
// pattern and check, compiled for the host from the same header the kernel
// uses. Run by make test (examples.unit).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

#include <vector>

#include "exchange.h"

namespace {

void test_a_filled_buffer_checks_clean(void**) {
    std::vector<uint32_t> buffer(1000);
    example::fill(buffer.data(), 1000, 1);
    assert_int_equal(example::mismatches(buffer.data(), 1000, 1), 0);
}

void test_every_corrupted_word_is_counted(void**) {
    std::vector<uint32_t> buffer(64);
    example::fill(buffer.data(), 64, 0);
    buffer[0] ^= 1;
    buffer[63] = 0;
    assert_int_equal(example::mismatches(buffer.data(), 64, 0), 2);
}

void test_the_chips_patterns_differ_everywhere(void**) {
    // A buffer from the wrong chip must not pass the check by accident.
    std::vector<uint32_t> buffer(4096);
    example::fill(buffer.data(), 4096, 0);
    assert_int_equal(example::mismatches(buffer.data(), 4096, 1), 4096);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_filled_buffer_checks_clean),
        cmocka_unit_test(test_every_corrupted_word_is_counted),
        cmocka_unit_test(test_the_chips_patterns_differ_everywhere),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
