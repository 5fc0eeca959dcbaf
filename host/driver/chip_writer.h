// Writing into the chips' memory, as builders of device configuration need:
// a live cluster (driver/cluster.h) is one, a recording fake in a unit test
// another, a PCIe BAR on silicon a third.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace weft {

class ChipWriter {
public:
    virtual ~ChipWriter() = default;
    virtual void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) = 0;
    // Zeroes [address, +bytes): semaphores a protocol starts from.
    virtual void clear(uint32_t chip, uint64_t address, size_t bytes) = 0;
};

// Writes addressed by index (a communicator's rank, a fabric's own chip
// number) to the chips they stand for: index i is chips[i].
class MappedChipWriter final : public ChipWriter {
public:
    MappedChipWriter(ChipWriter& to, const std::vector<uint32_t>& chips) : to_(to), chips_(chips) {}
    void write(uint32_t index, uint64_t address, const void* data, size_t bytes) override {
        to_.write(chips_.at(index), address, data, bytes);
    }
    void clear(uint32_t index, uint64_t address, size_t bytes) override { to_.clear(chips_.at(index), address, bytes); }

private:
    ChipWriter& to_;
    const std::vector<uint32_t>& chips_;
};

}  // namespace weft
