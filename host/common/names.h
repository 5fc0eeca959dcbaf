// How reports name a chip and a core: "chip 3", "chip 3 core 5". One
// spelling everywhere, so users can grep their logs for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

inline std::string chip_name(uint32_t chip) { return "chip " + std::to_string(chip); }
inline std::string core_name(uint32_t chip, uint32_t core) { return chip_name(chip) + " core " + std::to_string(core); }
// "chip 3", "chips 0, 1, 2", the first 16 of a longer list and how many in all.
inline std::string chips_named(const std::vector<uint32_t>& chips) {
    std::string out = chips.size() == 1 ? "chip " : "chips ";
    for (size_t i = 0; i < chips.size(); ++i) {
        if (i == 16) return out + ", ... (" + std::to_string(chips.size()) + " in all)";
        out += (i ? ", " : "") + std::to_string(chips[i]);
    }
    return out;
}

}  // namespace weft
