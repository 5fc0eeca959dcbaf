// A pointer as a chip address (the 64-bit addresses of the ABI and the HAL).
#pragma once
#include <stdint.h>

namespace weft {

// Through uintptr_t: GCC sign-extends a pointer cast straight to a wider
// integer, which on RV32 turns L1 address 0x80100000 into 0xffffffff80100000.
inline uint64_t address_of(const volatile void* p) { return reinterpret_cast<uintptr_t>(p); }

}  // namespace weft
