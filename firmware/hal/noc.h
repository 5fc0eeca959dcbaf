// NoC DMA: commands a core queues for its chip's DMA engine. Commands of one
// core complete in the order issued, so an increment queued after a write lands
// after the write's bytes (the EDM protocol of tt-metal's CCL developer guide relies on this).
// Addresses are chip physical addresses.
#pragma once
#include <stdint.h>

namespace weft::noc {

void async_write(uint64_t src, uint64_t dst, uint32_t len);
void async_read(uint64_t src, uint64_t dst, uint32_t len);
// Fused: write the payload, then increment the semaphore, in that order.
void async_write_inc(uint64_t src, uint64_t dst, uint32_t len, uint64_t sem, uint32_t value);
void async_inline_write(uint64_t dst, uint32_t value);
// Copy src to the same L1 offset of every core in core_mask.
void async_multicast(uint64_t src, uint64_t l1_offset, uint32_t len, uint32_t core_mask);
void semaphore_inc(uint64_t sem, uint32_t value);

// Local semaphore operations: the semaphore lives in the caller's own L1.
void semaphore_set(uint64_t sem, uint32_t value);
uint32_t semaphore_read(uint64_t sem);
// Wait until *sem == value (or >= value for wait_min).
void semaphore_wait(uint64_t sem, uint32_t value);
void semaphore_wait_min(uint64_t sem, uint32_t value);

// Wait until every command this core issued has completed.
void barrier();
// Clears a refused command on this core's queue, if there is one, so the next
// kernel starts clean (boot firmware, between kernels); drop_queued also
// discards commands still queued.
void recover(bool drop_queued);
uint32_t issued();
uint32_t completed();

}  // namespace weft::noc
