#pragma once
#include <stdint.h>

#include "rt/fence.h"

#define WEFT_CSR_READ(name)                             \
    ({                                                  \
        uint64_t v_;                                    \
        __asm__ volatile("csrr %0, " #name : "=r"(v_)); \
        v_;                                             \
    })
#define WEFT_CSR_WRITE(name, v) __asm__ volatile("csrw " #name ", %0" ::"r"((uint64_t)(v)))
#define WEFT_CSR_SET(name, v) __asm__ volatile("csrs " #name ", %0" ::"r"((uint64_t)(v)))

namespace weft::rt {

inline uint64_t hart_id() { return WEFT_CSR_READ(mhartid); }

inline constexpr uint64_t kMieMtie = 1u << 7;

}  // namespace weft::rt
