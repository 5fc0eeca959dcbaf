// The chip's element-wise math engine: dst[i] = src0[i] op src1[i].
#pragma once
#include <stdint.h>
#include "weft/abi/commands.h"

namespace weft::math {

void eltwise(abi::MathOp op, abi::DataType dtype, uint64_t src0, uint64_t src1, uint64_t dst, uint32_t count);
// Adds `value` to the semaphore at `sem` once the earlier commands are done.
void semaphore_inc(uint64_t sem, uint32_t value);
void barrier();
// Clears a refused command on this core's queue, if there is one (boot
// firmware, between kernels); drop_queued also discards commands still queued.
void recover(bool drop_queued);

}  // namespace weft::math
