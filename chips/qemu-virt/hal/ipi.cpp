// Software interrupts on QEMU virt: the CLINT's MSIP words. As everywhere in
// this firmware, WFI wakes on a source enabled in mie with mstatus.MIE clear,
// so no trap is taken.
#include "hal/ipi.h"

#include "clint.h"
#include "hal/timer.h"
#include "rt/csr.h"

namespace weft::ipi {

void send(uint32_t core) { *qemu_virt::msip(core) = 1; }

void sleep_until(uint64_t deadline) {
    WEFT_CSR_SET(mie, qemu_virt::kMieMsie);
    timer::sleep_until(deadline);
    *qemu_virt::msip(rt::hart_id()) = 0;
    __asm__ volatile("csrc mie, %0" ::"r"(qemu_virt::kMieMsie));
}

}  // namespace weft::ipi
