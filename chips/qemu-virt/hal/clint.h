// QEMU virt's CLINT (ACLINT MSWI + MTIMER): each hart's software-interrupt
// word and timer comparator. Private to this chip's HAL.
#pragma once
#include <stdint.h>

#include "weft/board_layout.h"

namespace weft::qemu_virt {

inline volatile uint32_t* msip(uint64_t hart) { return reinterpret_cast<volatile uint32_t*>(WEFT_CLINT + 4 * hart); }
inline volatile uint32_t* mtimecmp_half(uint64_t hart, uint32_t half) {
    return reinterpret_cast<volatile uint32_t*>(WEFT_CLINT + 0x4000 + 8 * hart + 4 * half);
}
// One store on RV64. On RV32 two, the high half parked at its maximum while
// the low half changes, so the comparator never holds an early deadline.
inline void set_mtimecmp(uint64_t hart, uint64_t deadline) {
    if constexpr (sizeof(void*) == 8) {
        *reinterpret_cast<volatile uint64_t*>(WEFT_CLINT + 0x4000 + 8 * hart) = deadline;
    } else {
        *mtimecmp_half(hart, 1) = ~0u;
        *mtimecmp_half(hart, 0) = static_cast<uint32_t>(deadline);
        *mtimecmp_half(hart, 1) = static_cast<uint32_t>(deadline >> 32);
    }
}

inline constexpr uint64_t kMieMsie = 1u << 3, kMieMeie = 1u << 11;
inline constexpr uint64_t kMipMsip = 1u << 3, kMipMeip = 1u << 11;

}  // namespace weft::qemu_virt
