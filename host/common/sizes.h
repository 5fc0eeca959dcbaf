// Sizes as people type them on a command line: 4096, 16K, 1M, 2G (powers of 1024).
#pragma once
#include <charconv>
#include <cstdint>
#include <string>

#include "common/error.h"

namespace weft {

// Throws weft::Error for anything but digits and an optional unit, so a sign
// ("-4K") or a size beyond 2^64 - 1 bytes is refused rather than wrapped.
inline uint64_t parse_size(const std::string& s) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (end == s.data()) throw Error("'" + s + "' is not a size (examples: 4096, 16K, 1M)");
    if (ec == std::errc::result_out_of_range) throw Error("'" + s + "' is more than 2^64 - 1 bytes");
    const std::string unit(end, s.data() + s.size());
    unsigned shift = 0;
    if (unit == "K" || unit == "k" || unit == "KiB") shift = 10;
    else if (unit == "M" || unit == "MiB")
        shift = 20;
    else if (unit == "G" || unit == "GiB")
        shift = 30;
    else if (!unit.empty())
        throw Error("'" + s +
                    "' has an unknown unit: a size is a whole number of bytes with an optional K, M or G "
                    "(4096, 16K, 1536K)");
    if (v > (UINT64_MAX >> shift)) throw Error("'" + s + "' is more than 2^64 - 1 bytes");
    return v << shift;
}

}  // namespace weft
