// A collective op at the overlay level (the classic collective algorithms (Thakur et al.), "Layers of Abstraction"):
// which bytes go from which chip to which, in which round, and whether the
// receiver reduces them into its copy. Chips need not be neighbours; the
// lowering (lowering.h) routes each transfer over the cables and forwards it
// through the chips on the way.
#pragma once
#include <stdint.h>

#include <vector>

#include "weft/abi/pages.h"

namespace weft::ccl {

using abi::Pages;

// The bytes [offset, offset + len) of a run; for a run of several pages both
// must fall on page boundaries (contiguous runs: anywhere).
Pages cut(const Pages& p, uint64_t offset, uint64_t len);
// Whether two runs touch a common byte.
bool overlaps(const Pages& a, const Pages& b);
// A contiguous run of several pages as one page: what a worker moves fastest.
Pages collapsed(const Pages& p);

struct Transfer {
    uint32_t round = 0;                   // transfers of one round may run at once; rounds in order
    uint32_t src_chip = 0, dst_chip = 0;  // equal: a local copy
    Pages src, dst;
    bool reduce = false;  // dst = with op src (else dst = src)
    // A reduction's other operand, on dst's chip and of dst's size; empty: dst
    // itself. A first reduction into an output reads the input it would
    // otherwise have needed copied there first.
    Pages with;
};

struct Plan {
    std::vector<Transfer> transfers;
    uint64_t piece_bytes = 0;  // the algorithm's pipelining unit (0: the lowering's default)
    void copy(uint32_t round, uint32_t chip, Pages src, Pages dst) { add(round, chip, chip, src, dst, false, Pages{}); }
    void send(uint32_t round, uint32_t from, Pages src, uint32_t to, Pages dst, bool reduce = false) {
        add(round, from, to, src, dst, reduce, Pages{});
    }
    // dst = with op src on `to`.
    void send_reduce(uint32_t round, uint32_t from, Pages src, uint32_t to, Pages dst, Pages with) {
        add(round, from, to, src, dst, true, with);
    }
    // dst = dst op src on `chip` (both contiguous).
    void reduce_local(uint32_t round, uint32_t chip, Pages src, Pages dst) {
        add(round, chip, chip, src, dst, true, Pages{});
    }

private:
    void add(uint32_t round, uint32_t from, uint32_t to, Pages src, Pages dst, bool reduce, Pages with);
};

}  // namespace weft::ccl
