// The first example's shared definitions: the kernel's arguments (host and
// firmware read the same struct) and the buffer pattern both chips write and
// check. Plain logic with no hardware in it, so a CMocka test runs it on the
// host (test_exchange.cpp) exactly as the kernel runs it on a chip.
#pragma once
#include <stdint.h>

#include "weft/abi/kernel_args.h"

namespace example {

// Two chips, one cable: each sends `words` 32-bit words of its pattern from
// `local_buffer` to the peer's `remote_inbox`, then bumps the peer's `flag`;
// it waits for its own flag and checks what landed in its inbox.
struct ExchangeArgs {
    uint64_t local_buffer;  // our pattern, written here by the kernel first
    uint64_t local_inbox;   // where the peer's pattern lands
    uint64_t remote_inbox;  // the peer's inbox
    uint64_t local_flag;    // set to 1 by the peer after its buffer
    uint64_t remote_flag;
    uint32_t port;  // the Ethernet port the cable is on
    uint32_t words;
    uint32_t chip;  // ours: the pattern is per chip
    uint32_t peer;
};
static_assert(sizeof(ExchangeArgs) == 56 && weft::abi::kIsKernelArgs<ExchangeArgs>, "ExchangeArgs layout");

// Word i of chip c's pattern: distinct per chip and per word.
inline uint32_t pattern(uint32_t chip, uint32_t i) { return (chip + 1) * 0x9e3779b1u ^ (i * 2654435761u); }

inline void fill(uint32_t* buffer, uint32_t words, uint32_t chip) {
    for (uint32_t i = 0; i < words; ++i) buffer[i] = pattern(chip, i);
}

// How many words differ from chip `chip`'s pattern (0: all arrived intact).
inline uint32_t mismatches(const uint32_t* buffer, uint32_t words, uint32_t chip) {
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < words; ++i) wrong += buffer[i] != pattern(chip, i);
    return wrong;
}

}  // namespace example
