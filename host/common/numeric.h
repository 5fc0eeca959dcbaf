// Element types of the math engine and the CCL references: bf16 and f16 are
// stored as 16-bit patterns and computed in f32, rounded to nearest-even.
#pragma once
#include <stdint.h>
#include <string.h>

#include <cmath>

namespace weft::num {

inline float bits_to_f32(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
inline uint32_t f32_to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

inline float bf16_to_f32(uint16_t h) { return bits_to_f32(uint32_t(h) << 16); }
inline uint16_t f32_to_bf16(float f) {
    uint32_t b = f32_to_bits(f);
    if (std::isnan(f)) return static_cast<uint16_t>((b >> 16) | 0x40);  // keep it a quiet NaN
    b += 0x7fff + ((b >> 16) & 1);
    return static_cast<uint16_t>(b >> 16);
}

inline float f16_to_f32(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    if (exp == 0x1f) return bits_to_f32(sign | 0x7f800000 | (man << 13));  // inf / NaN
    if (exp == 0) {
        float v = std::ldexp(static_cast<float>(man), -24);  // subnormal (or zero)
        return sign ? -v : v;
    }
    return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32_to_f16(float f) {
    uint32_t b = f32_to_bits(f);
    uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
    if (std::isnan(f)) return sign | 0x7e00;
    float a = std::fabs(f);
    if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
    if (a < 6.103515625e-05f) {               // below the smallest normal: subnormal grid of 2^-24
        uint32_t m = static_cast<uint32_t>(std::nearbyint(a * 16777216.0f));  // ties-to-even (default mode)
        return sign | static_cast<uint16_t>(m);
    }
    uint32_t ab = f32_to_bits(a);
    uint32_t exp = (ab >> 23) - 112;
    uint32_t man = ab & 0x7fffff;
    uint32_t half = (exp << 10) | (man >> 13);
    uint32_t rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // carries into the exponent correctly
    return sign | static_cast<uint16_t>(half);
}

}  // namespace weft::num
