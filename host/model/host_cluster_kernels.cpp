// The host-model machine's kernels (host_cluster.h): launches, waits, stops
// and the hang report, as driver/cluster.cpp has them for QEMU, over the
// firmware's kernels built for the host (kernel_fibers.h).
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "common/names.h"
#include "driver/chip.h"
#include "driver/stall_clock.h"
#include "hal/timer.h"
#include "model/host_cluster.h"

namespace weft::model {
namespace {

using Launched = std::vector<std::pair<CoreRef, uint32_t>>;

std::vector<CoreRef> unfinished(HostCluster& m, const Launched& launched) {
    std::vector<CoreRef> out;
    for (const auto& [ref, seq] : launched)
        if (!finished(m, ref.chip, ref.core, seq)) out.push_back(ref);
    return out;
}

}  // namespace

abi::ChipControlBlock& HostCluster::control(uint32_t chip) { return memory(chip).control(); }

std::string HostCluster::describe_fault(uint32_t chip, uint32_t core) {
    const abi::HartStatus& st = control(chip).hart[core];
    if (st.state != abi::kHartFault) return "";
    return core_name(chip, core) + " (" + role_name(spec_.board.cores.at(core).role) + ") kernel '" +
           kernel_name(*this, chip, core) + "' FAULT: " +
           (st.mcause == abi::kPanicCause ? describe_panic(st.return_code, st.mtval) : describe_mcause(st.mcause));
}

// As Chip::load and Chip::launch post a launch, and the host copy of its
// arguments where the kernel finds them.
uint32_t HostCluster::post_launch(const Launch& l) {
    const BoardInfo& board = spec_.board;
    if (l.chip >= spec_.num_chips || l.core >= board.cores.size())
        throw Error("the host model of " + spec_.name + " has no " + core_name(l.chip, l.core));
    if (!l.kernel) throw Error("a launch on " + core_name(l.chip, l.core) + " names no kernel");
    if (!host_kernel(l.kernel->name))
        throw Error("kernel '" + l.kernel->name + "' is not built for the host model (it runs " + host_kernel_names() +
                    ")");
    if (const std::string resident = resident_name(*this, l.chip, l.core); !resident.empty())
        throw Error(core_name(l.chip, l.core) + " runs the resident image '" + resident + "' (stop it first)");
    abi::ChipControlBlock& cb = control(l.chip);
    if (cb.hart[l.core].state == abi::kHartRunning)
        throw Error(core_name(l.chip, l.core) + " is still running kernel '" + kernel_name(*this, l.chip, l.core) +
                    "'");
    if (l.args.size() * 4 > board.args_size)
        throw Error("kernel '" + l.kernel->name + "': " + std::to_string(l.args.size()) +
                    " argument words exceed the " + std::to_string(board.args_size) + "-byte argument block");
    write(l.chip, board.args_base(l.core), l.args.data(), l.args.size() * 4);
    abi::CoreImage& held = cb.host.image[l.core];
    held = abi::CoreImage{};
    std::snprintf(held.name, sizeof held.name, "%s", l.kernel->name.c_str());
    abi::LaunchRequest& req = cb.host.launch[l.core];
    req.args = board.args_base(l.core);
    req.arg_count = l.args.size();
    const uint32_t seq = req.seq + 1;
    __atomic_store_n(&req.seq, seq, __ATOMIC_RELEASE);
    return seq;
}

Launched HostCluster::launch_all(const std::vector<Launch>& launches) {
    if (!kernels_) {
        kernels_ = std::make_unique<KernelFibers>();
        clock_.kept_by_owner = true;
        started_ = std::chrono::steady_clock::now();
    }
    Launched launched;
    for (const Launch& l : launches) {
        const uint32_t seq = post_launch(l);
        const auto* args = reinterpret_cast<const uint32_t*>(bytes(l.chip, spec_.board.args_base(l.core), 4));
        kernels_->start(core(l.chip, l.core), host_kernel(l.kernel->name), args, static_cast<uint32_t>(l.args.size()));
        launched.push_back({{l.chip, l.core}, seq});
    }
    return launched;
}

// One turn of the whole machine: the devices serve what is queued, and each
// kernel with cause to look again runs until it sleeps. A kernel is woken as
// a doorbell would wake it (the devices touched its core or its port) or by
// its own timer. The clock keeps at least the host's time, and skips ahead
// to the next timer when nothing else would run.
void HostCluster::run_round() {
    if (!kernels_) return;
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started_);
    clock_.now = std::max<uint64_t>(clock_.now, static_cast<uint64_t>(us.count()) * timer::ticks_per_us());
    bool moved = false;
    while (step_devices()) moved = true;
    const std::vector<Touched> touched = take_touched();
    const auto due = [&](const host_board::Core& core, uint64_t deadline) {
        const Touched& t = touched[core.control.host.chip_id];
        const int port = spec_.board.cores[core.id].port;
        return ((t.cores | t.others) >> core.id & 1) || (port >= 0 && (t.ports >> port & 1)) || clock_.now >= deadline;
    };
    if (kernels_->round(due) == 0 && !moved)
        clock_.now = std::max(clock_.now, std::min(kernels_->next_deadline(), clock_.now + kIdleSkip));
}

