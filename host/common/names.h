// How reports name a chip and a core: "chip 3", "chip 3 core 5". One
// spelling everywhere, so users can grep their logs for it.
#pragma once
#include <cstdint>
#include <string>

namespace weft {

inline std::string chip_name(uint32_t chip) { return "chip " + std::to_string(chip); }
inline std::string core_name(uint32_t chip, uint32_t core) { return chip_name(chip) + " core " + std::to_string(core); }

}  // namespace weft
