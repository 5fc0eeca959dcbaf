// How a live reroute's deadlock check scales: on grids of meshes of up to
// 16,384 chips, the check of a move round one dead cable (every mix of old
// and new routes) beside the builder's check of the fabric's own tables.
#pragma once
#include <string>

namespace weft::bench {

// The markdown table; `progress` is told what runs.
std::string reroute_check_table(void (*progress)(const std::string&));

}  // namespace weft::bench
