#include "ccl/plan.h"

#include "common/error.h"

namespace weft::ccl {

Pages cut(const Pages& p, uint64_t offset, uint64_t len) {
    if (offset + len > p.bytes()) throw Error("internal: a cut of a run of pages runs past its end");
    if (p.contiguous()) return Pages::run(p.base + offset, len);
    if (offset % p.page_size || len % p.page_size) throw Error("internal: a strided run cut off a page boundary");
    return {p.base + offset / p.page_size * p.stride, p.page_size, len / p.page_size, p.stride};
}

bool overlaps(const Pages& a, const Pages& b) {
    if (a.bytes() == 0 || b.bytes() == 0) return false;
    if (a.end() <= b.base || b.end() <= a.base) return false;
    // Two interleaved runs of the same stride (blocks of a concatenation along
    // an inner dimension) touch only if their pages meet modulo the stride.
    if (!a.contiguous() && !b.contiguous() && a.stride == b.stride) {
        const uint64_t stride = a.stride, x = a.base % stride, y = b.base % stride;
        const uint64_t xl = a.page_size, yl = b.page_size;
        return (x < y + yl && y < x + xl) || (x + xl > stride && y < x + xl - stride) ||
               (y + yl > stride && x < y + yl - stride);
    }
    return true;
}

Pages collapsed(const Pages& p) {
    if (!p.contiguous()) return p;
    return Pages::run(p.base, p.bytes());
}

void Plan::add(uint32_t round, uint32_t from, uint32_t to, Pages src, Pages dst, bool reduce, Pages with) {
    if (src.bytes() != dst.bytes()) throw Error("internal: a transfer's source and destination differ in size");
    if (with.bytes() != 0 && (with.bytes() != dst.bytes() || !with.contiguous() || !dst.contiguous()))
        throw Error("internal: a reduction's other operand differs from its destination in size or is not contiguous");
    if (src.bytes() == 0) return;  // remainders can leave a rank with nothing to move
    transfers.push_back({round, from, to, src, dst, reduce, with});
}

}  // namespace weft::ccl
