// A trace's slices nest on every track, as Perfetto expects of one thread: a
// sampled wait seen to end after its kernel, or to begin before the launch was
// recorded, is clipped to the kernel; a kernel ends where the next is launched.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/trace.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using nlohmann::json;

namespace {

json kernel(double ts, double dur, uint32_t core = 4) {
    return {{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"pid", 0}, {"tid", core}, {"ts", ts}, {"dur", dur}};
}

json wait(double ts, double dur, uint32_t core = 4) {
    return {{"ph", "X"}, {"name", "wait semaphore"}, {"pid", 0}, {"tid", core}, {"ts", ts}, {"dur", dur}};
}

// [begin, end) in whole ns of the slices named `name`, in the order they come.
std::vector<std::pair<long long, long long>> spans(const json& events, const std::string& name) {
    std::vector<std::pair<long long, long long>> out;
    for (const json& e : events)
        if (e["ph"] == "X" && e["name"] == name) {
            const long long begin = std::llround(e["ts"].get<double>() * 1000);
            out.push_back({begin, begin + std::llround(e["dur"].get<double>() * 1000)});
        }
    return out;
}

void test_a_wait_seen_after_its_kernel_ends_with_it(void**) {
    json events = {kernel(100, 100), wait(150.5, 109.25)};
    nest_slices(events);
    assert_true((spans(events, "wait semaphore") == std::vector<std::pair<long long, long long>>{{150500, 200000}}));
    assert_true((spans(events, "k") == std::vector<std::pair<long long, long long>>{{100000, 200000}}));
}

void test_a_wait_seen_before_the_launch_begins_with_it(void**) {
    json events = {wait(90, 30), kernel(100, 100)};
    nest_slices(events);
    assert_true((spans(events, "wait semaphore") == std::vector<std::pair<long long, long long>>{{100000, 120000}}));
    // The parent first where both begin at once.
    assert_string_equal(events[0]["name"].get<std::string>().c_str(), "k");
}

void test_waits_apart_from_kernels_and_other_tracks_stay(void**) {
    json events = {json{{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", 4}}, kernel(100, 100), wait(300, 20),
                   wait(150, 100, 5)};
    nest_slices(events);
    assert_int_equal(events.size(), 4);
    assert_string_equal(events[0]["ph"].get<std::string>().c_str(), "M");
    assert_true((spans(events, "wait semaphore") ==
                 std::vector<std::pair<long long, long long>>{{300000, 320000}, {150000, 250000}}));
}

void test_a_kernel_ends_where_the_next_was_launched(void**) {
    json events = {kernel(100, 100), kernel(180, 50), wait(190, 30)};
    nest_slices(events);
    assert_true(
        (spans(events, "k") == std::vector<std::pair<long long, long long>>{{100000, 180000}, {180000, 230000}}));
    assert_true((spans(events, "wait semaphore") == std::vector<std::pair<long long, long long>>{{190000, 220000}}));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_wait_seen_after_its_kernel_ends_with_it),
        cmocka_unit_test(test_a_wait_seen_before_the_launch_begins_with_it),
        cmocka_unit_test(test_waits_apart_from_kernels_and_other_tracks_stay),
        cmocka_unit_test(test_a_kernel_ends_where_the_next_was_launched),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
