// parse_size: the units, and every way a typed size can be out of range
// refused by name instead of wrapping to some other size.
#include <string>

#include "common/error.h"
#include "common/sizes.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

std::string error_of(const std::string& word) {
    try {
        parse_size(word);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

bool refused_with(const std::string& word, const std::string& text) {
    return error_of(word).find(text) != std::string::npos;
}

void test_units(void**) {
    assert_int_equal(parse_size("4096"), 4096);
    assert_int_equal(parse_size("16K"), 16384);
    assert_int_equal(parse_size("16k"), 16384);
    assert_int_equal(parse_size("2KiB"), 2048);
    assert_int_equal(parse_size("1M"), 1 << 20);
    assert_int_equal(parse_size("3MiB"), 3 << 20);
    assert_int_equal(parse_size("2G"), 2ull << 30);
    assert_int_equal(parse_size("0"), 0);
    assert_true(parse_size("18446744073709551615") == UINT64_MAX);
    assert_true(parse_size("17179869183G") == 17179869183ull << 30);  // the largest G that fits
}

void test_signs_are_refused(void**) {
    assert_true(refused_with("-4K", "'-4K' is not a size"));
    assert_true(refused_with("-1", "'-1' is not a size"));
    assert_true(refused_with("+4", "'+4' is not a size"));
    assert_true(refused_with(" 4", "' 4' is not a size"));
}

void test_overflow_is_refused(void**) {
    assert_true(refused_with("17179869184G", "'17179869184G' is more than 2^64 - 1 bytes"));
    assert_true(refused_with("18014398509481984K", "is more than 2^64 - 1 bytes"));
    assert_true(refused_with("18446744073709551616", "'18446744073709551616' is more than 2^64 - 1 bytes"));
}

void test_garbage_is_refused(void**) {
    assert_true(refused_with("", "'' is not a size"));
    assert_true(refused_with("x", "'x' is not a size"));
    assert_true(refused_with("4T", "'4T' has an unknown unit"));
    assert_true(refused_with("4K ", "has an unknown unit"));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_signs_are_refused),
        cmocka_unit_test(test_overflow_is_refused),
        cmocka_unit_test(test_garbage_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
