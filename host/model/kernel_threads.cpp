#include "model/kernel_threads.h"

#include <stdio.h>

#include <exception>

#include "boot/launch_protocol.h"
#include "weft/abi/fault.h"

namespace weft::model {

KernelThreads::~KernelThreads() {
    for (auto& run : runs_) {
        if (run->done) continue;
        run->abandoned = true;
        give(*run);
    }
    for (auto& run : runs_) run->thread.join();
}

void KernelThreads::start(host_board::Core& core, HostKernelMain main, const uint32_t* args, uint32_t arg_count) {
    reap();
    auto made = std::make_unique<Run>();
    Run& run = *made;
    run.core = &core;
    run.main = main;
    run.args = args;
    run.arg_count = arg_count;
    run.previous_sleep = core.on_sleep;
    core.on_sleep = [this, &run] { yield(run); };
    runs_.push_back(std::move(made));
    run.thread = std::thread([this, &run] { body(run); });
}

size_t KernelThreads::round() {
    size_t ran = 0;
    for (auto& run : runs_) {
        if (run->done) continue;
        give(*run);
        ++ran;
    }
    return ran;
}

size_t KernelThreads::running() const {
    size_t n = 0;
    for (const auto& run : runs_) n += !run->done;
    return n;
}

void KernelThreads::abandon(const host_board::Core& core) {
    for (auto& run : runs_) {
        if (run->done || run->core != &core) continue;
        run->abandoned = true;
        give(*run);
    }
}

void KernelThreads::body(Run& run) {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        run.turn.wait(lock, [&] { return turn_ == &run; });
    }
    execute(run);
    std::lock_guard<std::mutex> lock(mutex_);
    run.done = true;
    turn_ = nullptr;
    scheduler_.notify_one();
}

// As the boot firmware serves a launch (boot_main.cpp): a panic is its trap.
void KernelThreads::execute(Run& run) {
    host_board::Core& core = *run.core;
    host_board::Enter entered(core);
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

void KernelThreads::give(Run& run) {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_ = &run;
    run.turn.notify_one();
    scheduler_.wait(lock, [&] { return turn_ == nullptr; });
}

void KernelThreads::yield(Run& run) {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_ = nullptr;
    scheduler_.notify_one();
    run.turn.wait(lock, [&] { return turn_ == &run; });
    if (run.abandoned) throw Abandoned{};
}

void KernelThreads::reap() {
    for (size_t i = 0; i < runs_.size();) {
        if (!runs_[i]->done) {
            ++i;
            continue;
        }
        runs_[i]->thread.join();
        runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(i));
    }
}

}  // namespace weft::model
