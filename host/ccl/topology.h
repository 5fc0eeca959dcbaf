// ccl::Topology is weft::Topology (driver/topology.h): the chips, cables and
// routes below the collectives and the transports alike.
#pragma once
#include "driver/topology.h"

namespace weft::ccl {
using weft::Hop;
using weft::Topology;
}  // namespace weft::ccl
