// FNV-1a, 64-bit: the hash weft records of a board's layout and of the code a
// core holds, and of a settle look's counts (cheap, stable across hosts; not
// for security).
#pragma once
#include <cstdint>

namespace weft {

// Fed a byte, or a word's bytes low first, as they come.
class Fnv1a {
public:
    void add(unsigned char c) { h_ = (h_ ^ c) * 1099511628211ull; }
    void add_word(uint64_t w) {
        for (int i = 0; i < 8; ++i) add(static_cast<unsigned char>(w >> (8 * i)));
    }
    uint64_t value() const { return h_; }

private:
    uint64_t h_ = 1469598103934665603ull;
};

template <typename Bytes>
uint64_t fnv1a(const Bytes& bytes) {
    Fnv1a h;
    for (unsigned char c : bytes) h.add(c);
    return h.value();
}

}  // namespace weft
