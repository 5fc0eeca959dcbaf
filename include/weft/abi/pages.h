// A run of pages in one core's view of memory: page i at base + i * stride,
// page_size bytes each (stride >= page_size; one page is plain contiguous
// bytes). The one type for it: the host's plans cut tensors into such runs,
// a CCL worker's program carries them, and the EDM and fabric workers stream
// them as one byte sequence.
#pragma once
#include <stdint.h>

namespace weft::abi {

struct Pages {
    // 64 bits each, so a run may span a silicon board's whole DRAM.
    uint64_t base;
    uint64_t page_size;
    uint64_t count;
    uint64_t stride;

    // `len` contiguous bytes from `base`, as one page (none when len is 0).
    static constexpr Pages run(uint64_t base, uint64_t len) { return {base, len, len ? 1u : 0u, len}; }
    constexpr uint64_t bytes() const { return page_size * count; }
    constexpr bool contiguous() const { return count <= 1 || stride == page_size; }
    // The smallest unit a run can be cut at.
    constexpr uint64_t grain() const { return contiguous() ? 1 : page_size; }
    // One past the last byte touched.
    constexpr uint64_t end() const { return count ? base + (count - 1) * stride + page_size : base; }
};
static_assert(sizeof(Pages) == 32, "Pages layout");

}  // namespace weft::abi
