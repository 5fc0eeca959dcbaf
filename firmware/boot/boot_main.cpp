// Resident boot + launch firmware: every hart marks READY in its launch
// mailbox, sleeps until the host posts LAUNCH, runs the kernel, posts DONE (or
// FAULT from the trap handler) and goes back to waiting.
#include <inttypes.h>  // PRIu32: uint32_t is unsigned long on RV32, unsigned int on RV64
#include <stdint.h>

#include "boot/launch_protocol.h"
#include "hal/cache.h"
#include "hal/eth.h"
#include "hal/ipi.h"
#include "hal/mailbox.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "hal/timer.h"
#include "hal/wait.h"
#include "hal/wake.h"
#include "rt/console.h"
#include "rt/csr.h"
#include "weft/abi/fault.h"
#include "weft/board_layout.h"

using namespace weft;

namespace {

// A hart off watch duty sleeps this long unless another hart wakes it.
constexpr uint64_t kOffWatchSleepUs = 1000000;

// weft_kernel_start (rt/kernel_entry.cpp): the same signature on both sides,
// a pointer and a word, whatever the register width.
using KernelEntry = int (*)(const uint32_t* args, uint32_t count);

[[noreturn]] void serve_launches(uint32_t core);

}  // namespace

namespace {

// Idle harts do not all poll their mailboxes: each wake-up costs the host
// ~20-50 µs of CPU. The lowest-numbered idle hart keeps watch: it sleeps on the
// chip's doorbell, which weft-bridge rings when the host posts a launch, and
// wakes the hart the launch is for with a software interrupt (hal/ipi.h); the
// others sleep until woken.

bool launch_waiting(uint32_t core) {
    const auto& cb = mailbox::control();
    return cb.host.launch[core].seq != cb.hart[core].done_seq && cb.hart[core].state != abi::kHartRunning;
}

bool idle(uint32_t core) {
    const auto& cb = mailbox::control();
    return cb.hart[core].state != abi::kHartRunning && cb.hart[core].state != abi::kHartOff &&
           cb.host.launch[core].seq == cb.hart[core].done_seq;
}

bool on_watch(uint32_t core) {
    for (uint32_t c = 0; c < core; ++c)
        if (idle(c)) return false;
    return true;
}

// The launch sequence number each hart was last woken for, so that a launch
// is relayed once: idle harts that kept seeing it as waiting would spin on it
// until its hart picked it up (shared by the harts of the chip: boot .bss).
volatile uint32_t relayed_seq[board::kNumCores];

bool unrelayed(uint32_t core) {
    return launch_waiting(core) && relayed_seq[core] != mailbox::control().host.launch[core].seq;
}

bool others_waiting(uint32_t self) {
    for (uint32_t c = 0; c < board::kNumCores; ++c)
        if (c != self && unrelayed(c)) return true;
    return false;
}

void relay_launches(uint32_t self) {
    for (uint32_t c = 0; c < board::kNumCores; ++c)
        if (c != self && unrelayed(c)) {
            relayed_seq[c] = mailbox::control().host.launch[c].seq;
            ipi::send(c);
        }
}

void sleep_until_woken() {
    mailbox::set_wait(abi::kWaitLaunch, 0, 0);
    ipi::sleep_until(timer::now() + kOffWatchSleepUs * timer::ticks_per_us());
}

void wait_for_launch(uint32_t core) {
    auto& cb = mailbox::control();
    const auto& st = cb.hart[core];
    const auto& req = cb.host.launch[core];
    auto launched = [&] { return req.seq != st.done_seq; };
    for (;;) {
        relay_launches(core);
        if (launched()) break;
        if (on_watch(core)) {
            mailbox::set_wait(abi::kWaitLaunch, 0, 0);
            wake::listen(true);
            wake::arm();
            if (!launched() && !others_waiting(core) && on_watch(core)) wake::sleep(mailbox::idle_wake_us());
            wake::disarm();
        } else {
            wake::listen(false);
            sleep_until_woken();
        }
    }
    // Leaving the idle pool: the next idle hart must take over the watch.
    for (uint32_t c = 0; c < board::kNumCores; ++c) {
        if (c != core && idle(c)) {
            ipi::send(c);
            break;
        }
    }
}

// A kernel that faulted on a refused command leaves its devices stopped, and
// one that faulted or was stopped by the host may leave commands queued (a
// send on a pulled cable): the next kernel on this core gets them back clean
// and empty. After a kernel that ended normally, queued commands are its
// last writes, still landing: they stay.
void recover_devices(uint32_t core, bool after_fault) {
    noc::recover(after_fault);
    math::recover(after_fault);
    const int port = board::kCores[core].port;
    if (port >= 0) eth::recover(static_cast<uint32_t>(port), after_fault);
}

[[noreturn]] void serve_launches(uint32_t core) {
    auto& cb = mailbox::control();
    auto& st = cb.hart[core];
    const auto& req = cb.host.launch[core];
    for (;;) {
        wait_for_launch(core);
        const bool after_fault = st.state == abi::kHartFault;
        const boot::Snapshot s = boot::begin_launch(req, st);
        if (s.flags & abi::kLaunchNewCode) cache::invalidate_instructions(s.code_base, s.code_size);
        recover_devices(core, after_fault);
        wake::listen(true);
        const uint64_t t0 = timer::now();
        const uint64_t c0 = timer::cycles();
        int rc = reinterpret_cast<KernelEntry>(
            static_cast<uintptr_t>(s.entry))(reinterpret_cast<const uint32_t*>(static_cast<uintptr_t>(s.args)),
                                             static_cast<uint32_t>(s.arg_count));
        const uint64_t cycles = timer::cycles() - c0, ticks = timer::now() - t0;
        wake::listen(false);
        boot::post_done(st, s.seq, rc, cycles, ticks);
    }
}

}  // namespace

