// The kernels running on a host-model machine (host_cluster.h). Each runs
// the firmware's own kernel, built for the host board (host_kernels.h), on a
// fiber of its own (a stack and a ucontext), and one core runs at a time: a
// kernel runs until it would sleep in WFI, then switches back to the
// scheduler, which serves the chips' devices and runs the next kernel due.
// So a run is cooperative, as one host CPU shared by every core, and the
// firmware's waits are where it yields. A switch costs a few hundred
// nanoseconds; a thread per kernel woken by a condition variable cost tens
// of microseconds, most of a galaxy's op.
//
// A kernel follows the launch protocol of the boot firmware
// (boot/launch_protocol.h) on its core's control block: RUNNING when it
// starts, DONE or FAULT and done_seq when it ends, so the host reads a model
// core the way it reads a QEMU one.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include <functional>
#include <memory>
#include <vector>

#include "host_board.h"
#include "model/host_kernels.h"

namespace weft::model {

class KernelFibers {
public:
    KernelFibers() = default;
    KernelFibers(const KernelFibers&) = delete;
    KernelFibers& operator=(const KernelFibers&) = delete;
    // Abandons every kernel still running: each leaves at its next sleep.
    ~KernelFibers();

    // Starts `main` on `core` for the launch its control block posts now
    // (LaunchRequest::seq), with the arguments at `args` (host memory). It
    // first runs in the next round.
    void start(host_board::Core& core, HostKernelMain main, const uint32_t* args, uint32_t arg_count);
    // Whether a kernel asleep on `core` (its sleep ending by itself at
    // `deadline`, in ticks) has cause to look again: a doorbell, or its timer.
    using Due = std::function<bool(const host_board::Core& core, uint64_t deadline)>;
    // Runs each kernel still running that is due (or new, or being
    // stopped) once, until it sleeps or ends. Returns how many ran.
    size_t round(const Due& due);
    // The earliest deadline of a sleeping kernel, or UINT64_MAX.
    uint64_t next_deadline() const;
    // Ends the kernels still running on `core` by force, as a reset would:
    // FAULT with abi::kPanicStopped.
    void abandon(const host_board::Core& core);

private:
    struct Run {
        KernelFibers* owner = nullptr;
        host_board::Core* core = nullptr;
        HostKernelMain main = nullptr;
        const uint32_t* args = nullptr;
        uint32_t arg_count = 0;
        bool done = false, abandoned = false, started = false;
        std::function<void()> previous_sleep;  // the core's, back when the kernel ends
        ucontext_t context{};
        void* stack = nullptr;
        ~Run();
    };
    // Thrown from a sleep of an abandoned kernel, to unwind it.
    struct Abandoned {};

    static void entry(unsigned high, unsigned low);
    void execute(Run& run);
    // The scheduler switches to `run` until it sleeps or ends.
    void give(Run& run);
    // The kernel of `run`, about to sleep, switches back to the scheduler.
    void yield(Run& run);
    void reap();

    ucontext_t scheduler_{};
    // The scheduler's stack, as the sanitizer must be told at each switch back.
    const void* scheduler_stack_ = nullptr;
    size_t scheduler_stack_size_ = 0;
    std::vector<std::unique_ptr<Run>> runs_;
};

}  // namespace weft::model
