#include "ccl/plan.h"

#include "common/error.h"

namespace weft::ccl {

Span Span::sub(uint64_t offset, uint64_t len) const {
    if (offset + len > size()) throw Error("internal: a span cut runs past its end");
    if (contiguous()) return bytes(base + offset, len);
    if (offset % page_size || len % page_size) throw Error("internal: a strided span cut off a page boundary");
    return {base + offset / page_size * stride, page_size, len / page_size, stride};
}

bool Span::overlaps(const Span& o) const {
    if (size() == 0 || o.size() == 0) return false;
    const uint64_t end = contiguous() ? base + size() : base + (count - 1) * stride + page_size;
    const uint64_t oend = o.contiguous() ? o.base + o.size() : o.base + (o.count - 1) * o.stride + o.page_size;
    if (end <= o.base || oend <= base) return false;
    // Two interleaved runs of the same stride (blocks of a concatenation along
    // an inner dimension) touch only if their pages meet modulo the stride.
    if (!contiguous() && !o.contiguous() && stride == o.stride) {
        const uint64_t a = base % stride, b = o.base % stride;
        auto meets = [&](uint64_t x, uint64_t xl, uint64_t y, uint64_t yl) {
            return (x < y + yl && y < x + xl) || (x + xl > stride && y < x + xl - stride) ||
                   (y + yl > stride && x < y + yl - stride);
        };
        return meets(a, page_size, b, o.page_size);
    }
    return true;
}

abi::CclPages Span::pages() const {
    abi::CclPages p{};
    p.base = base;
    if (contiguous()) {
        if (size() > 0xffffffffull) throw Error("internal: a contiguous span over 4 GiB");
        p.page_size = static_cast<uint32_t>(size());
        p.count = size() ? 1 : 0;
        p.stride = size();
    } else {
        p.page_size = static_cast<uint32_t>(page_size);
        p.count = static_cast<uint32_t>(count);
        p.stride = stride;
    }
    return p;
}

void Plan::add(uint32_t round, uint32_t from, uint32_t to, Span src, Span dst, bool reduce, Span with) {
    if (src.size() != dst.size()) throw Error("internal: a transfer's source and destination differ in size");
    if (with.size() != 0 && (with.size() != dst.size() || !with.contiguous() || !dst.contiguous()))
        throw Error("internal: a reduction's other operand differs from its destination in size or is not contiguous");
    if (src.size() == 0) return;  // remainders can leave a rank with nothing to move
    transfers.push_back({round, from, to, src, dst, reduce, with});
}

}  // namespace weft::ccl