extern "C" [[noreturn]] void weft_boot_main(unsigned long hart) {
    const uint32_t core = static_cast<uint32_t>(hart);
    auto& cb = mailbox::control();
    auto& st = cb.hart[core];
    wake::init_core();
    boot::post_ready(cb.host.launch[core], st);
    if (core == 0)
        console::printf("weft boot: chip %" PRIu32 " ready (" WEFT_CHIP_NAME ", %" PRIu32 " cores)\n",
                        cb.host.chip_id, board::kNumCores);
    serve_launches(core);
}

// Register-wide arguments: trap.S passes CSRs and registers as they are.
extern "C" [[noreturn]] void weft_on_trap(unsigned long mcause, unsigned long mepc, unsigned long mtval,
                                          unsigned long a0, unsigned long a1, unsigned long a2, unsigned long ra,
                                          unsigned long a3) {
    const uint32_t core = static_cast<uint32_t>(rt::hart_id());
    auto& st = mailbox::control().hart[core];
    int32_t rc = -1;
    uint64_t cause = mcause, value = mtval;
    if (mcause == 3 && a2 == static_cast<unsigned long>(abi::kPanicMagic)) {  // mailbox::panic
        cause = abi::kPanicCause;
        value = sizeof(unsigned long) == 4 ? (uint64_t(a3) << 32 | a1) : a1;
        rc = static_cast<int32_t>(a0);
    }
    if (cause == abi::kPanicCause && rc == abi::kPanicStopped)  // the host ended it: no fault of its own
        console::printf("weft: chip %" PRIu32 " core %" PRIu32 " kernel stopped by the host (launch %lu)\n",
                        mailbox::chip_id(), core, static_cast<unsigned long>(value));
    else
        console::printf("weft: chip %" PRIu32 " core %" PRIu32 " FAULT mcause=%lu mepc=0x%lx mtval=0x%lx\n",
                        mailbox::chip_id(), core, mcause, mepc, mtval);
    boot::post_fault(st, cause, mepc, value, rc, ra);
    serve_launches(core);
}
