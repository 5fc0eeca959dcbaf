// Posting to the chip's status mailbox (the TT-Fabric architecture spec, "Fabric Node Status
// Mailbox"): events the control plane collects and logs. Any hart may post;
// the ring's lock serialises them (see abi::EventRing for why that keeps one
// writer per word). Header-only: written against the HAL, so it builds for the
// chips and for the host unit tests alike.
#pragma once
#include <stdint.h>

#include "hal/mailbox.h"
#include "hal/timer.h"
#include "hal/wait.h"
#include "rt/address.h"
#include "rt/fence.h"
#include "weft/abi/control_protocol.h"

namespace weft::status {

// Returns false when the ring was full (the event is counted in `dropped`).
inline bool post(uint32_t kind, uint32_t port, uint32_t channel, uint64_t detail) {
    abi::EventRing& ring = mailbox::control().events;
    auto* lock = const_cast<uint32_t*>(&ring.lock);
    // The lock is held for a few stores, so a hart that finds it taken finds
    // it free again at once; the back-off cap keeps the wait cheap anyway.
    wait_until([&] { return __atomic_exchange_n(lock, 1u, __ATOMIC_ACQUIRE) == 0; }, abi::kWaitWord, address_of(lock),
               0, 100);
    const uint32_t tail = ring.tail;
    const bool room = tail - ring.head < abi::kEventSlots;
    if (room) {
        abi::StatusEvent& e = ring.slots[tail % abi::kEventSlots];
        e.kind = kind;
        e.core = mailbox::core_id();
        e.port = port;
        e.channel = channel;
        e.time = timer::now();
        e.detail = detail;
        rt::publish_fence();
        ring.tail = tail + 1;
    } else {
        ring.dropped = ring.dropped + 1;
    }
    __atomic_store_n(lock, 0u, __ATOMIC_RELEASE);
    return room;
}

}  // namespace weft::status
