// What the plan builders share (algorithms.cpp, swing.cpp): a plan under
// construction with the op's layout and overlay orders, the fold of a rank
// count onto a power of two, and a mesh's chips by coordinates.
#pragma once
#include <stdint.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "ccl/collective.h"

namespace weft::ccl::planning {

struct Builder {
    const PlanContext& c;
    const OpLayout& l;
    uint32_t n;
    Plan plan;

    explicit Builder(const PlanContext& ctx) : c(ctx), l(ctx.layout), n(ctx.layout.ranks) {}
    uint32_t ring(int64_t pos) const { return c.ring[static_cast<size_t>(((pos % n) + n) % n)]; }
    uint32_t ring_pos(uint32_t chip) const {
        return static_cast<uint32_t>(std::find(c.ring.begin(), c.ring.end(), chip) - c.ring.begin());
    }
    // Share k of `shares` of a span, cut at grain boundaries: its offset and length.
    std::pair<uint64_t, uint64_t> share(const Pages& s, uint32_t k, uint32_t shares) const {
        const uint64_t grain = std::max<uint64_t>(s.grain(), l.element), grains = s.bytes() / grain;
        const uint64_t lo = grains * k / shares * grain,
                       hi = k + 1 == shares ? s.bytes() : grains * (k + 1) / shares * grain;
        return {lo, hi - lo};
    }
    // Cuts a span in two at a grain boundary near the middle (halves of a block): the two lengths.
    std::pair<uint64_t, uint64_t> halves(const Pages& s) const {
        const uint64_t first = share(s, 0, 2).second;
        return {first, s.bytes() - first};
    }
};

// The power-of-two core of recursive doubling and halving-doubling: rank
// counts that are not a power of two fold their first 2r ranks in pairs first
// (the even position's vector reduced into the odd one's) and hand the sum
// back last (MPICH's way); the p2 = n - r ranks left take part as virtual
// ranks 0..p2-1. Swaps land in work and are reduced after, so a rank never
// overwrites what it is still sending.
struct PowerOfTwo {
    Builder& b;
    Pages in, out, work;
    uint32_t p2 = 1, extra = 0, round = 1;

    explicit PowerOfTwo(Builder& builder)
        : b(builder), in(b.l.whole(b.l.input)), out(b.l.whole(b.l.output)), work(b.l.whole(b.l.work)) {
        while (p2 * 2 <= b.n) p2 *= 2;
        extra = b.n - p2;
    }
    uint32_t chip(uint32_t v) const { return b.ring(v < extra ? 2 * v + 1 : v + extra); }
    // Bytes [off, off + len) of a whole-vector span.
    static Pages part(const Pages& s, uint64_t off, uint64_t len) { return Pages::run(s.base + off, len); }
    void send_into_work(uint32_t from, uint32_t to, uint64_t off, uint64_t len) {
        if (len) b.plan.send(round, from, part(out, off, len), to, part(work, off, len));
    }
    void reduce_work(uint32_t on, uint64_t off, uint64_t len) {
        if (len) b.plan.reduce_local(round + 1, on, part(work, off, len), part(out, off, len));
    }
    void fold() {
        for (uint32_t r = 0; r < b.n; ++r) b.plan.copy(0, r, in, out);
        if (!extra) return;
        for (uint32_t v = 0; v < extra; ++v) {
            send_into_work(b.ring(2 * v), b.ring(2 * v + 1), 0, out.bytes());
            reduce_work(b.ring(2 * v + 1), 0, out.bytes());
        }
        round += 2;
    }
    void unfold() {
        for (uint32_t v = 0; v < extra; ++v) b.plan.send(round, b.ring(2 * v + 1), out, b.ring(2 * v), out);
    }
};

struct Grid {
    uint32_t w = 0, h = 0;
    std::vector<uint32_t> chip;  // x + y * w -> chip id
    uint32_t at(uint32_t x, uint32_t y) const { return chip[(x % w) + (y % h) * w]; }
};

// The cluster's one mesh or torus of at least 2x2 chips, if it is one.
std::optional<Grid> find_grid(const Builder& b);
// The same; throws weft::Error naming the need on any other cluster.
Grid grid_of(const Builder& b);

}  // namespace weft::ccl::planning
