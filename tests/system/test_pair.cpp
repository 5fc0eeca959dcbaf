// System tests on the `pair` cluster (2 chips, one link): real QEMU chips,
// the real bridge, kernels built with the cross toolchain.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "ccl/op_case.h"
#include "ccl/runner.h"
#include "driver/link_test.h"
#include "system_test.h"
#include "test_kernels.h"
#include "weft/abi/pattern.h"

using namespace weft;
using namespace weft::test;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Cluster> g_cluster;

// True once `ready` holds, trying for up to 3 s.
template <typename Ready>
bool eventually(Ready ready) {
    for (int i = 0; i < 60; ++i) {
        if (ready()) return true;
        std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
}

std::string g_name = "pair";  // argv[1]: pair, pair-rv32

int setup(void**) { return start_for_group(g_name, &g_cluster); }

uint32_t worker(uint32_t i) { return g_cluster->board().worker_core(i); }

int teardown(void**) {
    g_cluster.reset();
    return 0;
}

// chip 0 port E <-> chip 1 port W in pair.yaml (and pair-rv32.yaml)
constexpr uint32_t kPortN = 0, kPortE = 1, kPortW = 3;

void test_boot(void**) {
    Cluster& c = *g_cluster;
    assert_int_equal(c.size(), 2);
    for (uint32_t chip = 0; chip < 2; ++chip) {
        assert_int_equal(c.chip(chip).control().host.chip_id, chip);
        for (uint32_t core = 0; core < c.board().cores.size(); ++core)
            assert_true(c.chip(chip).status(core).state == abi::kHartReady ||
                        c.chip(chip).status(core).state == abi::kHartDone);
    }
    auto links = c.links();
    assert_int_equal(links.size(), 1);
    assert_int_equal(links[0].chip_a, 0);
    assert_int_equal(links[0].port_a, kPortE);
    assert_int_equal(links[0].chip_b, 1);
    assert_int_equal(links[0].port_b, kPortW);
    assert_int_equal(c.chip(0).control().port[kPortE].state, abi::kLinkUp);
    assert_int_equal(c.chip(0).control().port[kPortN].state, abi::kLinkUnwired);
}

// A kernel on chip 0 sends a buffer over Ethernet into chip 1's L1 and signals
// a semaphore there; chip 1's kernel waits for it and checks every word.
void test_eth_buffer_into_l1(void**) {
    Cluster& c = *g_cluster;
    const BoardInfo& b = c.board();
    const uint32_t len = 48 * 1024, seed = 77;
    const uint32_t worker = 5;
    const uint64_t src = b.dram.base + 0x100000;
    const uint64_t dst = b.l1_free(worker).base + 0x1000;
    const uint64_t sem = b.l1_free(worker).base;
    std::vector<uint32_t> data(len / 4);
    for (uint32_t i = 0; i < data.size(); ++i) data[i] = abi::pattern_word(seed, i);
    c.chip(0).write(src, data.data(), len);
    c.chip(1).write32(sem, 0);
    memset(c.chip(1).host_ptr(dst, len), 0, len);

    Launch recv = kernels::recv_check(b, 1, worker, sem, 1, dst, len, seed);
    Launch send = kernels::eth_send(b, 0, b.ports[kPortE].core, kPortE, src, dst, len, 16 * 1024, 1, sem, 1);
    auto results = c.run({recv, send}, milliseconds(10000));
    assert_int_equal(results[0].return_code, 0);  // chip 1 found every word intact
    assert_int_equal(results[1].return_code, 0);
    assert_memory_equal(c.chip(1).host_ptr(dst, len), data.data(), len);
    auto counters = c.counters();
    assert_true(counters["links"][0]["a_to_b"]["bytes"].get<uint64_t>() >= len + 4);
}

void test_kernel_relocates_on_every_core(void**) {
    Cluster& c = *g_cluster;
    std::vector<Launch> all;
    for (uint32_t chip = 0; chip < 2; ++chip)
        for (uint32_t core = 0; core < c.board().cores.size(); ++core)
            all.push_back(test::reloc_probe(c.board(), chip, core));
    for (const KernelResult& r : c.run(all, milliseconds(10000))) assert_int_equal(r.return_code, 1321);
}

void test_noc_and_math_engines(void**) {
    Cluster& c = *g_cluster;
    const BoardInfo& b = c.board();
    Chip& chip = c.chip(0);
    const uint32_t core = worker(2), len = 4096, count = 1024;
    const uint64_t src = b.dram.base, dst = b.dram.base + 0x10000, sem = b.l1_free(core).base;
    const uint64_t mcast_off = b.code_size + 0x2000;  // inside every core's free L1
    const uint64_t fa = b.dram.base + 0x20000, fb = b.dram.base + 0x30000, out = b.dram.base + 0x40000;
    std::vector<uint32_t> data(len / 4);
    for (uint32_t i = 0; i < data.size(); ++i) data[i] = abi::pattern_word(5, i);
    chip.write(src, data.data(), len);
    std::vector<float> x(count), y(count);
    for (uint32_t i = 0; i < count; ++i) x[i] = float(i) * 0.5f, y[i] = 1000.0f - float(i);
    chip.write(fa, x.data(), count * 4);
    chip.write(fb, y.data(), count * 4);
    chip.write32(sem, 0);
    const uint32_t first_two = (1u << worker(0)) | (1u << worker(1));  // the multicast's cores
    test_abi::NocMathArgs args{src, dst,       sem,           mcast_off, fa,    fb, out,
                               len, first_two, abi::kMathMax, abi::kF32, count, 0};
    auto r = c.run({test::noc_math(c.board(), 0, core, args)}, milliseconds(10000));
    assert_int_equal(r[0].return_code, 0);
    assert_memory_equal(chip.host_ptr(dst, len), data.data(), len);
    assert_memory_equal(chip.host_ptr(b.cores[worker(0)].l1.base + mcast_off, len), data.data(), len);
    assert_memory_equal(chip.host_ptr(b.cores[worker(1)].l1.base + mcast_off, len), data.data(), len);
    assert_int_equal(chip.read32(sem), 3);
    const float* o = reinterpret_cast<const float*>(chip.host_ptr(out, count * 4));
    for (uint32_t i = 0; i < count; ++i) assert_true(o[i] == std::max(x[i], y[i]));
}

void expect_fault(uint32_t kind, const char* what) {
    Cluster& c = *g_cluster;
    std::string msg;
    try {
        c.run({test::fault_kernel(c.board(), 1, worker(3), kind)}, milliseconds(10000));
    } catch (const FaultError& e) {
        msg = e.what();
    }
    if (!contains(msg, what)) fail_msg("fault kind %u: expected '%s' in:\n%s", kind, what, msg.c_str());
    assert_true(contains(msg, "chip 1 core " + std::to_string(worker(3)) + " (worker) kernel 'fault' FAULT"));
}

void test_faults_are_reported_not_hung(void**) {
    expect_fault(0, "load access fault (mcause 5)");
    // The faulting pc as a function and line of the kernel's source.
    expect_fault(0, " at tests/firmware/kernels/fault.cpp:13");
    expect_fault(1, "illegal instruction (mcause 2)");
    expect_fault(1, " at tests/firmware/kernels/fault.cpp:15");
    expect_fault(2,
                 ("NoC ring " + std::to_string(worker(3)) + " refused command #0: address outside the chip").c_str());
    expect_fault(2, "called from 0x");  // a panic names its caller too
    expect_fault(2, "kernel_main at tests/firmware/kernels/fault.cpp:18");
    // The core went back to its mailbox and takes the next kernel.
    auto r = g_cluster->run({test::reloc_probe(g_cluster->board(), 1, worker(3))}, milliseconds(10000));
    assert_int_equal(r[0].return_code, 1321);
}

void test_hang_report_within_deadline(void**) {
    Cluster& c = *g_cluster;
    const uint64_t sem = c.board().l1_free(worker(1)).base + 0x40;
    c.chip(0).write32(sem, 0);
    Launch l = test::wait_sem(c.board(), 0, worker(1), sem, 1);
    std::string report;
    auto t0 = std::chrono::steady_clock::now();
    try {
        c.run({l}, milliseconds(1500));
    } catch (const TimeoutError& e) {
        report = e.what();
    }
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    assert_true(took < 5.0);
    char expect[128];
    snprintf(expect, sizeof expect, "waiting on semaphore 0x%llx to reach 1 (now 0)", (unsigned long long)sem);
    if (!contains(report, expect)) fail_msg("hang report lacks '%s':\n%s", expect, report.c_str());
    assert_true(contains(report, "(asleep on its doorbell)"));  // it sleeps, it does not spin
    assert_true(contains(report, "core " + std::to_string(worker(1)) + " worker"));
    assert_true(contains(report, "RUNNING"));
    assert_true(contains(report, "<-- not finished"));
    // The stuck chip's cable, as TT-link sees it.
    if (!contains(report, "TT-link chip 0.E <-> chip 1.W: up (cable up), mode ttlink, retrains") ||
        !contains(report, "a>b frames ") || !contains(report, "faults: drop 0 ber 0"))
        fail_msg("hang report lacks the TT-link state of chip 0's cable:\n%s", report.c_str());
    // The driver stopped the stuck kernel before it reported: the core takes
    // the next kernel, no reset needed, and says how the last one ended.
    assert_true(contains(report, "stopped 1 kernel(s) still running"));
    assert_int_equal(c.chip(0).status(worker(1)).state, abi::kHartFault);
    assert_true(contains(c.chip(0).describe_fault(worker(1)), "stopped by the host"));
    auto r = c.run({test::reloc_probe(c.board(), 0, worker(1))}, milliseconds(5000));
    assert_int_equal(r[0].return_code, 1321);
    // A reset through QMP frees a core too; it takes the next kernel.
    c.reset_chip(0);
    assert_int_equal(c.chip(0).status(worker(1)).state, abi::kHartReady);
    assert_true(contains(c.events().dump(), "chip 0 reset by a client"));
    r = c.run({test::reloc_probe(c.board(), 0, worker(1))}, milliseconds(5000));
    assert_int_equal(r[0].return_code, 1321);
}

// A pulled cable fails nothing by itself (TT-link waits for it to come back):
// a kernel waiting on it ends at its deadline with a report naming the link.
void test_dead_link_is_an_error(void**) {
    Cluster& c = *g_cluster;
    c.set_link(0, kPortE, false);
    assert_int_equal(c.chip(0).control().port[kPortE].state, abi::kLinkDown);
    Launch l = kernels::ping_pong(c.board(), 0, c.board().ports[kPortE].core, kPortE, true, 1,
                                  c.board().l1_free(1).base, c.board().l1_free(3).base);
    std::string msg;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        c.run({l}, milliseconds(1500));
    } catch (const TimeoutError& e) {
        msg = e.what();
    } catch (const Error& e) {
        msg = std::string("not a timeout: ") + e.what();
    }
    assert_true(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    if (!contains(msg, "E:DOWN->1.W") || !contains(msg, "kernel 'ping_pong'")) fail_msg("got: %s", msg.c_str());
    c.reset_chip(0);  // frees the stuck core; its queued word goes out once the cable is back
    c.set_link(0, kPortE, true);
    auto r = c.run({test::reloc_probe(c.board(), 0, c.board().ports[kPortE].core)}, milliseconds(5000));
    assert_int_equal(r[0].return_code, 1321);
    test_eth_buffer_into_l1(nullptr);
}

// The cable pulled while a transfer runs and plugged back: every byte arrives,
// and every frame exactly once (delivered frames = frames the transfer needs).
// A second cluster in the same run directory is refused while the first runs
// (two 'weft up' at once left a bridge and its QEMUs nobody could reach).
void test_second_bridge_in_a_run_dir_is_refused(void**) {
    Cluster& c = *g_cluster;
    std::string error;
    try {
        spawn_bridge(source_dir() + "/clusters/pair.yaml", c.run_dir(), 5000, getpid());
    } catch (const Error& e) {
        error = e.what();
    }
    if (!contains(error, "a cluster is already up (or starting) in " + c.run_dir()))
        fail_msg("second bridge: %s", error.c_str());
    assert_int_equal(c.topology().chips(), 2);  // the first is untouched
}

// Two clients on one cluster: the first to run an op holds it; the second
// waits its turn, then is told who holds it; the claim goes with its holder.
void test_second_client_waits_for_the_claim(void**) {
    Cluster& c = *g_cluster;
    c.release();
    c.claim("test_pair");
    auto other = Cluster::attach(c.run_dir());
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        other->claim("a second client", milliseconds(300));
    } catch (const Error& e) {
        error = e.what();
    }
    const auto waited = std::chrono::steady_clock::now() - t0;
    if (!contains(error, "in use by test_pair (pid " + std::to_string(getpid()) + ")"))
        fail_msg("second claim: %s", error.c_str());
    assert_true(waited >= milliseconds(300) && waited < milliseconds(3000));
    // A client that never claims may still look: status is not an op.
    assert_int_equal(other->topology().chips(), 2);
    // The holder lets go; then a holder that goes away takes its claim with it.
    c.release();
    other->claim("a second client", milliseconds(2000));
    other.reset();
    auto r = c.run({test::reloc_probe(c.board(), 0, worker(1))}, milliseconds(5000));
    assert_int_equal(r.size(), 1);
}

