// Producer side of the device command rings (include/weft/abi/ring.h).
#pragma once
#include "devices.h"
#include "hal/mailbox.h"
#include "hal/wait.h"
#include "hal/wake.h"
#include "rt/fence.h"
#include "weft/abi/fault.h"
#include "weft/board_layout.h"

namespace weft::qemu_virt {

// Always inlined, so that a fault report's "called from" names the kernel's
// line that submitted, not this helper.
template <typename Ring>
[[noreturn, gnu::always_inline]] inline void ring_failed(const Ring& ring, uint32_t kind, uint32_t index) {
    mailbox::panic(abi::kPanicRingError, abi::ring_error_detail(kind, index, ring.error, ring.error_index));
}

template <typename Ring>
bool ring_ok(const Ring& ring, uint32_t kind, uint32_t index) {
    if (ring.error != abi::kRingOk) ring_failed(ring, kind, index);
    return true;
}

// Clears a refused command (and anything queued behind it) so the next kernel
// starts on a healthy ring. The consumer acknowledges; the wait is short.
template <typename Ring>
void ring_reset(Ring& ring, uint32_t wait_kind, uint32_t index) {
    const uint32_t seq = ring.reset_seq + 1;
    rt::publish_fence();
    ring.reset_seq = seq;
    wake::notify_devices();
    wait_active([&] { return ring.reset_ack == seq; }, wait_kind, index);
}

template <typename Ring>
void ring_recover(Ring& ring, uint32_t wait_kind, uint32_t index, bool drop_queued) {
    if (ring.error != abi::kRingOk || (drop_queued && ring.head != ring.tail)) ring_reset(ring, wait_kind, index);
}

template <typename Ring, typename Command>
void ring_submit(Ring& ring, const Command& cmd, uint32_t kind, uint32_t index, uint32_t wait_kind) {
    ring_ok(ring, kind, index);  // a refused command surfaces at the next submission, not at some later wait
    const uint32_t tail = ring.tail;
    if (tail - ring.head >= Ring::kSlots) {
        // Full: wait for half the ring, not one slot, so a producer that is
        // faster than the device sleeps once per half ring instead of per command.
        wait_active([&] { return ring_ok(ring, kind, index) && tail - ring.head <= Ring::kSlots / 2; }, wait_kind,
                    index);
    }
    // Copied as words through memcpy, not by reading the command through a
    // uint64_t pointer: that breaks strict aliasing, and at -O3 GCC read the
    // words before the command's narrow fields were stored (op and len went out as 0).
    uint64_t words[sizeof(Command) / 8];
    static_assert(sizeof(Command) % 8 == 0, "commands are whole words");
    __builtin_memcpy(words, &cmd, sizeof words);
    volatile uint64_t* to = reinterpret_cast<volatile uint64_t*>(&ring.slots[tail & (Ring::kSlots - 1)]);
    for (unsigned i = 0; i < sizeof(Command) / 8; ++i) to[i] = words[i];
    rt::publish_fence();
    ring.tail = tail + 1;
    wake::notify_devices();
}

template <typename Ring>
void ring_drain(Ring& ring, uint32_t kind, uint32_t index, uint32_t wait_kind) {
    const uint32_t tail = ring.tail;
    wait_active([&] { return ring_ok(ring, kind, index) && ring.head == tail; }, wait_kind, index);
    rt::acquire_fence();
}

}  // namespace weft::qemu_virt
