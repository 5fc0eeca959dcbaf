// transport::Hop is weft::Hop (driver/hop.h): the collectives and the
// transports both name cables with it.
#pragma once
#include "driver/hop.h"

namespace weft::transport {
using weft::Hop;
}  // namespace weft::transport
