#include "small_ops.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include "ccl/op_case.h"
#include "host_cpu.h"
#include "test_kernels.h"

namespace weft::bench {
namespace {

constexpr uint32_t kTimerUs = 200;  // the alarm the floor's waiting cores wake on
constexpr auto kFloorFor = std::chrono::milliseconds(600);

// Chip 0's QEMU CPU over kFloorFor, with `launches` running (none: idle).
double chip0_cpu(Cluster& c, const std::vector<Launch>& launches) {
    const int pid = chip_pids(c).at(0);
    const auto launched = launches.empty() ? std::vector<std::pair<CoreRef, uint32_t>>{} : c.launch_all(launches);
    const double cpu0 = cpu_seconds(pid);
    std::this_thread::sleep_for(kFloorFor);
    const double cpu = cpu_seconds(pid) - cpu0;
    if (!launched.empty()) c.stop_kernels(launched);
    return cpu;
}

// Host CPU per timer wake-up of one core: one of chip 0's worker cores waits
// on a semaphore nobody signals, woken by its alarm every kTimerUs, against
// the same chip idle.
double timer_wakeup_us(Cluster& c) {
    const BoardInfo& b = c.board();
    // One core: several cores' alarms fall due together and share one
    // wake-up of the QEMU, while each doorbell is a wake-up of its own.
    const uint32_t core = b.worker_core(0);
    const uint64_t sem = b.cores[core].l1.base + b.cores[core].l1.size - 64;  // past anything an op placed
    c.chip(0).write(sem, "\0\0\0\0", 4);
    const std::vector<Launch> waiters{test::wait_sem(b, 0, core, sem, 1)};
    abi::HostArea& host = c.chip(0).control().host;
    const uint32_t saved = host.active_wake_us;
    const double idle = chip0_cpu(c, {});
    host.active_wake_us = kTimerUs;
    const double busy = chip0_cpu(c, waiters);
    host.active_wake_us = saved;
    const double wakeups = double(waiters.size()) * std::chrono::duration<double>(kFloorFor).count() * 1e6 / kTimerUs;
    return (busy - idle) / wakeups * 1e6;
}

}  // namespace

nlohmann::json small_ops(Cluster& c, ccl::CollectiveRunner& run, uint64_t bytes, double mpi_us) {
    constexpr int kRuns = 30;
    const double floor_us = timer_wakeup_us(c);
    const uint32_t n = static_cast<uint32_t>(c.size());
    std::printf("\nsmall ops: all_reduce of %llu B on %u chips, %d runs each; a core woken by its own timer costs the\n"
                "QEMUs %.1f us of host CPU (the floor)%s\n",
                (unsigned long long)bytes, n, kRuns, floor_us, mpi_us > 0 ? "" : "; no Open MPI time to compare");
    std::printf("%-20s %10s %9s %9s %8s %10s %10s %9s\n", "algo", "time(us)", "doorbells", "per c/s", "steps",
                "CPU/bell", "x floor", "x MPI");
    nlohmann::json rows = nlohmann::json::array();
    for (const std::string& algo : ccl::algorithms(ccl::Collective::kAllReduce)) {
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllReduce;
        r.algo = algo;
        r.bytes = bytes;
        ccl::CaseResult first;
        try {
            first = ccl::run_case(run, c, r, 1, true);
        } catch (const Error& e) {
            std::printf("%-20s does not run here: %s\n", algo.c_str(), e.what());
            continue;
        }
        const double cpu0 = cpu_seconds(chip_pids(c));
        double total = 0;
        for (int i = 0; i < kRuns; ++i) total += ccl::run_case(run, c, r, 1, false).timing.seconds;
        const double cpu = cpu_seconds(chip_pids(c)) - cpu0;
        const double us = total / kRuns * 1e6, bells = double(first.traffic.doorbells);
        const double steps = std::max(1.0, first.timing.features.critical_path);
        const double per_bell = bells > 0 ? cpu / kRuns / bells * 1e6 : 0;
        std::printf("%-20s %10.0f %9.0f %9.2f %8.0f %9.1fus %10.2f %9s\n", first.timing.algo.c_str(), us, bells,
                    bells / n / steps, steps, per_bell, floor_us > 0 ? per_bell / floor_us : 0.0,
                    mpi_us > 0 ? std::to_string(int(us / mpi_us)).c_str() : "-");
        rows.push_back({{"algo", first.timing.algo},
                        {"time_us", us},
                        {"doorbells", bells},
                        {"steps", steps},
                        {"qemu_cpu_per_doorbell_us", per_bell},
                        {"wrong", first.check.wrong}});
    }
    return {{"bytes", bytes}, {"timer_wakeup_us", floor_us}, {"mpi_us", mpi_us}, {"algorithms", rows}};
}

}  // namespace weft::bench
