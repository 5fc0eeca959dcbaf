// FNV-1a, 64-bit: the hash weft records of a board's layout and of the code a
// core holds (cheap, stable across hosts; not for security).
#pragma once
#include <cstdint>

namespace weft {

template <typename Bytes>
uint64_t fnv1a(const Bytes& bytes) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
    return h;
}

}  // namespace weft
