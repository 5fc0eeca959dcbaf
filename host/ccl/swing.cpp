// Swing all-reduce (De Sensi et al., "Swing: Short-cutting Rings for Higher
// Bandwidth Allreduce", NSDI 2024): halving-doubling's reduce-scatter and
// all-gather, with partners chosen to be near on a ring or torus. At step s a
// rank swaps with the one rho(s) = 1, -1, 3, -5, 11, ... places away (even
// ranks one way, odd ranks the other), so the distances grow as 1, 1, 3, 5
// where recursive halving's grow as 1, 2, 4, 8.
//
// A step pairs ranks over every other cable of a ring, both ways; its mirror
// image (even ranks going the other way) pairs them over the others. On a
// mesh or torus whose sides are powers of two the steps take turns between
// the dimensions, each step within one row or one column. The vector is cut
// into parts run at once, one for each first dimension and mirror image, so
// every cable carries data both ways in every step (the paper's multiport
// Swing): four parts on a grid, two on a ring, one for a vector too small
// for its bytes to matter. Any other rank count runs the one-dimensional
// schedule over the ring order, its first ranks folded in pairs onto a power
// of two first, as recursive doubling does.
//
// Which ranks a rank's data can still reach from step s on forms, for every
// s, a partition of the ranks into classes of 2^(steps - s) (the schedule is
// a butterfly); blocks are numbered in an order that makes every class one
// run of blocks, so each step sends one contiguous half of what a rank holds.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "ccl/algorithms.h"
#include "ccl/plan_builder.h"
#include "common/error.h"

namespace weft::ccl {
namespace {

using planning::Builder;
using planning::PowerOfTwo;

// sum of (-2)^i for i = 0..step: the distance of a step within one dimension.
int64_t rho(uint32_t step) {
    int64_t sum = 0, term = 1;
    for (uint32_t i = 0; i <= step; ++i, term *= -2) sum += term;
    return sum;
}

uint32_t log2_of(uint32_t power) {
    uint32_t bits = 0;
    while ((1u << bits) < power) ++bits;
    return bits;
}

bool is_power_of_two(uint32_t v) { return v && (v & (v - 1)) == 0; }

// The partner of every rank at every step. Ranks are numbered x + y * w over
// `dims` (one or two sides, each a power of two); the steps take turns over
// the dimensions from `first`, a dimension skipped once its steps are done.
// `mirrored`: even ranks go the negative way and odd ranks the positive one.
std::vector<std::vector<uint32_t>> partners(const std::vector<uint32_t>& dims, size_t first, bool mirrored) {
    uint32_t ranks = 1;
    std::vector<uint32_t> left, stride, done(dims.size(), 0);
    for (uint32_t d : dims) stride.push_back(ranks), ranks *= d, left.push_back(log2_of(d));
    std::vector<std::vector<uint32_t>> steps;
    for (size_t k = first; std::accumulate(left.begin(), left.end(), 0u) > 0; k = (k + 1) % dims.size()) {
        if (!left[k]) continue;
        --left[k];
        const int64_t distance = mirrored ? -rho(done[k]++) : rho(done[k]++);
        std::vector<uint32_t> peer(ranks);
        for (uint32_t v = 0; v < ranks; ++v) {
            const int64_t x = v / stride[k] % dims[k], side = dims[k];
            const int64_t moved = ((x + (x % 2 == 0 ? distance : -distance)) % side + side) % side;
            peer[v] = static_cast<uint32_t>(v + (moved - x) * stride[k]);
        }
        steps.push_back(std::move(peer));
    }
    return steps;
}

// One Swing over `ranks` ranks: each step's partners, and the run of blocks
// [lo, hi) each rank is responsible for before each step, in block order.
struct Schedule {
    std::vector<std::vector<uint32_t>> peer;    // peer[s][v]
    std::vector<std::vector<uint32_t>> lo, hi;  // [s][v]: before step s; [steps][v]: v's own block
};

// Throws if a step does not pair every class with one other class of its
// size (a schedule that would add a rank's data twice or never).
Schedule schedule_of(std::vector<std::vector<uint32_t>> peer, uint32_t ranks) {
    const size_t steps = peer.size();
    auto no_butterfly = [&] {
        return Error("internal: the swing schedule over " + std::to_string(ranks) + " ranks is no butterfly");
    };
    // cls[s][v]: the class of v after step s, named by its least rank.
    std::vector<std::vector<uint32_t>> cls(steps + 1, std::vector<uint32_t>(ranks));
    std::iota(cls[steps].begin(), cls[steps].end(), 0u);
    for (size_t s = steps; s-- > 0;) {
        std::vector<uint32_t> paired(ranks, ranks);  // class -> the class its members swap with
        for (uint32_t v = 0; v < ranks; ++v) {
            const uint32_t mine = cls[s + 1][v], theirs = cls[s + 1][peer[s][v]];
            if (peer[s][peer[s][v]] != v || mine == theirs || (paired[mine] != ranks && paired[mine] != theirs))
                throw no_butterfly();
            paired[mine] = theirs;
            cls[s][v] = std::min(mine, theirs);
        }
    }
    // Blocks ordered by class from coarse to fine: every class is one run.
    std::vector<uint32_t> order(ranks);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        for (size_t s = 1; s <= steps; ++s)
            if (cls[s][a] != cls[s][b]) return cls[s][a] < cls[s][b];
        return false;
    });
    std::vector<uint32_t> at(ranks);
    for (uint32_t i = 0; i < ranks; ++i) at[order[i]] = i;
    Schedule out{std::move(peer), std::vector<std::vector<uint32_t>>(steps + 1, std::vector<uint32_t>(ranks)),
                 std::vector<std::vector<uint32_t>>(steps + 1, std::vector<uint32_t>(ranks))};
    for (size_t s = 0; s <= steps; ++s) {
        std::vector<uint32_t> lo(ranks, ranks), hi(ranks, 0);
        for (uint32_t v = 0; v < ranks; ++v) {
            const uint32_t c = cls[s][v];
            lo[c] = std::min(lo[c], at[v]), hi[c] = std::max(hi[c], at[v] + 1);
        }
        for (uint32_t v = 0; v < ranks; ++v) {
            out.lo[s][v] = lo[cls[s][v]], out.hi[s][v] = hi[cls[s][v]];
            if (out.hi[s][v] - out.lo[s][v] != ranks >> s) throw no_butterfly();
        }
    }
    return out;
}

