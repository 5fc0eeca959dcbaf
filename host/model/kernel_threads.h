// The kernels running on a host-model machine (host_cluster.h). Each runs
// the firmware's own kernel, built for the host board (host_kernels.h), on a
// thread of its own, but only one core runs at a time: a kernel runs until it
// would sleep in WFI, then hands back to the scheduler, which serves the
// chips' devices and runs the next. So a run is cooperative, as one host CPU
// shared by every core, and the firmware's waits are where it yields.
//
// A kernel follows the launch protocol of the boot firmware
// (boot/launch_protocol.h) on its core's control block: RUNNING when it
// starts, DONE or FAULT and done_seq when it ends, so the host reads a model
// core the way it reads a QEMU one.
#pragma once
#include <stdint.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host_board.h"
#include "model/host_kernels.h"

namespace weft::model {

class KernelThreads {
public:
    KernelThreads() = default;
    KernelThreads(const KernelThreads&) = delete;
    KernelThreads& operator=(const KernelThreads&) = delete;
    // Abandons every kernel still running: each leaves at its next sleep.
    ~KernelThreads();

    // Starts `main` on `core` for the launch its control block posts now
    // (LaunchRequest::seq), with the arguments at `args` (host memory).
    void start(host_board::Core& core, HostKernelMain main, const uint32_t* args, uint32_t arg_count);
    // Runs each kernel still running once, until it sleeps or ends.
    // Returns how many ran.
    size_t round();
    // Kernels that have not ended.
    size_t running() const;
    // Ends the kernels still running on `core` by force, as a reset would:
    // FAULT with abi::kPanicStopped.
    void abandon(const host_board::Core& core);

private:
    struct Run {
        host_board::Core* core = nullptr;
        HostKernelMain main = nullptr;
        const uint32_t* args = nullptr;
        uint32_t arg_count = 0;
        bool done = false, abandoned = false;
        std::function<void()> previous_sleep;  // the core's, back when the kernel ends
        std::condition_variable turn;
        std::thread thread;
    };
    // Thrown from a sleep of an abandoned kernel, to unwind it.
    struct Abandoned {};

    void body(Run& run);
    void execute(Run& run);
    // The scheduler hands the CPU to `run` and waits until it sleeps or ends.
    void give(Run& run);
    // The kernel of `run`, about to sleep, hands the CPU back and waits its turn.
    void yield(Run& run);
    void reap();

    std::mutex mutex_;
    std::condition_variable scheduler_;
    Run* turn_ = nullptr;  // the kernel running now; nullptr: the scheduler
    std::vector<std::unique_ptr<Run>> runs_;
};

}  // namespace weft::model
