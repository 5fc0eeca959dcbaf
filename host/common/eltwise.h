#pragma once
#include <stdint.h>

namespace weft {

// dst[i] = a[i] op b[i] for `count` elements (abi::MathOp, abi::DataType).
// Returns false on an unknown op or type. The math engine and the host
// reference implementations share it, so they round identically.
bool eltwise(uint16_t op, uint16_t dtype, const void* a, const void* b, void* dst, uint64_t count);

}  // namespace weft