// The typed topology a driver gets from the bridge: the file's mesh, each
// chip's place in it, and the cable's state as it is now.
void test_topology_from_the_bridge(void**) {
    Cluster& c = *g_cluster;
    ClusterTopology t = c.topology();
    assert_int_equal(t.chips(), 2);
    assert_int_equal(t.meshes().size(), 1);
    assert_int_equal(t.mesh(0).width, 2);
    assert_int_equal(t.mesh(0).height, 1);
    assert_string_equal(t.mesh(0).topology.c_str(), "line");
    assert_int_equal(t.coord(1).x, 1);
    assert_int_equal(t.exit_nodes(0).size(), 0);
    assert_int_equal(t.links().size(), 1);
    assert_true(t.links()[0].up);
    c.set_link(0, kPortE, false);
    t = c.topology();
    assert_false(t.links()[0].up);
    c.set_link(0, kPortE, true);
    assert_true(c.topology().links()[0].up);
}

void test_link_pulled_and_restored_mid_transfer(void**) {
    Cluster& c = *g_cluster;
    const BoardInfo& b = c.board();
    // Many small commands, so the transfer lasts long enough (tens of ms) for the
    // test to pull the cable mid-way; on a host loaded enough that the pull
    // still lands after the end, the transfer is run again (three tries).
    const uint32_t size = 64u << 20, packet = 1024;
    const uint64_t src = b.dram.base, dst = b.dram.base + size, flag = b.l1_free(b.ports[kPortW].core).base;
    std::vector<uint8_t> data(size), got(size);
    for (uint32_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
    c.chip(0).write(src, data.data(), size);
    std::vector<uint8_t> zero(size, 0);
    nlohmann::json before;
    uint32_t at_pull = 0, while_down = 0;
    for (int attempt = 1;; ++attempt) {
        c.chip(1).write(dst, zero.data(), size);
        c.chip(1).write32(flag, 0);
        before = c.counters()["links"][0];
        const abi::EthRing& ring = c.chip(0).control().eth[kPortE];
        const uint32_t head0 = ring.head;
        auto launched =
            c.launch_all({kernels::eth_send(b, 0, b.ports[kPortE].core, kPortE, src, dst, size, packet, 1, flag, 77)});
        const auto t0 = std::chrono::steady_clock::now();
        while (ring.head - head0 < 64) {
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20))
                fail_msg("the transfer never started");
            std::this_thread::yield();  // a sleep may oversleep by a whole transfer on a loaded host
        }
        c.set_link(0, kPortE, false);
        at_pull = ring.head - head0;
        std::this_thread::sleep_for(milliseconds(300));
        while_down = ring.head - head0;
        c.set_link(0, kPortE, true);
        auto r = c.wait_all(launched, milliseconds(60000));
        assert_int_equal(r[0].return_code, 0);
        if (at_pull < size / packet) break;  // really mid-transfer
        if (attempt == 3)
            fail_msg("the cable was pulled after the transfer ended in all 3 tries: the host is too loaded");
    }
    assert_true(while_down < size / packet);
    c.chip(1).read(dst, got.data(), size);
    assert_int_equal(c.chip(1).read32(flag), 77);
    assert_memory_equal(got.data(), data.data(), size);
    const nlohmann::json after = c.counters()["links"][0];
    const char* dir = after["a"]["chip"] == 0 ? "a_to_b" : "b_to_a";
    const uint64_t delivered = after[dir]["delivered"].get<uint64_t>() - before[dir]["delivered"].get<uint64_t>();
    assert_int_equal(delivered, size / packet + 1);  // the packets and the flag, none twice
    assert_true(after["retrains"].get<uint64_t>() > before["retrains"].get<uint64_t>());
    // The bridge logs the retrain in events.log (it polls every 100 ms).
    const auto logged = [&] {
        const nlohmann::json events = c.events();  // kept: the loop must not outlive it
        for (const auto& e : events["events"])
            if (e["kind"] == "retrain" && e["link"] == "chip 0.E <-> chip 1.W" &&
                e["retrains"].get<uint64_t>() >= after["retrains"].get<uint64_t>())
                return true;
        return false;
    };
    const auto t1 = std::chrono::steady_clock::now();
    while (!logged()) {
        if (std::chrono::steady_clock::now() - t1 > std::chrono::seconds(3))
            fail_msg("no retrain event of chip 0.E <-> chip 1.W in events.log; the latest: %s",
                     c.events()["events"].dump().c_str());
        std::this_thread::sleep_for(milliseconds(50));
    }
}

