// Resident images on a real pair of QEMU chips (driver/resident.h): started
// once, answering the host while it runs, its L1 kept out of every op's
// allocator, its core refused to other launches by name, collective ops
// running beside it, and a clean stop that gives the core back.
#include <cstring>
#include <functional>
#include <thread>

#include "ccl/op_case.h"
#include "common/error.h"
#include "driver/resident.h"
#include "system_test.h"
#include "test_kernels.h"
#include "transport/l1_allocator.h"

using namespace weft;
using namespace weft::test;
using namespace std::chrono;

namespace {

std::unique_ptr<Cluster> g_cluster;
constexpr uint32_t kChip = 0, kCore = 0;  // chip 0's port N ERISC: no cable in the pair
constexpr uint64_t kKeep = 64 * 1024;

int setup(void**) { return start_for_group("pair", &g_cluster); }
int teardown(void**) {
    g_cluster.reset();
    return 0;
}

const KernelImage& echo_image() {
    return kernel_at(paths::firmware_dir(g_cluster->board().name) + "/test-resident/resident_echo.elf");
}

// The echo's two words (request, reply) at the start of the L1 it is given.
uint64_t g_words = 0;
resident::Running start_echo() {
    auto configure = [](ChipWriter& memory, uint32_t chip, Region free) {
        g_words = free.base;
        memory.clear(chip, g_words, 8);
        return g_words;
    };
    return resident::start(*g_cluster, kChip, kCore, echo_image(), kKeep, configure, milliseconds(5000));
}

bool reply_reaches(uint32_t want) {
    Chip& chip = g_cluster->chip(kChip);
    for (int i = 0; i < 2000; ++i) {
        if (chip.read32(g_words + 4) == want) return true;
        std::this_thread::sleep_for(milliseconds(1));
    }
    return false;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

void test_resident_runs_answers_and_stops(void**) {
    Cluster& c = *g_cluster;
    const resident::Running r = start_echo();
    // Recorded in the control block: any process sees it.
    const auto all = resident::list(c);
    assert_int_equal(all.size(), 1);
    assert_string_equal(all[0].name.c_str(), "resident_echo");
    assert_int_equal(all[0].l1.end(), c.board().l1_free(kCore).end());  // the top of the free L1
    assert_true(all[0].l1.size >= kKeep);
    assert_int_equal(all[0].control, r.control);

    // It answers while it runs: the host's ring wakes it from its doorbell.
    for (uint32_t request : {41u, 99u}) {
        c.chip(kChip).write32(g_words, request);
        c.ring_core(kChip, kCore);
        assert_true(reply_reaches(request + 1));
    }

    // Its core takes no other launch, and says why.
    std::string e = error_of([&] { c.run({reloc_probe(c.board(), kChip, kCore)}, milliseconds(5000)); });
    assert_non_null(strstr(e.c_str(), "runs the resident image 'resident_echo'"));
    e = error_of([&] { start_echo(); });
    assert_non_null(strstr(e.c_str(), "already runs the resident image 'resident_echo'"));

    // An op's allocator stays out of its L1.
    transport::L1Allocator mem(c.board());
    for (const auto& x : resident::list(c)) mem.keep_out(x.chip, x.core, x.l1);
    const uint64_t room = r.l1.base - c.board().l1_free(kCore).base;
    e = error_of([&] { mem.allocate(kChip, kCore, room + 64, 64, "too much"); });
    assert_non_null(strstr(e.c_str(), "a resident image keeps the rest"));
    assert_true(mem.allocate(kChip, kCore, room, 64, "all that is left") + room <= r.l1.base);

    // Collective ops run beside it.
    ccl::CollectiveRunner runner(c);
    ccl::OpRequest op;
    op.op = ccl::Collective::kAllGather;
    op.bytes = 256 * 1024;
    op.algo = "ring";
    const ccl::CaseResult res = ccl::run_case(runner, c, op, 7);
    assert_true(res.check.checked > 0);
    assert_int_equal(res.check.wrong, 0);
    c.chip(kChip).write32(g_words, 7);
    c.ring_core(kChip, kCore);
    assert_true(reply_reaches(8));

    // A clean stop gives the core back.
    resident::stop(c, kChip, kCore, milliseconds(5000));
    assert_int_equal(c.chip(kChip).read32(r.control + offsetof(abi::ResidentControl, state)), abi::kResidentStopped);
    assert_int_equal(c.chip(kChip).read32(g_words + 4), 0);  // the image's stop() ran
    assert_int_equal(resident::list(c).size(), 0);
    const auto probe = c.run({reloc_probe(c.board(), kChip, kCore)}, milliseconds(5000));
    assert_int_equal(probe[0].return_code, 1321);
    e = error_of([&] { resident::stop(c, kChip, kCore, milliseconds(1000)); });
    assert_non_null(strstr(e.c_str(), "runs no resident image"));
}

void test_resident_refuses_bad_requests(void**) {
    Cluster& c = *g_cluster;
    const uint64_t free = c.board().l1_free(kCore).size;
    std::string e =
        error_of([&] { resident::start(c, kChip, kCore, echo_image(), free + 1, nullptr, milliseconds(1000)); });
    assert_non_null(strstr(e.c_str(), "cannot keep"));
    e = error_of([&] { resident::start(c, 9, kCore, echo_image(), kKeep, nullptr, milliseconds(1000)); });
    assert_non_null(strstr(e.c_str(), "no chip 9"));
    // Without its configuration the echo panics at once: start names the fault
    // and leaves no record behind.
    e = error_of([&] { resident::start(c, kChip, kCore, echo_image(), kKeep, nullptr, milliseconds(5000)); });
    assert_non_null(strstr(e.c_str(), "FAULT"));
    assert_int_equal(resident::list(c).size(), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resident_runs_answers_and_stops),
        cmocka_unit_test(test_resident_refuses_bad_requests),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
