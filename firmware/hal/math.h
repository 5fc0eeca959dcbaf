// The chip's element-wise math engine: dst[i] = src0[i] op src1[i].
#pragma once
#include <stdint.h>
#include "weft/abi/commands.h"

namespace weft::math {

void eltwise(abi::MathOp op, abi::DataType dtype, uint64_t src0, uint64_t src1, uint64_t dst, uint32_t count);
void barrier();
void reset();

}  // namespace weft::math
