// CCL tunables: the registry's default, then the tuning file (WEFT_CCL_CONFIG),
// then the environment; bad files are refused naming file and line.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/knobs.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

std::vector<std::string> g_files;  // removed when the tests are done

// A fresh file each time: the tuning file is read once per path.
std::string write_file(const std::string& text) {
    const std::string path = "/tmp/weft-ccl-tuning-" + std::to_string(getpid()) + "-" +
                             std::to_string(g_files.size() + 1) + ".yaml";
    g_files.push_back(path);
    std::ofstream(path) << text;
    setenv("WEFT_CCL_CONFIG", path.c_str(), 1);
    return path;
}

using knobs::knob;

long long slots() { return knobs::integer(knob("WEFT_CCL_SLOTS")); }

std::string error_of_slots() {
    try {
        slots();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void test_default_without_file_or_variable(void**) {
    unsetenv("WEFT_CCL_CONFIG");
    unsetenv("WEFT_CCL_SLOTS");
    assert_int_equal(slots(), knob("WEFT_CCL_SLOTS").fallback);
}

void test_file_sets_and_variable_wins(void**) {
    unsetenv("WEFT_CCL_SLOTS");
    write_file("# tuned for ring8\nccl_slots: 4\nctring_chunk_size: 0x10000\n");
    assert_int_equal(slots(), 4);
    assert_int_equal(knobs::integer(knob("WEFT_CTRING_CHUNK_SIZE")), 65536);
    const auto& chunks = knob("WEFT_CTRING_NUM_CHUNKS");
    assert_int_equal(knobs::integer(chunks), chunks.fallback);  // not in the file: the default
    setenv("WEFT_CCL_SLOTS", "2", 1);
    assert_int_equal(slots(), 2);
    unsetenv("WEFT_CCL_SLOTS");
}

// The tuning file picks the algorithm all_reduce's auto runs, and the root
// of the hierarchical one; the environment still wins.
void test_file_picks_all_reduces_algorithm_and_root(void**) {
    unsetenv("WEFT_ALL_REDUCE_ALGO");
    unsetenv("WEFT_HIERARCHICAL_ROOT");
    write_file("all_reduce_algo: hierarchical\nhierarchical_root: 5\n");
    assert_string_equal(knobs::text(knob("WEFT_ALL_REDUCE_ALGO")).c_str(), "hierarchical");
    assert_int_equal(knobs::integer(knob("WEFT_HIERARCHICAL_ROOT")), 5);
    setenv("WEFT_ALL_REDUCE_ALGO", "ring", 1);
    assert_string_equal(knobs::text(knob("WEFT_ALL_REDUCE_ALGO")).c_str(), "ring");
    unsetenv("WEFT_ALL_REDUCE_ALGO");
    write_file("ccl_slots: 4\n");
    assert_string_equal(knobs::text(knob("WEFT_ALL_REDUCE_ALGO")).c_str(), "");  // unset: the cost model picks
    assert_int_equal(knobs::integer(knob("WEFT_HIERARCHICAL_ROOT")), -1);      // the center
}

void test_bad_files_are_named_by_line(void**) {
    const std::string unknown = write_file("ccl_slots: 4\nccl_slotz: 4\n");
    std::string e = error_of_slots();
    assert_true(e.find(unknown + ":2: unknown CCL tunable 'ccl_slotz'") != std::string::npos);
    assert_true(e.find("ctring_max_bdp") != std::string::npos);  // the known ones are listed

    const std::string word = write_file("ccl_slots: many\n");
    e = error_of_slots();
    assert_true(e.find(word + ":1: ccl_slots = many must be a whole number from 1 to 64 (WEFT_CCL_SLOTS)") !=
                std::string::npos);

    const std::string small = write_file("ccl_slots: 0\n");
    e = error_of_slots();
    assert_true(e.find(small + ":1: ccl_slots = 0 must be a whole number from 1 to 64 (WEFT_CCL_SLOTS)") !=
                std::string::npos);

    setenv("WEFT_CCL_CONFIG", "/nonexistent/ccl.yaml", 1);
    assert_true(error_of_slots().find("/nonexistent/ccl.yaml: cannot read") != std::string::npos);
    unsetenv("WEFT_CCL_CONFIG");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_without_file_or_variable),
        cmocka_unit_test(test_file_sets_and_variable_wins),
        cmocka_unit_test(test_file_picks_all_reduces_algorithm_and_root),
        cmocka_unit_test(test_bad_files_are_named_by_line),
    };
    const int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    for (const std::string& f : g_files) unlink(f.c_str());
    return failed;
}
