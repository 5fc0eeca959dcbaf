// Software interrupts between the cores of a chip: how a core wakes another
// that sleeps without a device to wake it (the boot firmware's idle harts,
// the cores a doorbell was for).
#pragma once
#include <stdint.h>

namespace weft::ipi {

// Makes `core`'s software interrupt pending: it wakes from sleep_until, or
// from a wake::sleep, at once or as soon as it gets there.
void send(uint32_t core);
// Sleeps the calling core until its software interrupt arrives or the timer
// reaches `deadline`, and takes the interrupt. May return early.
void sleep_until(uint64_t deadline);

}  // namespace weft::ipi
