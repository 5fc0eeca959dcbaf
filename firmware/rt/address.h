// A pointer as a chip address (the 64-bit addresses of the ABI and the HAL).
#pragma once
#include <stdint.h>

namespace weft {

// A chip address and a pointer the core dereferences are the same number on
// a chip. On the host board (boards/host) the chip's memory lies somewhere
// in host memory, so the board moves between the two for the current core:
// the firmware names bytes by their chip addresses (to the NoC, to a peer, in
// its posted waits) and dereferences what the host gave it (a configuration,
// a program, a semaphore) wherever the chip keeps it.
#if defined(__riscv)
// Through uintptr_t: GCC sign-extends a pointer cast straight to a wider
// integer, which on RV32 turns L1 address 0x80100000 into 0xffffffff80100000.
inline uint64_t address_of(const volatile void* p) { return reinterpret_cast<uintptr_t>(p); }
template <typename T>
inline T* pointer_to(uint64_t address) {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(address));
}
#else
uint64_t host_board_address(const volatile void* p);
void* host_board_pointer(uint64_t address);
inline uint64_t address_of(const volatile void* p) { return host_board_address(p); }
template <typename T>
inline T* pointer_to(uint64_t address) {
    return static_cast<T*>(host_board_pointer(address));
}
#endif

}  // namespace weft
