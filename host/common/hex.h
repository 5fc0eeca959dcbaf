// "0x1f": how reports, traces and scripts print addresses and hashes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace weft {

inline std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

}  // namespace weft
