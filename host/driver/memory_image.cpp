#include "driver/memory_image.h"

namespace weft {

void MemoryImage::write(uint32_t chip, uint64_t address, const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    writes_.push_back({chip, address, std::vector<uint8_t>(p, p + bytes)});
}

void MemoryImage::clear(uint32_t chip, uint64_t address, size_t bytes) {
    writes_.push_back({chip, address, std::vector<uint8_t>(bytes, 0)});
}

void MemoryImage::apply(ChipWriter& to) const {
    for (const Write& w : writes_) to.write(w.chip, w.address, w.bytes.data(), w.bytes.size());
}

}  // namespace weft