// A Swing over elements [first, first + count) of the vector.
struct Part {
    Schedule sched;
    uint64_t first = 0, count = 0;
};

// Below this many bytes a block of a part, the op is paid in steps and
// doorbells, not in bytes on cables: one part does as many steps with a
// quarter of the messages.
constexpr uint64_t kMinPartBlock = 128;

// One part for each first dimension and mirror image, in equal shares; one
// part alone for a small vector.
std::vector<Part> parts_of(const std::vector<uint32_t>& sides, uint32_t ranks, uint64_t elements, uint64_t element) {
    std::vector<Part> parts;
    const size_t many = sides.size() * 2;
    const size_t count = elements * element >= many * ranks * kMinPartBlock ? many : 1;
    for (size_t i = 0; i < count; ++i)  // part i: dimension i / 2 first, mirrored if i is odd
        parts.push_back({schedule_of(partners(sides, i / 2, i % 2), ranks), elements * i / count,
                         elements * (i + 1) / count - elements * i / count});
    return parts;
}

struct Swing {
    Builder& b;
    PowerOfTwo p;
    std::vector<uint32_t> sides;
    std::vector<uint32_t> chip_of;  // rank (grid place or folded rank) -> chip
    std::vector<Part> parts;

    // Over the cluster's mesh or torus where both its sides are powers of
    // two, else over the ring order folded onto a power of two.
    explicit Swing(Builder& builder) : b(builder), p(builder) {
        if (std::optional<planning::Grid> g = planning::find_grid(b);
            g && is_power_of_two(g->w) && is_power_of_two(g->h)) {
            sides = {g->w, g->h};
            chip_of = std::move(g->chip);
        } else {
            sides = {p.p2};
            for (uint32_t v = 0; v < p.p2; ++v) chip_of.push_back(p.chip(v));
        }
        parts = parts_of(sides, p.p2, b.l.elements, b.l.element);
    }
    size_t steps() const { return parts.front().sched.peer.size(); }
    // Bytes of blocks [lo, hi) of a part, in the output.
    Pages blocks(const Part& h, uint32_t lo, uint32_t hi) const {
        auto at = [&](uint32_t k) { return (h.first + k * h.count / p.p2) * b.l.element; };
        return PowerOfTwo::part(p.out, at(lo), at(hi) - at(lo));
    }
    void send(const Pages& s, uint32_t from, uint32_t to, bool reduce) {
        if (s.bytes()) b.plan.send(p.round, chip_of[from], s, chip_of[to], s, reduce);
    }
    // A rank's data for its partner's half goes straight into the partner's
    // output, reduced on arrival: the half a rank keeps is not the half it
    // sends, so nothing it still sends is overwritten, and each step is one
    // round where a swap through work would take two.
    void reduce_scatter() {
        for (size_t s = 0; s < steps(); ++s, ++p.round)
            for (const Part& h : parts)
                for (uint32_t v = 0; v < p.p2; ++v) {
                    const uint32_t peer = h.sched.peer[s][v];
                    send(blocks(h, h.sched.lo[s + 1][peer], h.sched.hi[s + 1][peer]), v, peer, true);
                }
    }
    void all_gather() {
        for (size_t s = steps(); s-- > 0; ++p.round)
            for (const Part& h : parts)
                for (uint32_t v = 0; v < p.p2; ++v)
                    send(blocks(h, h.sched.lo[s + 1][v], h.sched.hi[s + 1][v]), v, h.sched.peer[s][v], false);
    }
};

void all_reduce_swing(Builder& b) {
    Swing swing(b);
    swing.p.fold();
    swing.reduce_scatter();
    swing.all_gather();
    swing.p.unfold();
}

}  // namespace

namespace plans {

Plan all_reduce_swing(const PlanContext& ctx) {
    Builder b(ctx);
    ccl::all_reduce_swing(b);
    return std::move(b.plan);
}

}  // namespace plans

}  // namespace weft::ccl
