// Each hart's stack pointer at reset: the top of its own L1 (the board's
// layout), read by start.S and trap.S before any stack exists. Every image
// that starts a chip links it: the boot firmware and standalone images.
#include <stdint.h>

#include "weft/board_layout.h"

namespace {

constexpr uintptr_t stack_top(uint32_t core) {
    return static_cast<uintptr_t>(weft::board::kCores[core].l1_base + weft::board::kCores[core].l1_size);
}

template <uint32_t... I>
struct StackTops {
    // A register each: start.S and trap.S load them at its width.
    uintptr_t top[sizeof...(I)] = {stack_top(I)...};
};

template <uint32_t N, uint32_t... I>
struct MakeStackTops : MakeStackTops<N - 1, N - 1, I...> {};
template <uint32_t... I>
struct MakeStackTops<0, I...> {
    using type = StackTops<I...>;
};

}  // namespace

extern "C" const MakeStackTops<weft::board::kNumCores>::type weft_stack_tops = {};