std::vector<KernelResult> HostCluster::wait_all(const Launched& launched, std::chrono::milliseconds timeout,
                                                const Watch& watch) {
    try {
        return wait_or_throw(launched, timeout, watch);
    } catch (const Error&) {
        stop_kernels(launched, std::chrono::milliseconds(1000));
        throw;
    }
}

std::vector<KernelResult> HostCluster::wait_or_throw(const Launched& launched, std::chrono::milliseconds timeout,
                                                     const Watch& watch) {
    StallClock clock({});
    uint64_t seen = weft::activity(*this);
    auto next_look = std::chrono::steady_clock::now();
    for (;;) {
        bool all = true;
        for (const auto& [ref, seq] : launched) {
            if (!finished(*this, ref.chip, ref.core, seq)) {
                all = false;
                continue;
            }
            if (control(ref.chip).hart[ref.core].state == abi::kHartFault)
                throw FaultError(describe_fault(ref.chip, ref.core) + "\n" + hang_report(unfinished(*this, launched)));
        }
        if (all) break;
        run_round();
        const uint64_t a = weft::activity(*this);
        clock.look(a != seen);
        seen = a;
        if (const auto now = std::chrono::steady_clock::now(); watch && now >= next_look) {
            next_look = now + std::chrono::milliseconds(50);
            if (const std::string failed = watch(); !failed.empty())
                throw Error(failed + "\n" + hang_report(unfinished(*this, launched)));
        }
        if (clock.stalled() >= timeout)
            throw TimeoutError("nothing moved on the host model for " + std::to_string(timeout.count()) +
                               " ms (the deadline) with " + std::to_string(unfinished(*this, launched).size()) +
                               " kernel(s) unfinished\n" + hang_report(unfinished(*this, launched)));
    }
    std::vector<KernelResult> results;
    for (const auto& [ref, seq] : launched) results.push_back(result(*this, ref.chip, ref.core));
    return results;
}

// As on a chip: the stop word, honoured at the kernel's next wait; a kernel
// that does not honour it by the deadline is ended as a reset would.
std::string HostCluster::stop_kernels(const Launched& launched, std::chrono::milliseconds timeout) {
    if (!kernels_) return "";  // nothing was ever launched
    std::string stopped;
    for (const auto& [ref, seq] : launched) {
        if (finished(*this, ref.chip, ref.core, seq)) continue;
        control(ref.chip).host.stop[ref.core] = seq;
        stopped += (stopped.empty() ? "; stopped " : ", ") + core_name(ref.chip, ref.core);
    }
    if (stopped.empty()) return "";
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!unfinished(*this, launched).empty() && std::chrono::steady_clock::now() < deadline) run_round();
    for (const CoreRef& r : unfinished(*this, launched)) kernels_->abandon(core(r.chip, r.core));
    return stopped;
}

std::string HostCluster::hang_report(const std::vector<CoreRef>& waiting) {
    return machine_hang_report(*this, waiting);
}

void HostCluster::pass_time(std::chrono::microseconds) { run_round(); }

}  // namespace weft::model
