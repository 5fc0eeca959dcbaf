// Timer HAL on QEMU virt: the ACLINT's mtime/mtimecmp. WFI wakes when a source
// enabled in mie is pending even with mstatus.MIE clear, so no trap is taken:
// the hart sleeps until its own mtimecmp fires and then re-checks its condition.
#include "hal/timer.h"

#include "clint.h"
#include "hal/mailbox.h"
#include "rt/csr.h"
#include "weft/board_layout.h"

namespace weft::timer {

// The time CSR, not the mtime register: the same clock (QEMU's ACLINT backs
// the CSR), but a CSR read stays inside the core while a device read waits
// for QEMU's global lock, which every hart and the main loop contend for.
uint64_t now() { return WEFT_CSR_READ64(time); }
uint64_t ticks_per_us() { return WEFT_TIMEBASE_HZ / 1000000; }
uint64_t cycles() { return WEFT_CSR_READ64(mcycle); }

// Kept in the hart's status (the boot firmware and each kernel share it), so
// that reading the comparator back needs no device access.
void set_alarm(uint64_t deadline) {
    mailbox::my_status().alarm = deadline;
    qemu_virt::set_mtimecmp(rt::hart_id(), deadline);
}
uint64_t alarm() { return mailbox::my_status().alarm; }

void sleep_until(uint64_t deadline) {
    set_alarm(deadline);
    WEFT_CSR_SET(mie, rt::kMieMtie);
    if (now() < deadline) __asm__ volatile("wfi");
    // Leave the comparator far away so the pending bit drops and the next WFI sleeps.
    set_alarm(~0ull);
}

}  // namespace weft::timer
