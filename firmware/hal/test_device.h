// The chip's test device: how a standalone image (flash-and-run) ends the run
// with an exit code, like a test program's return from main.
#pragma once
#include <stdint.h>

namespace weft::test_device {

// Ends the machine: 0 passes, anything else fails with that code (1..255:
// the exit status flash-and-run returns). Never returns.
[[noreturn]] void exit(int code);

}  // namespace weft::test_device
