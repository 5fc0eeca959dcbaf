// Waiting without burning the host: poll briefly, then sleep in WFI, on a
// doorbell (wait_active) or with a timer wake-up whose interval grows up to a
// cap (wait_until). A wake-up costs ~20 µs of
// host CPU under QEMU, so a bare spin or a fixed short tick would starve the
// other chips sharing the host's cores.
#pragma once
#include <stdint.h>
#include "hal/mailbox.h"
#include "hal/timer.h"
#include "hal/wake.h"

namespace weft {

template <typename Ready>
inline void wait_until(Ready ready, uint32_t wait_kind, uint64_t wait_addr, uint32_t wait_value,
                       uint32_t max_backoff_us) {
    // Few polls before sleeping: predicates like the EDM's do real work, and
    // under emulation every guest instruction costs host CPU the chips share.
    for (int i = 0; i < 8; ++i)
        if (ready()) return;
    mailbox::set_wait(wait_kind, wait_addr, wait_value);
    const uint64_t tpu = timer::ticks_per_us();
    uint64_t backoff = 5 * tpu;
    const uint64_t cap = uint64_t(max_backoff_us) * tpu;
    while (!ready()) {
        mailbox::honour_stop();
        timer::sleep_until(timer::now() + backoff);
        backoff = backoff * 2 > cap ? cap : backoff * 2;
    }
    mailbox::clear_wait();
}

// The usual case: a kernel waiting for a device (NoC, Ethernet, math) or for
// a word another chip or core writes through one. It sleeps until the
// device side rings the doorbell (wake.h), so it costs the host nothing while
// it waits and wakes as soon as the device has acted. A condition that only a
// plain store of another core can make true must use wait_until instead.
// alarm_us: a time the waiter must look again by whatever rings it (a
// resend), where it is shorter than the host's back-off cap; 0: none.
template <typename Ready>
inline void wait_active(Ready ready, uint32_t wait_kind, uint64_t wait_addr, uint32_t wait_value = 0,
                        uint32_t alarm_us = 0) {
    for (int i = 0; i < 8; ++i)
        if (ready()) return;
    mailbox::set_wait(wait_kind, wait_addr, wait_value);
    for (;;) {
        wake::arm();
        if (ready()) break;
        mailbox::honour_stop();
        const uint32_t cap = mailbox::active_wake_us();
        wake::sleep(alarm_us && alarm_us < cap ? alarm_us : cap);
    }
    wake::disarm();
    mailbox::clear_wait();
}

}  // namespace weft
