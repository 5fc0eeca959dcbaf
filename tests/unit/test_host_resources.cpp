// Whether the host can hold a cluster: the estimate grows with the chips, and
// a cluster the host cannot hold is refused saying what it needs and has.
#include <cstring>

#include "common/error.h"
#include "driver/host_resources.h"

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

ClusterSpec chips(uint32_t n) {
    ClusterSpec s;
    s.name = "big";
    s.num_chips = n;
    s.board.dram.size = 512ull << 20;
    return s;
}

void test_need_grows_with_chips(void**) {
    const HostNeed eight = estimate_need(chips(8)), thousand = estimate_need(chips(1000));
    assert_int_equal(eight.processes, 9);
    assert_int_equal(thousand.processes, 1001);
    assert_true(thousand.bytes > 100 * eight.bytes / 9);
    assert_true(eight.bytes > 8 * (40ull << 20));  // at least each QEMU's own
}

void test_refused_with_what_it_needs(void**) {
    HostHas has;
    has.available_bytes = 4ull << 30;
    assert_string_equal(refuse_reason(estimate_need(chips(8)), has).c_str(), "");
    const std::string why = refuse_reason(estimate_need(chips(1000)), has);
    assert_non_null(strstr(why.c_str(), "needs about"));
    assert_non_null(strstr(why.c_str(), "4096 MiB available"));
    has.process_limit = 100;
    has.processes_now = 95;
    const std::string procs = refuse_reason(estimate_need(chips(8)), has);
    assert_non_null(strstr(procs.c_str(), "needs 9 processes"));
    assert_non_null(strstr(procs.c_str(), "may start 5 more"));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_need_grows_with_chips),
        cmocka_unit_test(test_refused_with_what_it_needs),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
