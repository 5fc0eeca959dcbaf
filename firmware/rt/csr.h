#pragma once
#include <stdint.h>

#include "rt/fence.h"

// A CSR is a register wide (XLEN bits).
#define WEFT_CSR_READ(name)                             \
    ({                                                  \
        unsigned long v_;                               \
        __asm__ volatile("csrr %0, " #name : "=r"(v_)); \
        v_;                                             \
    })
#define WEFT_CSR_WRITE(name, v) __asm__ volatile("csrw " #name ", %0" ::"r"((unsigned long)(v)))
#define WEFT_CSR_SET(name, v) __asm__ volatile("csrs " #name ", %0" ::"r"((unsigned long)(v)))

// A 64-bit counter (time, mcycle). On RV32 its high half is a CSR of its own
// (timeh, mcycleh), read on both sides of the low half until it holds still,
// so that a carry between the two reads cannot tear the value.
#if __riscv_xlen == 32
#define WEFT_CSR_READ64(name)                    \
    ({                                           \
        uint32_t hi_, lo_;                       \
        do {                                     \
            hi_ = WEFT_CSR_READ(name##h);        \
            lo_ = WEFT_CSR_READ(name);           \
        } while (hi_ != WEFT_CSR_READ(name##h)); \
        (uint64_t(hi_) << 32) | lo_;             \
    })
#else
#define WEFT_CSR_READ64(name) static_cast<uint64_t>(WEFT_CSR_READ(name))
#endif

namespace weft::rt {

inline uint64_t hart_id() { return WEFT_CSR_READ(mhartid); }

inline constexpr uint64_t kMieMtie = 1u << 7;

}  // namespace weft::rt
