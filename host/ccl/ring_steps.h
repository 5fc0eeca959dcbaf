// Steps of a ring among some of the chips, in place in an op's output, that
// several algorithms build from (the 2d all-reduce's rows and columns, the
// hierarchical all-reduce's exchange among systems).
#pragma once
#include <stdint.h>

#include <vector>

#include "ccl/collective.h"
#include "ccl/plan.h"

namespace weft::ccl {

// Part k of n of the elements [lo, lo + len) of a whole-vector buffer at `buf`.
inline Pages part_of(const OpLayout& l, uint64_t buf, uint64_t lo, uint64_t len, uint32_t k, uint32_t n) {
    const uint64_t a = lo + len * k / n, z = lo + len * (k + 1) / n;
    return Pages::run(buf + a * l.element, (z - a) * l.element);
}

// A ring reduce-scatter of `len` elements from `lo` in place in the output
// among `members` (ring order), from `round`: member i ends with part i of
// n summed over them all. Returns the next free round.
inline uint32_t ring_reduce_scatter(Plan& plan, const OpLayout& l, const std::vector<uint32_t>& members, uint64_t lo,
                                    uint64_t len, uint32_t round) {
    const auto n = static_cast<uint32_t>(members.size());
    for (uint32_t s = 0; s + 1 < n; ++s)
        for (uint32_t i = 0; i < n; ++i) {
            const Pages sh = part_of(l, l.output, lo, len, (i + 2 * n - s - 1) % n, n);
            plan.send(round + s, members[i], sh, members[(i + 1) % n], sh, true);
        }
    return round + (n ? n - 1 : 0);
}

// The matching all-gather: member i starts with part i and ends with all n.
inline uint32_t ring_all_gather(Plan& plan, const OpLayout& l, const std::vector<uint32_t>& members, uint64_t lo,
                                uint64_t len, uint32_t round) {
    const auto n = static_cast<uint32_t>(members.size());
    for (uint32_t t = 0; t + 1 < n; ++t)
        for (uint32_t i = 0; i < n; ++i) {
            const Pages sh = part_of(l, l.output, lo, len, (i + n - t) % n, n);
            plan.send(round + t, members[i], sh, members[(i + 1) % n], sh);
        }
    return round + (n ? n - 1 : 0);
}

}  // namespace weft::ccl
