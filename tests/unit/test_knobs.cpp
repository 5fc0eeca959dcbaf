// The WEFT_* registry: every bad value is refused naming the variable and its
// range, flags and texts read as documented, and the table is consistent.
#include <stdlib.h>

#include <set>
#include <string>

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
using knobs::knob;

namespace {

// The KnobError `read` throws with `name`=`value` set, or "" when it throws none.
template <typename Read>
std::string refusal(const char* name, const char* value, Read read) {
    setenv(name, value, 1);
    std::string what;
    try {
        read();
    } catch (const knobs::KnobError& e) {
        what = e.what();
    }
    unsetenv(name);
    return what;
}

// By a run-time name, where knob() wants a constant.
const knobs::Knob& find(const std::string& name) {
    for (const knobs::Knob& k : knobs::kKnobs)
        if (k.name == name) return k;
    fail_msg("no knob %s", name.c_str());
    return knobs::kKnobs[0];
}

std::string integer_refusal(const char* name, const char* value) {
    return refusal(name, value, [&] { knobs::integer(find(name)); });
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void test_bad_integers_name_the_knob_and_range(void**) {
    assert_string_equal(integer_refusal("WEFT_CCL_SLOT_SIZE", "1000").c_str(),
                        "WEFT_CCL_SLOT_SIZE=1000 must be a multiple of 16 from 16 to 4294967280");
    assert_string_equal(integer_refusal("WEFT_CCL_SLOTS", "abc").c_str(),
                        "WEFT_CCL_SLOTS=abc must be a whole number from 1 to 64");
    assert_string_equal(integer_refusal("WEFT_CCL_SLOTS", "65").c_str(),
                        "WEFT_CCL_SLOTS=65 must be a whole number from 1 to 64");
    assert_true(contains(integer_refusal("WEFT_CTRING_CHUNK_SIZE", "99999999999999999999"),
                         "WEFT_CTRING_CHUNK_SIZE=99999999999999999999 must be a whole number from 0 up"));
    assert_true(contains(integer_refusal("WEFT_CTRING_PIPELINE_DEPTH", "-1"), "from 0 to 4294967295"));
    assert_true(contains(integer_refusal("WEFT_ACTIVE_WAKE_US", "0"), "WEFT_ACTIVE_WAKE_US=0 must be"));
    assert_true(contains(integer_refusal("WEFT_BRIDGE_SPIN", "4294967296"), "from 0 to 4294967295"));
    assert_true(contains(integer_refusal("WEFT_CCL_SLOT_SIZE", " 4096"), "WEFT_CCL_SLOT_SIZE= 4096 must be"));
}

void test_good_integers(void**) {
    assert_int_equal(knobs::integer(knob("WEFT_CCL_SLOT_SIZE")), 128 * 1024);  // unset: the default
    setenv("WEFT_CCL_SLOT_SIZE", "0x1000", 1);
    assert_int_equal(knobs::integer(knob("WEFT_CCL_SLOT_SIZE")), 4096);
    setenv("WEFT_CCL_SLOT_SIZE", "", 1);  // empty is unset
    assert_int_equal(knobs::integer(knob("WEFT_CCL_SLOT_SIZE")), 128 * 1024);
    unsetenv("WEFT_CCL_SLOT_SIZE");
    setenv("WEFT_CTRING_BIDIR_RS_MAX_SIZE", "-1", 1);  // "always"
    assert_int_equal(knobs::integer(knob("WEFT_CTRING_BIDIR_RS_MAX_SIZE")), -1);
    unsetenv("WEFT_CTRING_BIDIR_RS_MAX_SIZE");
}

void test_reals(void**) {
    const auto& gbps = knob("WEFT_BENCH_LINK_GBPS");
    assert_false(knobs::is_set(gbps));
    setenv("WEFT_BENCH_LINK_GBPS", "0.25", 1);
    assert_true(knobs::is_set(gbps));
    assert_true(knobs::real(gbps) == 0.25);
    unsetenv("WEFT_BENCH_LINK_GBPS");
    assert_string_equal(refusal("WEFT_BENCH_LINK_GBPS", "fast", [&] { knobs::real(gbps); }).c_str(),
                        "WEFT_BENCH_LINK_GBPS=fast must be a number from 0 up");
    assert_true(contains(refusal("WEFT_BENCH_LINK_GBPS", "-1", [&] { knobs::real(gbps); }), "from 0 up"));
    assert_true(contains(refusal("WEFT_BENCH_LINK_GBPS", "nan", [&] { knobs::real(gbps); }), "from 0 up"));
    assert_true(contains(refusal("WEFT_BENCH_LINK_GBPS", " 0.25", [&] { knobs::real(gbps); }), "from 0 up"));
}

void test_flags_and_texts(void**) {
    const auto& keep = knob("WEFT_KEEP_RUN_DIR");
    unsetenv("WEFT_KEEP_RUN_DIR");
    assert_false(knobs::flag(keep));
    for (const char* off : {"", "0"}) {
        setenv("WEFT_KEEP_RUN_DIR", off, 1);
        assert_false(knobs::flag(keep));
    }
    for (const char* on : {"1", "yes"}) {
        setenv("WEFT_KEEP_RUN_DIR", on, 1);
        assert_true(knobs::flag(keep));
    }
    unsetenv("WEFT_KEEP_RUN_DIR");
    unsetenv("WEFT_QEMU_ACCEL");
    assert_string_equal(knobs::text(knob("WEFT_QEMU_ACCEL")).c_str(), "tcg,thread=single");
    setenv("WEFT_QEMU_ACCEL", "kvm", 1);
    assert_string_equal(knobs::text(knob("WEFT_QEMU_ACCEL")).c_str(), "kvm");
    unsetenv("WEFT_QEMU_ACCEL");
    unsetenv("WEFT_CCL_CONFIG");
    assert_string_equal(knobs::text(knob("WEFT_CCL_CONFIG")).c_str(), "");  // no default
}

void test_check_refuses_a_readers_bad_knob(void**) {
    knobs::check(knobs::Reader::kBridge);
    assert_true(contains(refusal("WEFT_BRIDGE_NAP_US", "ten", [] { knobs::check(knobs::Reader::kBridge); }),
                         "WEFT_BRIDGE_NAP_US=ten must be a whole number from 0 to 1000000"));
    // Checked before any QEMU is spawned.
    assert_string_equal(refusal("WEFT_QEMU", "/nonexistent/qemu", [] { knobs::check(knobs::Reader::kBridge); }).c_str(),
                        "WEFT_QEMU=/nonexistent/qemu: no such program (or not executable)");
    assert_true(contains(refusal("WEFT_QEMU", "no-such-qemu-here", [] { knobs::check(knobs::Reader::kBridge); }),
                         "no such program on PATH"));
    setenv("WEFT_QEMU", "sh", 1);  // a name found on PATH
    knobs::check(knobs::Reader::kBridge);
    unsetenv("WEFT_QEMU");
    // Another reader's knob is not its business.
    assert_string_equal(refusal("WEFT_CCL_SLOTS", "0", [] { knobs::check(knobs::Reader::kBridge); }).c_str(), "");
}

void test_the_table_is_consistent(void**) {
    std::set<std::string_view> names;
    for (const knobs::Knob& k : knobs::kKnobs) {
        assert_true(k.name.substr(0, 5) == "WEFT_");
        assert_true(names.insert(k.name).second);
        assert_false(k.meaning.empty());
        assert_false(knobs::default_text(k).empty());
        if (k.type != knobs::Type::kInteger || !k.shown_default.empty()) continue;
        assert_true(k.min <= k.fallback && k.fallback <= k.max && k.fallback % k.step == 0);
    }
    assert_string_equal(knobs::file_key(knob("WEFT_CTRING_MAX_BDP")).c_str(), "ctring_max_bdp");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_integers_name_the_knob_and_range),
        cmocka_unit_test(test_good_integers),
        cmocka_unit_test(test_reals),
        cmocka_unit_test(test_flags_and_texts),
        cmocka_unit_test(test_check_refuses_a_readers_bad_knob),
        cmocka_unit_test(test_the_table_is_consistent),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
