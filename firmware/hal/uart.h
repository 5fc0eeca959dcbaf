// The chip's serial port, as far as the console needs it: bytes out. Whoever
// writes several bytes serialises with the other harts (rt/console does).
#pragma once
#include <stdint.h>

namespace weft::uart {

// Sends one byte, waiting while the port cannot take it.
void put(uint8_t byte);

}  // namespace weft::uart
