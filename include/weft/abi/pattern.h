// Test data both sides can regenerate: the host fills buffers with it and
// kernels or the host check them word by word.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint32_t pattern_word(uint32_t seed, uint32_t index) {
    uint32_t x = seed ^ (index * 0x9E3779B1u);
    x ^= x >> 15;
    x *= 0x2C1B3C6Du;
    x ^= x >> 12;
    return x;
}

}  // namespace weft::abi
