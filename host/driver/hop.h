// One hop of a message between two chips: out of (from_chip, from_port),
// into (to_chip, to_port). For the EDM a hop is a cable.
#pragma once
#include <stdint.h>

namespace weft {

struct Hop {
    uint32_t from_chip, from_port, to_chip, to_port;
};

}  // namespace weft
