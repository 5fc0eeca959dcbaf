// Sleeping until a device has done something, without polling.
//
// Under emulation every timer wake-up of a sleeping core costs the host tens
// of µs in thread switches, and a core that polls on a short timer starves the
// cores that have real work. So a core waiting on a device arms its doorbell
// and sleeps; the device side (weft-bridge on qemu-virt) rings the chip's
// doorbell after it executed commands that touched the chip. A long fallback
// alarm bounds the sleep should a ring ever be missed. On silicon, where a
// core polling its own L1 costs nothing, a board implements these as no-ops
// and a short spin.
#pragma once
#include <stdint.h>

namespace weft::wake {

// The order of use: arm, check the condition, sleep if it does not hold,
// repeat; disarm once it holds. A ring between the check and the sleep is not
// lost: it leaves the doorbell pending and the sleep returns at once.
void arm();
void disarm();
// Sleeps until the doorbell rings, a software interrupt arrives or
// fallback_us passed since the last alarm was set. May return early.
void sleep(uint32_t fallback_us);
// After queueing device commands: wakes the devices if they sleep.
void notify_devices();
// Boot: sets up this core's doorbell (once per core).
void init_core();
// Whether this core hears the doorbell at all. A core that does not is not
// even disturbed by it: the boot firmware turns it on around a kernel and for
// the idle hart on watch, and off for the idle harts that sleep.
void listen(bool on);

}  // namespace weft::wake
