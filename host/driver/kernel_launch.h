// What a launch of a kernel names and what it returns, whatever machine runs
// it (driver/machine.h): the QEMU cluster or the host model.
#pragma once
#include <stdint.h>

#include <vector>

#include "driver/kernel_image.h"

namespace weft {

struct CoreRef {
    uint32_t chip = 0;
    uint32_t core = 0;
};

struct Launch {
    uint32_t chip = 0;
    uint32_t core = 0;
    const KernelImage* kernel = nullptr;
    std::vector<uint32_t> args;
};

struct KernelResult {
    int32_t return_code = 0;
    uint64_t cycles = 0;
    uint64_t ticks = 0;  // mtime ticks (board timebase)
};

}  // namespace weft
