// Writing into the chips' memory, as builders of device configuration need:
// a live cluster (driver/cluster.h) is one, a recording fake in a unit test
// another, a PCIe BAR on silicon a third.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace weft {

class ChipWriter {
public:
    virtual ~ChipWriter() = default;
    virtual void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) = 0;
    // Zeroes [address, +bytes): semaphores a protocol starts from.
    virtual void clear(uint32_t chip, uint64_t address, size_t bytes) = 0;
};

}  // namespace weft