// With the cores' fallback alarm set past any op (WEFT_ACTIVE_WAKE_US), an
// op ends on doorbells alone: one waiting on a ring nobody sends (its own
// commands' completion, the EDM's handshake resend) hung here. The next
// runner without the variable puts the firmware's default back.
void test_ops_end_on_doorbells_alone(void**) {
    Cluster& c = *g_cluster;
    setenv("WEFT_ACTIVE_WAKE_US", "4294967295", 1);
    for (const char* transport : {"edm", "fabric"}) {
        ccl::RunnerOptions o;
        o.transport = transport;
        ccl::CollectiveRunner run(c, o);
        for (uint32_t i = 0; i < 6; ++i) {
            ccl::OpRequest r;
            r.op = ccl::Collective::kAllGather;
            r.algo = "ring";
            r.bytes = 64 * 1024;
            try {
                assert_int_equal(ccl::run_case(run, c, r, i).check.wrong, 0);
            } catch (const Error& e) {
                unsetenv("WEFT_ACTIVE_WAKE_US");
                fail_msg("op %u over the %s needed the fallback alarm: %s", i, transport, e.what());
            }
        }
    }
    unsetenv("WEFT_ACTIVE_WAKE_US");
    ccl::CollectiveRunner plain(c, ccl::RunnerOptions{});
    for (uint32_t chip = 0; chip < c.size(); ++chip) assert_int_equal(c.chip(chip).control().host.active_wake_us, 0);
}

