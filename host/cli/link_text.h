// A link's faults and shaping in a few words, as weft status and weft fault
// print them.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace weft::cli {

// "none", or "drop 0.01 ber 1e-06 flap 100/20ms" (flap period/down time, as weft fault takes them).
std::string faults_text(const nlohmann::json& faults);
// "unshaped" or e.g. "shaped 1.25 GB/s + 5 us".
std::string describe_shaping(double gbps, double latency_us);
// A status line's last column: the faults, and the shaping if there is any.
std::string faults_and_shaping(const nlohmann::json& link);

}  // namespace weft::cli
