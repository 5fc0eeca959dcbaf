#include "hal/noc.h"

#include "ring_submit.h"
#include "rt/address.h"

namespace weft::noc {
namespace {

using qemu_virt::ring_submit;

abi::NocRing& ring() { return qemu_virt::devices().noc[mailbox::core_id()]; }

void submit(uint16_t op, uint64_t src, uint64_t dst, uint32_t len, uint64_t sem = 0, uint32_t value = 0,
            uint32_t mask = 0) {
    abi::NocCommand c{};
    c.op = op;
    c.len = len;
    c.src = src;
    c.dst = dst;
    c.sem = sem;
    c.value = value;
    c.core_mask = mask;
    ring_submit(ring(), c, abi::kRingNoc, mailbox::core_id(), abi::kWaitNocRing);
}

volatile uint32_t* word(uint64_t addr) { return pointer_to<volatile uint32_t>(addr); }

}  // namespace

void async_write(uint64_t src, uint64_t dst, uint32_t len) { submit(abi::kNocWrite, src, dst, len); }
void async_read(uint64_t src, uint64_t dst, uint32_t len) { submit(abi::kNocRead, src, dst, len); }
void async_write_inc(uint64_t src, uint64_t dst, uint32_t len, uint64_t sem, uint32_t value) {
    submit(abi::kNocWriteInc, src, dst, len, sem, value);
}
void async_inline_write(uint64_t dst, uint32_t value) { submit(abi::kNocInlineWrite, 0, dst, 4, 0, value); }
void async_multicast(uint64_t src, uint64_t l1_offset, uint32_t len, uint32_t core_mask) {
    submit(abi::kNocMulticast, src, l1_offset, len, 0, 0, core_mask);
}
void semaphore_inc(uint64_t sem, uint32_t value) { submit(abi::kNocSemInc, 0, sem, 4, 0, value); }

void semaphore_set(uint64_t sem, uint32_t value) {
    *word(sem) = value;
    rt::publish_fence();
}
uint32_t semaphore_read(uint64_t sem) { return *word(sem); }
void semaphore_wait(uint64_t sem, uint32_t value) {
    wait_active([&] { return *word(sem) == value; }, abi::kWaitSemaphore, sem, value);
    rt::acquire_fence();
}
void semaphore_wait_min(uint64_t sem, uint32_t value) {
    wait_active([&] { return *word(sem) >= value; }, abi::kWaitSemaphore, sem, value);
    rt::acquire_fence();
}

void barrier() { qemu_virt::ring_drain(ring(), abi::kRingNoc, mailbox::core_id(), abi::kWaitNocRing); }
void recover(bool drop_queued) { qemu_virt::ring_recover(ring(), abi::kWaitNocRing, mailbox::core_id(), drop_queued); }
uint32_t issued() { return ring().tail; }
uint32_t completed() { return ring().head; }

}  // namespace weft::noc