// Runs last: kills a chip's QEMU and checks the driver says so, then that
// shutdown leaves no process or socket behind.
void test_chip_crash_then_clean_shutdown(void**) {
    Cluster& c = *g_cluster;
    const int victim = c.info()["chips"][1]["pid"];
    const int survivor = c.info()["chips"][0]["pid"];
    const int bridge = c.info()["bridge_pid"];
    const uint64_t sem = c.board().l1_free(worker(0)).base;
    c.chip(1).write32(sem, 0);
    auto launched = c.launch_all({test::wait_sem(c.board(), 1, worker(0), sem, 1)});
    kill(victim, SIGKILL);
    std::string msg;
    try {
        c.wait_all(launched, milliseconds(10000));
    } catch (const TimeoutError& e) {
        fail_msg("a dead chip must be reported as such, not as a timeout:\n%s", e.what());
    } catch (const Error& e) {
        msg = e.what();
    }
    if (!contains(msg, "chip 1 died")) fail_msg("got: %s", msg.c_str());
    assert_int_equal(c.links()[0].up, false);
    // The status says why the link is down, and the death is an event.
    assert_string_equal(c.counters()["links"][0]["state"].get<std::string>().c_str(), "down (chip 1 dead)");
    assert_true(eventually([&] { return contains(c.events().dump(), "chip 1: QEMU"); }));
    std::string linktest;
    try {
        run_link_test(c, LinkTestOptions{});
    } catch (const Error& e) {
        linktest = e.what();
    }
    if (!contains(linktest, "is down (chip 1 is dead")) fail_msg("linktest with a dead chip: %s", linktest.c_str());
    // An op, a launch and a reset there name the dead chip, and what to do.
    const auto error_of = [](const std::function<void()>& f) -> std::string {
        try {
            f();
        } catch (const Error& e) {
            return e.what();
        }
        return "(no error)";
    };
    const std::string op = error_of([&] { ccl::CollectiveRunner run(c, ccl::RunnerOptions{}); });
    if (!contains(op, "chip 1 died (killed by signal Killed") || !contains(op, "weft down and weft up"))
        fail_msg("an op on a dead chip: %s", op.c_str());
    const std::string launch = error_of([&] { c.launch_all({test::wait_sem(c.board(), 1, worker(0), sem, 1)}); });
    if (!contains(launch, "chip 1 died") || !contains(launch, "no kernel runs there"))
        fail_msg("a launch on a dead chip: %s", launch.c_str());
    const std::string reset = error_of([&] { c.reset_chip(1); });
    if (!contains(reset, "a reset restarts a chip's cores, not its QEMU"))
        fail_msg("a reset of a dead chip: %s", reset.c_str());
    const std::string run_dir = c.run_dir();
    g_cluster.reset();  // shuts the cluster down
    assert_true(process_gone_soon(survivor));
    assert_true(process_gone_soon(bridge));
    struct stat st;
    assert_int_not_equal(stat((run_dir + "/control.sock").c_str(), &st), 0);
}

