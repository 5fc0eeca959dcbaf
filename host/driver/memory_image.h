// Chip memory writes, recorded in order to be applied later: what placing an
// op or a transport's streams produces, so a live cluster applies it and a
// unit test inspects it.
#pragma once
#include <stdint.h>

#include <vector>

#include "driver/chip_writer.h"

namespace weft {

class MemoryImage final : public ChipWriter {
public:
    struct Write {
        uint32_t chip;
        uint64_t address;
        std::vector<uint8_t> bytes;
    };
    void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) override;
    void clear(uint32_t chip, uint64_t address, size_t bytes) override;
    void apply(ChipWriter& to) const;
    const std::vector<Write>& writes() const { return writes_; }

private:
    std::vector<Write> writes_;
};

}  // namespace weft
