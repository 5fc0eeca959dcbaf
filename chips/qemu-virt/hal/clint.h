// QEMU virt's CLINT (ACLINT MSWI + MTIMER): each hart's software-interrupt
// word and timer comparator. Private to this chip's HAL.
#pragma once
#include <stdint.h>

#include "weft/board_layout.h"

namespace weft::qemu_virt {

inline volatile uint32_t* msip(uint64_t hart) { return reinterpret_cast<volatile uint32_t*>(WEFT_CLINT + 4 * hart); }
inline volatile uint64_t* mtimecmp(uint64_t hart) {
    return reinterpret_cast<volatile uint64_t*>(WEFT_CLINT + 0x4000 + 8 * hart);
}

inline constexpr uint64_t kMieMsie = 1u << 3, kMieMeie = 1u << 11;
inline constexpr uint64_t kMipMsip = 1u << 3, kMipMeip = 1u << 11;

}  // namespace weft::qemu_virt