// A program that started a cluster and then died without shutting it down:
// the cluster stops by itself and takes its chips with it.
void test_owner_crash_stops_cluster(void**) {
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t child = fork();
    if (child == 0) {
        close(pipefd[0]);
        try {
            auto c = Cluster::start(source_dir() + "/clusters/pair.yaml",
                                    "/tmp/weft-test-" + std::to_string(getpid()) + "-orphan");
            int pids[3] = {c->info()["bridge_pid"], c->info()["chips"][0]["pid"], c->info()["chips"][1]["pid"]};
            if (write(pipefd[1], pids, sizeof pids) != sizeof pids) _exit(2);
            raise(SIGKILL);  // no destructor, no shutdown
        } catch (...) {
        }
        _exit(1);
    }
    close(pipefd[1]);
    int pids[3] = {};
    ssize_t n = read(pipefd[0], pids, sizeof pids);
    close(pipefd[0]);
    int status = 0;
    waitpid(child, &status, 0);
    assert_int_equal(n, sizeof pids);
    for (int pid : pids) assert_true(process_gone_soon(pid));
    std::filesystem::remove_all("/tmp/weft-test-" + std::to_string(child) + "-orphan");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_name = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boot),
        cmocka_unit_test(test_eth_buffer_into_l1),
        cmocka_unit_test(test_kernel_relocates_on_every_core),
        cmocka_unit_test(test_noc_and_math_engines),
        cmocka_unit_test(test_faults_are_reported_not_hung),
        cmocka_unit_test(test_hang_report_within_deadline),
        cmocka_unit_test(test_dead_link_is_an_error),
        cmocka_unit_test(test_topology_from_the_bridge),
        cmocka_unit_test(test_second_bridge_in_a_run_dir_is_refused),
        cmocka_unit_test(test_second_client_waits_for_the_claim),
        cmocka_unit_test(test_link_pulled_and_restored_mid_transfer),
        cmocka_unit_test(test_ops_end_on_doorbells_alone),
        cmocka_unit_test(test_chip_crash_then_clean_shutdown),
        cmocka_unit_test(test_owner_crash_stops_cluster),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
