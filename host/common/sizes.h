// Sizes as people type them on a command line: 4096, 16K, 1M, 2G (powers of 1024).
#pragma once
#include <cstdint>
#include <string>

#include "common/error.h"

namespace weft {

inline uint64_t parse_size(const std::string& s) {
    size_t pos = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(s, &pos);
    } catch (...) {
        throw Error("'" + s + "' is not a size (examples: 4096, 16K, 1M)");
    }
    const std::string unit = s.substr(pos);
    if (unit == "K" || unit == "k" || unit == "KiB") v <<= 10;
    else if (unit == "M" || unit == "MiB") v <<= 20;
    else if (unit == "G" || unit == "GiB") v <<= 30;
    else if (!unit.empty()) throw Error("'" + s + "' has an unknown unit (use K, M or G)");
    return v;
}

}  // namespace weft
