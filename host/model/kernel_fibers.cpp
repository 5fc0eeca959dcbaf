#include "model/kernel_fibers.h"

#include <stdio.h>
#include <sys/mman.h>

#include <algorithm>
#include <exception>
#include <new>

#include "boot/launch_protocol.h"
#include "weft/abi/fault.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define WEFT_ASAN_FIBERS 1
#endif

namespace weft::model {
namespace {

// Room for a kernel's frames and the host HAL's under the sanitizers; only
// the pages a kernel touches are ever backed.
constexpr size_t kStackBytes = size_t(1) << 20;

void start_switch(void** fake_stack, const void* bottom, size_t size) {
#ifdef WEFT_ASAN_FIBERS
    __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#else
    (void)fake_stack, (void)bottom, (void)size;
#endif
}

void finish_switch(void* fake_stack, const void** bottom, size_t* size) {
#ifdef WEFT_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fake_stack, bottom, size);
#else
    (void)fake_stack, (void)bottom, (void)size;
#endif
}

}  // namespace

KernelFibers::Run::~Run() {
    if (stack) munmap(stack, kStackBytes);
}

KernelFibers::~KernelFibers() {
    for (auto& run : runs_) {
        if (run->done) continue;
        run->abandoned = true;
        give(*run);
    }
}

void KernelFibers::start(host_board::Core& core, HostKernelMain main, const uint32_t* args, uint32_t arg_count) {
    reap();
    auto made = std::make_unique<Run>();
    Run& run = *made;
    run.owner = this;
    run.core = &core;
    run.main = main;
    run.args = args;
    run.arg_count = arg_count;
    run.stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (run.stack == MAP_FAILED) {
        run.stack = nullptr;
        throw std::bad_alloc();
    }
    getcontext(&run.context);
    run.context.uc_stack.ss_sp = run.stack;
    run.context.uc_stack.ss_size = kStackBytes;
    run.context.uc_link = &scheduler_;  // where the fiber goes when entry returns
    // makecontext passes ints: the Run's address in two halves.
    const auto at = reinterpret_cast<uintptr_t>(&run);
    makecontext(&run.context, reinterpret_cast<void (*)()>(&KernelFibers::entry), 2, unsigned(at >> 32),
                unsigned(at & 0xffffffffu));
    run.previous_sleep = core.on_sleep;
    core.on_sleep = [this, &run] { yield(run); };
    runs_.push_back(std::move(made));
}

size_t KernelFibers::round(const Due& due) {
    size_t ran = 0;
    for (size_t i = 0; i < runs_.size(); ++i) {
        Run& run = *runs_[i];
        if (run.done) continue;
        const host_board::Core& core = *run.core;
        const bool stopping = core.control.host.stop[core.id] == core.control.hart[core.id].running_seq;
        if (run.started && !stopping && !due(core, core.sleep_deadline)) continue;
        give(run);
        ++ran;
    }
    return ran;
}

uint64_t KernelFibers::next_deadline() const {
    uint64_t next = UINT64_MAX;
    for (const auto& run : runs_)
        if (!run->done && run->started) next = std::min(next, run->core->sleep_deadline);
    return next;
}

void KernelFibers::abandon(const host_board::Core& core) {
    for (auto& run : runs_) {
        if (run->done || run->core != &core) continue;
        run->abandoned = true;
        give(*run);
    }
}

void KernelFibers::entry(unsigned high, unsigned low) {
    Run& run = *reinterpret_cast<Run*>(uintptr_t(high) << 32 | low);
    KernelFibers& self = *run.owner;
    finish_switch(nullptr, &self.scheduler_stack_, &self.scheduler_stack_size_);
    self.execute(run);
    run.done = true;
    start_switch(nullptr, self.scheduler_stack_, self.scheduler_stack_size_);  // this fiber ends
}

// As the boot firmware serves a launch (boot_main.cpp): a panic is its trap.
void KernelFibers::execute(Run& run) {
    host_board::Core& core = *run.core;
    abi::HartStatus& status = core.control.hart[core.id];
    const boot::Snapshot launch = boot::begin_launch(core.control.host.launch[core.id], status);
    const uint64_t started = core.clock.now;
    try {
        if (run.abandoned) throw Abandoned{};
        const int rc = run.main(KernelArgs{run.args, run.arg_count});
        boot::post_done(status, launch.seq, rc, 0, core.clock.now - started);
    } catch (const host_board::Panic& p) {
        boot::post_fault(status, abi::kPanicCause, 0, p.detail, p.code);
    } catch (const Abandoned&) {
        boot::post_fault(status, abi::kPanicCause, 0, launch.seq, abi::kPanicStopped);
    } catch (const std::exception& e) {
        // The model itself failed under the kernel (an address outside the
        // chip's memory): a fault of the kernel's, with what happened on stderr.
        fprintf(stderr, "weft model: chip %u core %u: %s\n", core.control.host.chip_id, core.id, e.what());
        boot::post_fault(status, abi::kPanicCause, 0, 0, abi::kPanicBadArgs);
    }
    core.on_sleep = run.previous_sleep;
}

void KernelFibers::give(Run& run) {
    run.started = true;
    host_board::Enter entered(*run.core);  // the firmware's HAL acts for this core
    void* fake_stack = nullptr;
    start_switch(&fake_stack, run.stack, kStackBytes);
    swapcontext(&scheduler_, &run.context);
    finish_switch(fake_stack, nullptr, nullptr);
}

void KernelFibers::yield(Run& run) {
    void* fake_stack = nullptr;
    start_switch(&fake_stack, scheduler_stack_, scheduler_stack_size_);
    swapcontext(&run.context, &scheduler_);
    finish_switch(fake_stack, &scheduler_stack_, &scheduler_stack_size_);
    if (run.abandoned) throw Abandoned{};
}

void KernelFibers::reap() {
    runs_.erase(std::remove_if(runs_.begin(), runs_.end(), [](const auto& run) { return run->done; }), runs_.end());
}

}  // namespace weft::model
