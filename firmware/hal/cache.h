#pragma once
#include <stdint.h>

namespace weft::cache {

// Make instruction fetch see code that a DMA engine or the host wrote to
// [base, base + size). Call before jumping into freshly loaded code.
void invalidate_instructions(uint64_t base, uint64_t size);

}  // namespace weft::cache
