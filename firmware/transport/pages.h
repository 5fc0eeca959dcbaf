// A run of pages in one core's view of memory: page i at base + i * stride,
// page_size bytes each (stride >= page_size). Tensors are cut into such runs
// by the host and moved as one byte stream.
#pragma once
#include <stdint.h>

namespace weft::transport {

struct Pages {
    uint64_t base;
    uint32_t page_size;
    uint32_t count;
    uint64_t stride;

    uint64_t bytes() const { return uint64_t(page_size) * count; }
};

}  // namespace weft::transport
