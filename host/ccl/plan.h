// A collective op at the overlay level (the classic collective algorithms (Thakur et al.), "Layers of Abstraction"):
// which bytes go from which chip to which, in which round, and whether the
// receiver reduces them into its copy. Chips need not be neighbours; the
// lowering (lowering.h) routes each transfer over the cables and forwards it
// through the chips on the way.
#pragma once
#include <stdint.h>

#include <vector>

#include "weft/abi/ccl.h"

namespace weft::ccl {

// A run of pages in one chip's memory: page i at base + i * stride. A single
// page (count 1) is plain contiguous bytes.
struct Span {
    uint64_t base = 0;
    uint64_t page_size = 0;
    uint64_t count = 1;
    uint64_t stride = 0;

    static Span bytes(uint64_t base, uint64_t len) { return {base, len, 1, len}; }
    uint64_t size() const { return page_size * count; }
    bool contiguous() const { return count <= 1 || stride == page_size; }
    // The bytes [offset, offset + len) of the run; for a run of several pages
    // both must fall on page boundaries (contiguous runs: anywhere).
    Span sub(uint64_t offset, uint64_t len) const;
    // The smallest unit sub() can cut at.
    uint64_t grain() const { return contiguous() ? 1 : page_size; }
    bool overlaps(const Span& o) const;
    abi::CclPages pages() const;
};

struct Transfer {
    uint32_t round = 0;                   // transfers of one round may run at once; rounds in order
    uint32_t src_chip = 0, dst_chip = 0;  // equal: a local copy
    Span src, dst;
    bool reduce = false;  // dst = with op src (else dst = src)
    // A reduction's other operand, on dst's chip and of dst's size; empty: dst
    // itself. A first reduction into an output reads the input it would
    // otherwise have needed copied there first.
    Span with;
};

struct Plan {
    std::vector<Transfer> transfers;
    uint64_t piece_bytes = 0;  // the algorithm's pipelining unit (0: the lowering's default)
    void copy(uint32_t round, uint32_t chip, Span src, Span dst) { add(round, chip, chip, src, dst, false, Span{}); }
    void send(uint32_t round, uint32_t from, Span src, uint32_t to, Span dst, bool reduce = false) {
        add(round, from, to, src, dst, reduce, Span{});
    }
    // dst = with op src on `to`.
    void send_reduce(uint32_t round, uint32_t from, Span src, uint32_t to, Span dst, Span with) {
        add(round, from, to, src, dst, true, with);
    }
    // dst = dst op src on `chip` (both contiguous).
    void reduce_local(uint32_t round, uint32_t chip, Span src, Span dst) {
        add(round, chip, chip, src, dst, true, Span{});
    }

private:
    void add(uint32_t round, uint32_t from, uint32_t to, Span src, Span dst, bool reduce, Span with);
};

}  // namespace weft::ccl
