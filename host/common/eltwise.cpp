#include "common/eltwise.h"

#include <string.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common/numeric.h"
#include "weft/abi/commands.h"

namespace weft {
namespace {

template <typename T, typename Load, typename Store, typename Op>
void apply(const void* a, const void* b, void* dst, uint64_t count, Load load, Store store, Op op) {
    const auto* pa = static_cast<const uint8_t*>(a);
    const auto* pb = static_cast<const uint8_t*>(b);
    auto* pd = static_cast<uint8_t*>(dst);
    for (uint64_t i = 0; i < count; ++i) {
        T x, y;
        memcpy(&x, pa + i * sizeof(T), sizeof(T));
        memcpy(&y, pb + i * sizeof(T), sizeof(T));
        T r = store(op(load(x), load(y)));
        memcpy(pd + i * sizeof(T), &r, sizeof(T));
    }
}

// max and min that give the same bits whichever operand comes first, as sum
// and product do: algorithms that reduce a op b on one rank and b op a on
// another (recursive doubling) still leave every rank with identical bits.
// So +0 beats -0 for max (and loses for min), and any NaN gives the NaN.
template <typename V>
V max_of(V x, V y) {
    if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<V>::quiet_NaN();
        if (x == y) return std::signbit(x) ? y : x;
    }
    return x < y ? y : x;
}

template <typename V>
V min_of(V x, V y) {
    if constexpr (std::is_floating_point_v<V>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<V>::quiet_NaN();
        if (x == y) return std::signbit(x) ? x : y;
    }
    return x < y ? x : y;
}

template <typename V>
bool pick_op(uint16_t op, auto run) {
    switch (op) {
        case abi::kMathSum: run([](V x, V y) { return V(x + y); }); return true;
        case abi::kMathMax: run([](V x, V y) { return max_of(x, y); }); return true;
        case abi::kMathMin: run([](V x, V y) { return min_of(x, y); }); return true;
        case abi::kMathProd: run([](V x, V y) { return V(x * y); }); return true;
    }
    return false;
}

}  // namespace

bool eltwise(uint16_t op, uint16_t dtype, const void* a, const void* b, void* dst, uint64_t count) {
    auto same = [](auto v) { return v; };
    switch (dtype) {
        case abi::kF32: return pick_op<float>(op, [&](auto f) { apply<float>(a, b, dst, count, same, same, f); });
        case abi::kI32:  // two's complement wrap-around, computed unsigned to stay defined
            return pick_op<uint32_t>(op, [&](auto f) {
                if (op == abi::kMathMax || op == abi::kMathMin) {
                    auto g = [op](int32_t x, int32_t y) {
                        return op == abi::kMathMax ? std::max(x, y) : std::min(x, y);
                    };
                    apply<int32_t>(a, b, dst, count, same, same, g);
                } else {
                    apply<uint32_t>(a, b, dst, count, same, same, f);
                }
            });
        case abi::kBF16:
            return pick_op<float>(op, [&](auto f) {
                apply<uint16_t>(a, b, dst, count, num::bf16_to_f32, num::f32_to_bf16, f);
            });
        case abi::kF16:
            return pick_op<float>(op, [&](auto f) {
                apply<uint16_t>(a, b, dst, count, num::f16_to_f32, num::f32_to_f16, f);
            });
    }
    return false;
}

}  // namespace weft
