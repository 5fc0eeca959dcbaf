// The overlay plans of every collective algorithm (seeds 000, 001, 004).
// Positions are places in the overlay order; blocks and shards are named by
// the chip (rank) that owns them.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "ccl/algorithms.h"
#include "ccl/plan_builder.h"
#include "ccl/ring_steps.h"
#include "common/error.h"

namespace weft::ccl {
namespace {

using planning::Builder;
using planning::Grid;
using planning::grid_of;
using planning::PowerOfTwo;

// ---- all-gather (tt-metal's CCL developer guide "(Ring/Line) All Gather") ----

void all_gather_ring(Builder& b, bool bidir_halves, bool halfway) {
    const uint32_t n = b.n;
    for (uint32_t r = 0; r < n; ++r) b.plan.copy(0, r, b.l.own_input(r), b.l.output_block(r));
    // dir +1: to the next position; -1: to the previous. part: bytes [off, off+len) of each block.
    auto walk = [&](int dir, uint32_t steps, bool half, int which) {
        for (uint32_t t = 0; t < steps; ++t)
            for (uint32_t i = 0; i < n; ++i) {
                const uint32_t owner = b.ring(int64_t(i) - dir * int64_t(t));
                Pages src = t == 0 ? b.l.own_input(owner) : b.l.output_block(owner);
                Pages dst = b.l.output_block(owner);
                if (half) {
                    auto [a, rest] = b.halves(dst);
                    const uint64_t off = which == 0 ? 0 : a, len = which == 0 ? a : rest;
                    src = cut(src, off, len);
                    dst = cut(dst, off, len);
                }
                b.plan.send(1 + t, b.ring(i), src, b.ring(int64_t(i) + dir), dst);
            }
    };
    if (bidir_halves) {
        walk(+1, n - 1, true, 0);
        walk(-1, n - 1, true, 1);
    } else if (halfway) {
        walk(+1, ag_forward_steps(n, true), false, 0);
        walk(-1, ag_reverse_steps(n, true), false, 0);
    } else {
        walk(+1, n - 1, false, 0);
    }
}

void all_gather_line(Builder& b) {
    const auto& line = b.c.line;
    const uint32_t n = b.n;
    for (uint32_t r = 0; r < n; ++r) b.plan.copy(0, r, b.l.own_input(r), b.l.output_block(r));
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t owner = line[k];
        const Pages in = b.l.own_input(owner), out = b.l.output_block(owner);
        for (uint32_t j = k; j + 1 < n; ++j) b.plan.send(1 + j - k, line[j], j == k ? in : out, line[j + 1], out);
        for (uint32_t j = k; j > 0; --j) b.plan.send(1 + k - j, line[j], j == k ? in : out, line[j - 1], out);
    }
}

// ---- reduce-scatter (tt-metal's CCL developer guide "(Ring) Reduce Scatter"; bidirectional and line beyond it) ----

void reduce_scatter(Builder& b, bool line, bool bidir) {
    const uint32_t n = b.n;
    for (uint32_t r = 0; r < n; ++r) b.plan.copy(0, r, b.l.whole(b.l.input), b.l.whole(b.l.work));
    if (line) {
        const auto& line = b.c.line;
        for (uint32_t k = 0; k < n; ++k) {
            const Pages blk = b.l.work_block(line[k]);
            for (uint32_t j = 0; j < k; ++j) b.plan.send(1 + j, line[j], blk, line[j + 1], blk, true);
            for (uint32_t j = n - 1; j > k; --j) b.plan.send(1 + (n - 1 - j), line[j], blk, line[j - 1], blk, true);
        }
    } else {
        for (uint32_t s = 0; s + 1 < n; ++s)
            for (uint32_t i = 0; i < n; ++i) {
                // Forward: position i passes on the block of position i-s-1, so that
                // after n-1 steps every position holds its own chip's block.
                Pages fwd = b.l.work_block(b.ring(int64_t(i) - s - 1));
                if (bidir) fwd = cut(fwd, 0, b.halves(fwd).first);
                b.plan.send(1 + s, b.ring(i), fwd, b.ring(i + 1), fwd, true);
                if (!bidir) continue;
                Pages rev = b.l.work_block(b.ring(int64_t(i) + s + 1));
                const auto [a, rest] = b.halves(rev);
                rev = cut(rev, a, rest);
                b.plan.send(1 + s, b.ring(i), rev, b.ring(int64_t(i) - 1), rev, true);
            }
    }
    for (uint32_t r = 0; r < n; ++r) b.plan.copy(n, r, b.l.work_block(r), b.l.own_output(r));
}

// ---- all-reduce (the CTRING design CTRING, the classic collective algorithms (Thakur et al.)'s four others) ----

void all_reduce_ring(Builder& b) {
    const uint32_t n = b.n;
    const uint64_t total = b.l.elements * b.l.element;
    const CtringParams p = ctring_params(total, n, b.l.element, b.c.ctring);
    b.plan.piece_bytes = p.chunk_size;
    const uint64_t min_shard = std::max<uint64_t>(1, (b.c.ctring.min_shard_size + b.l.element - 1) / b.l.element);
    const uint32_t fwd = ag_forward_steps(n, p.bidir_ag), rev = ag_reverse_steps(n, p.bidir_ag);
    const uint32_t rounds = 1 + (n - 1) + fwd;
    const uint64_t part_elems = std::max<uint64_t>(1, p.partition_bytes / b.l.element);
    uint32_t base = 0;
    for (uint64_t first = 0; first < b.l.elements; first += part_elems, base += rounds) {
        const uint64_t len = std::min(part_elems, b.l.elements - first);
        const uint64_t shard = std::max((len + n - 1) / n, min_shard);
        auto span = [&](uint64_t buf, uint32_t k) {
            const uint64_t s0 = std::min(len, k * shard), s1 = std::min(len, (k + 1) * shard);
            return Pages::run(buf + (first + s0) * b.l.element, (s1 - s0) * b.l.element);
        };
        // No copy of the input into the output first: a rank reduces each
        // shard it receives exactly once during the reduce-scatter, into the
        // output from its input (step 0 sends from the input); the all-gather
        // then writes every shard but the one it owns.
        if (n == 1)
            b.plan.copy(base, b.ring(0), Pages::run(b.l.input + first * b.l.element, len * b.l.element),
                        Pages::run(b.l.output + first * b.l.element, len * b.l.element));
        // Half `which` (0 first, 1 second, -1 all) of shard k in buffer buf.
        auto part = [&](uint64_t buf, uint32_t k, int which) {
            const Pages sh = span(buf, k);
            if (which < 0) return sh;
            const auto [first_half, second_half] = b.halves(sh);
            return which == 0 ? cut(sh, 0, first_half) : cut(sh, first_half, second_half);
        };
        auto reduce_step = [&](uint32_t s, uint32_t i, uint32_t shard, int64_t to_pos, int which) {
            const Pages src = part(s == 0 ? b.l.input : b.l.output, shard, which);
            b.plan.send_reduce(base + 1 + s, b.ring(i), src, b.ring(to_pos), part(b.l.output, shard, which),
                               part(b.l.input, shard, which));
        };
        for (uint32_t s = 0; s + 1 < n; ++s)
            for (uint32_t i = 0; i < n; ++i) {
                reduce_step(s, i, rs_send_shard(i, s, n), int64_t(i) + 1, p.bidir_rs ? 0 : -1);
                if (p.bidir_rs) reduce_step(s, i, rs_rev_send_shard(i, s, n), int64_t(i) - 1, 1);
            }
        for (uint32_t t = 0; t < std::max(fwd, rev); ++t)
            for (uint32_t i = 0; i < n; ++i) {
                if (t < fwd) {
                    const Pages sh = span(b.l.output, ag_send_shard(i, t, n));
                    b.plan.send(base + n + t, b.ring(i), sh, b.ring(i + 1), sh);
                }
                if (t < rev) {
                    const Pages sh = span(b.l.output, ag_rev_send_shard(i, t, n));
                    b.plan.send(base + n + t, b.ring(i), sh, b.ring(int64_t(i) - 1), sh);
                }
            }
    }
}

// Every rank receives every other rank's vector and sums all n itself, in
// the same order on every rank (chip 0's vector first, then chip 1's, its own
// in its turn): float sums are not associative, so any other order would
// leave the ranks' results with different bits.
void all_reduce_full_mesh(Builder& b) {
    const uint32_t n = b.n;
    Pages in = b.l.whole(b.l.input);
    const Pages out = b.l.whole(b.l.output);
    if (b.l.input == b.l.output) {  // in place: the vectors arriving would overwrite the one still to send
        for (uint32_t rank = 0; rank < n; ++rank) b.plan.copy(0, rank, in, b.l.whole(b.l.work));
        in = b.l.whole(b.l.work);
    }
    for (uint32_t rank = 0; rank < n; ++rank)
        for (uint32_t from = 0; from < n; ++from) {
            if (from == 0 && rank == 0) b.plan.copy(1, rank, in, out);
            else if (from == 0)
                b.plan.send(1, from, in, rank, out);
            else if (from == rank)
                b.plan.reduce_local(1 + from, rank, in, out);
            else
                b.plan.send(1 + from, from, in, rank, out, true);
        }
}

// Recursive doubling (Thakur, Rabenseifner and Gropp): log2(p) rounds in
// which each rank swaps its partial sum with the rank whose virtual rank
// differs in one bit and adds it to its own. Few steps, whole vectors: for
// small ops, whose time is the number of steps. The two partners compute
// a op b and b op a, the same bits (the reductions are commutative), so every
// rank ends with identical results.
void all_reduce_recursive_doubling(Builder& b) {
    PowerOfTwo p(b);
    p.fold();
    for (uint32_t d = 1; d < p.p2; d *= 2, p.round += 2)
        for (uint32_t v = 0; v < p.p2; ++v) {
            p.send_into_work(p.chip(v), p.chip(v ^ d), 0, p.out.bytes());
            p.reduce_work(p.chip(v), 0, p.out.bytes());
        }
    p.unfold();
}

// Rabenseifner's halving-doubling: a reduce-scatter by recursive halving
// (each round a rank keeps half of its range, sends the other half to its
// partner and reduces the half it gets), then an all-gather by recursive
// doubling. log2(p) rounds each way like recursive doubling, but each moves
// half as much as the last: for medium sizes. Each block is reduced on one
// rank only and copied from there, so every rank has the same bits.
void all_reduce_halving_doubling(Builder& b) {
    PowerOfTwo p(b);
    p.fold();
    const uint64_t element = b.l.element, elements = b.l.elements;
    // Virtual rank v's range of blocks is [lo[v], hi[v]); block k starts at element k * elements / p2.
    auto at = [&](uint32_t block) { return block * elements / p.p2 * element; };
    std::vector<uint32_t> lo(p.p2, 0), hi(p.p2, p.p2);
    for (uint32_t d = p.p2 / 2; d >= 1; d /= 2, p.round += 2)
        for (uint32_t v = 0; v < p.p2; ++v) {
            const uint32_t mid = lo[v] + (hi[v] - lo[v]) / 2;
            const bool lower = (v & d) == 0;
            const uint32_t send_lo = lower ? mid : lo[v], send_hi = lower ? hi[v] : mid;
            p.send_into_work(p.chip(v), p.chip(v ^ d), at(send_lo), at(send_hi) - at(send_lo));
            (lower ? hi[v] : lo[v]) = mid;
            p.reduce_work(p.chip(v), at(lo[v]), at(hi[v]) - at(lo[v]));
        }
    for (uint32_t d = 1; d < p.p2; d *= 2, ++p.round) {
        const std::vector<uint32_t> was_lo = lo, was_hi = hi;
        for (uint32_t v = 0; v < p.p2; ++v) {
            const uint32_t partner = v ^ d;
            const uint64_t off = at(was_lo[v]), len = at(was_hi[v]) - off;
            if (len)
                b.plan.send(p.round, p.chip(v), PowerOfTwo::part(p.out, off, len), p.chip(partner),
                            PowerOfTwo::part(p.out, off, len));
            lo[v] = std::min(was_lo[v], was_lo[partner]);
            hi[v] = std::max(was_hi[v], was_hi[partner]);
        }
    }
    p.unfold();
}

// Each rank's own vector in its output: the start of the all-reduces below.
void all_reduce_own_into_output(Builder& b) {
    for (uint32_t r = 0; r < b.n; ++r) b.plan.copy(0, r, b.l.whole(b.l.input), b.l.whole(b.l.output));
}

void all_reduce_reduce_root(Builder& b) {
    const uint32_t n = b.n, root = b.ring(0);
    const Pages in = b.l.whole(b.l.input), out = b.l.whole(b.l.output);
    all_reduce_own_into_output(b);
    for (uint32_t i = 1; i < n; ++i) b.plan.send(1, b.ring(i), in, root, out, true);
    for (uint32_t i = 1; i < n; ++i) b.plan.send(2, root, out, b.ring(i), out);
}

// A binary heap over the ring positions: children 2i+1, 2i+2 sit close by.
void all_reduce_tree(Builder& b) {
    const uint32_t n = b.n;
    const Pages out = b.l.whole(b.l.output);
    all_reduce_own_into_output(b);
    auto depth = [](uint32_t i) {
        uint32_t d = 0;
        while (i > 0) i = (i - 1) / 2, ++d;
        return d;
    };
    const uint32_t max_depth = depth(n - 1);
    for (uint32_t i = 1; i < n; ++i)
        b.plan.send(1 + max_depth - depth(i), b.ring(i), out, b.ring((i - 1) / 2), out, true);
    for (uint32_t i = 1; i < n; ++i) b.plan.send(1 + max_depth + depth(i), b.ring((i - 1) / 2), out, b.ring(i), out);
}

// the classic collective algorithms (Thakur et al.) approach 4: the last node
// starts; sums travel left to node 0, then the total goes once more around the ring.
void all_reduce_naive_ring(Builder& b) {
    const uint32_t n = b.n;
    const Pages out = b.l.whole(b.l.output);
    all_reduce_own_into_output(b);
    for (uint32_t s = 0; s + 1 < n; ++s) b.plan.send(1 + s, b.ring(n - 1 - s), out, b.ring(n - 2 - s), out, true);
    for (uint32_t k = 0; k + 1 < n; ++k) b.plan.send(n + k, b.ring(-int64_t(k)), out, b.ring(-int64_t(k) - 1), out);
}

// ---- 2D: rows, then columns, on one mesh or torus (each phase a ring op
// among the chips of a row or a column, all rows or columns at once) ----

// A grid's rows and columns as rings of chips; for one quarter of the 2d
// algorithms, the rings its first phase runs round (rows or columns, forward
// or backward) and, for each place i on those rings, the ring of the chips
// at place i that its middle phase runs round (the same way).
struct GridRings {
    using Lines = std::vector<std::vector<uint32_t>>;
    Lines first, second;
    GridRings(const Grid& g, bool rows_first, bool backward) {
        Lines rows(g.h), columns(g.w);
        for (uint32_t y = 0; y < g.h; ++y)
            for (uint32_t x = 0; x < g.w; ++x) rows[y].push_back(g.at(x, y)), columns[x].push_back(g.at(x, y));
        first = rows_first ? rows : columns;
        if (backward)
            for (auto& line : first) std::reverse(line.begin(), line.end());
        second.resize(first.front().size());
        for (const auto& line : first)
            for (size_t i = 0; i < line.size(); ++i) second[i].push_back(line[i]);
        if (backward)
            for (auto& line : second) std::reverse(line.begin(), line.end());
    }
};

// All-reduce: a reduce-scatter along every row (chip (x, y) ends with row
// y's sum of part x of w), an all-reduce of that part down every column
// (itself a reduce-scatter and an all-gather), then an all-gather along
// every row. The vector is cut in quarters run at once: two go rows first
// and two columns first, one of each pair forward round its rings and the
// other backward, so all four directions of a chip's cables carry data in
// every phase. Every element is summed on one chain and copied from there,
// so every chip ends with the same bits.
void all_reduce_2d(Builder& b) {
    const Grid g = grid_of(b);
    for (uint32_t r = 0; r < b.n; ++r) b.plan.copy(0, r, b.l.whole(b.l.input), b.l.whole(b.l.output));
    const uint64_t all = b.l.elements;
    for (uint32_t q = 0; q < 4; ++q) {
        const GridRings rings(g, q < 2, q % 2);
        const auto m = static_cast<uint32_t>(rings.first.front().size());
        const auto k = static_cast<uint32_t>(rings.second.front().size());
        const uint64_t lo = all * q / 4, len = all * (q + 1) / 4 - lo;
        auto part = [&](uint32_t i) { return std::pair{lo + len * i / m, len * (i + 1) / m - len * i / m}; };
        uint32_t round = 1;
        for (const auto& line : rings.first) ring_reduce_scatter(b.plan, b.l, line, lo, len, round);
        round += m - 1;
        for (uint32_t i = 0; i < m; ++i)
            ring_reduce_scatter(b.plan, b.l, rings.second[i], part(i).first, part(i).second, round);
        round += k - 1;
        for (uint32_t i = 0; i < m; ++i)
            ring_all_gather(b.plan, b.l, rings.second[i], part(i).first, part(i).second, round);
        round += k - 1;
        for (const auto& line : rings.first) ring_all_gather(b.plan, b.l, line, lo, len, round);
    }
}

// All-gather: along every row, then every row's blocks down every column.
// Each block is cut in quarters moved at once, as the all-reduce's vector:
// two rows first and two columns first, each pair one forward and one
// backward, so every cable carries blocks both ways in both phases.
void all_gather_2d(Builder& b) {
    const Grid g = grid_of(b);
    for (uint32_t r = 0; r < b.n; ++r) b.plan.copy(0, r, b.l.own_input(r), b.l.output_block(r));
    for (uint32_t q = 0; q < 4; ++q) {
        const GridRings rings(g, q < 2, q % 2);
        // This quarter of a block (cut where its pages allow), and of its source the same bytes.
        auto quarter = [&](const Pages& of, const Pages& block) {
            const auto [lo, len] = b.share(block, q, 4);
            return cut(of, lo, len);
        };
        std::map<uint32_t, uint32_t> line_of;  // chip -> its first-phase ring
        for (uint32_t j = 0; j < rings.first.size(); ++j)
            for (uint32_t chip : rings.first[j]) line_of[chip] = j;
        const auto m = static_cast<uint32_t>(rings.first.front().size());
        for (uint32_t t = 0; t + 1 < m; ++t)
            for (const auto& line : rings.first)
                for (uint32_t i = 0; i < m; ++i) {
                    const uint32_t owner = line[(i + m - t) % m];
                    const Pages dst = b.l.output_block(owner), src = t == 0 ? b.l.own_input(owner) : dst;
                    b.plan.send(1 + t, line[i], quarter(src, dst), line[(i + 1) % m], quarter(dst, dst));
                }
        const auto k = static_cast<uint32_t>(rings.second.front().size());
        for (uint32_t t = 0; t + 1 < k; ++t)
            for (const auto& line : rings.second)
                for (uint32_t i = 0; i < k; ++i)
                    for (uint32_t owner : rings.first[line_of.at(line[(i + k - t) % k])]) {
                        const Pages blk = quarter(b.l.output_block(owner), b.l.output_block(owner));
                        b.plan.send(m + t, line[i], blk, line[(i + 1) % k], blk);
                    }
    }
}

// ---- rooted ops and send/recv ----

// Chains from the root both ways round the ring: positions root+1 .. root+F
// and root-1 .. root-B (F = ceil((n-1)/2), B = floor((n-1)/2)).
void rooted_chain(Builder& b, bool reduce) {
    const uint32_t n = b.n, root = b.c.request.root, p0 = b.ring_pos(root);
    const uint32_t forward = n / 2, backward = (n - 1) / 2;
    const Pages in = b.l.whole(b.l.input), out = b.l.whole(b.l.output), work = b.l.whole(b.l.work);
    if (!reduce) {
        b.plan.copy(0, root, in, out);
        for (uint32_t j = 1; j <= forward; ++j)
            b.plan.send(j, b.ring(p0 + j - 1), j == 1 ? in : out, b.ring(p0 + j), out);
        for (uint32_t j = 1; j <= backward; ++j)
            b.plan.send(j, b.ring(int64_t(p0) - j + 1), j == 1 ? in : out, b.ring(int64_t(p0) - j), out);
        return;
    }
    for (uint32_t r = 0; r < n; ++r) b.plan.copy(0, r, in, r == root ? out : work);
    auto acc = [&](uint32_t chip) { return chip == root ? out : work; };
    for (uint32_t j = forward; j >= 1; --j) {
        const uint32_t from = b.ring(p0 + j), to = b.ring(p0 + j - 1);
        b.plan.send(1 + forward - j, from, acc(from), to, acc(to), true);
    }
    for (uint32_t j = backward; j >= 1; --j) {
        const uint32_t from = b.ring(int64_t(p0) - j), to = b.ring(int64_t(p0) - j + 1);
        b.plan.send(1 + backward - j, from, acc(from), to, acc(to), true);
    }
}

void rooted_direct(Builder& b) {
    const uint32_t n = b.n, root = b.c.request.root;
    const Pages in = b.l.whole(b.l.input), out = b.l.whole(b.l.output);
    switch (b.c.request.op) {
        case Collective::kBroadcast:
            b.plan.copy(0, root, in, out);
            for (uint32_t r = 0; r < n; ++r)
                if (r != root) b.plan.send(1, root, in, r, out);
            break;
        case Collective::kReduce:
            b.plan.copy(0, root, in, out);
            for (uint32_t r = 0; r < n; ++r)
                if (r != root) b.plan.send(1, r, in, root, out, true);
            break;
        case Collective::kGather:
            for (uint32_t r = 0; r < n; ++r) {
                if (r == root) b.plan.copy(0, root, b.l.own_input(r), b.l.output_block(r));
                else
                    b.plan.send(1, r, b.l.own_input(r), root, b.l.output_block(r));
            }
            break;
        case Collective::kScatter:
            for (uint32_t r = 0; r < n; ++r) {
                if (r == root) b.plan.copy(0, root, b.l.input_block(r), b.l.own_output(r));
                else
                    b.plan.send(1, root, b.l.input_block(r), r, b.l.own_output(r));
            }
            break;
        default: throw Error("internal: direct algorithm for this op");
    }
}

void send_recv_ring(Builder& b) {
    const Pages in = b.l.whole(b.l.input), out = b.l.whole(b.l.output);
    for (uint32_t i = 0; i < b.n && b.n > 1; ++i) b.plan.send(0, b.ring(i), in, b.ring(i + 1), out);
    if (b.n == 1) b.plan.copy(0, 0, in, out);
}

// Runs one of the builders above over a fresh plan.
template <typename Build>
Plan plan_of(const PlanContext& ctx, Build build) {
    Builder b(ctx);
    build(b);
    return std::move(b.plan);
}

}  // namespace

namespace planning {

std::optional<Grid> find_grid(const Builder& b) {
    const ClusterTopology& t = b.c.topo.cluster();
    const auto& ms = t.meshes();
    if (!is_2d_grid(ms) || ms[0].chips() != b.n) return std::nullopt;
    Grid g{ms[0].width, ms[0].height, {}};
    for (uint32_t y = 0; y < g.h; ++y)
        for (uint32_t x = 0; x < g.w; ++x) g.chip.push_back(t.chip_at(ms[0].id, x, y));
    return g;
}

Grid grid_of(const Builder& b) {
    std::optional<Grid> g = find_grid(b);
    if (!g) throw Error("the 2d algorithm runs on a cluster of one mesh or torus of at least 2x2 chips");
    return std::move(*g);
}

}  // namespace planning

// The table's rows' builders: qualified, the builders above, whose names they share.
namespace plans {

Plan all_gather_ring(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { ccl::all_gather_ring(b, false, false); });
}
Plan all_gather_ring_bidir(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { ccl::all_gather_ring(b, true, false); });
}
Plan all_gather_ring_halfway(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { ccl::all_gather_ring(b, false, true); });
}
Plan all_gather_line(const PlanContext& c) { return plan_of(c, ccl::all_gather_line); }
Plan all_gather_2d(const PlanContext& c) { return plan_of(c, ccl::all_gather_2d); }
Plan reduce_scatter_ring(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { reduce_scatter(b, false, false); });
}
Plan reduce_scatter_ring_bidir(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { reduce_scatter(b, false, true); });
}
Plan reduce_scatter_line(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { reduce_scatter(b, true, false); });
}
Plan all_reduce_ring(const PlanContext& c) { return plan_of(c, ccl::all_reduce_ring); }
Plan all_reduce_full_mesh(const PlanContext& c) { return plan_of(c, ccl::all_reduce_full_mesh); }
Plan all_reduce_reduce_root(const PlanContext& c) { return plan_of(c, ccl::all_reduce_reduce_root); }
Plan all_reduce_tree(const PlanContext& c) { return plan_of(c, ccl::all_reduce_tree); }
Plan all_reduce_naive_ring(const PlanContext& c) { return plan_of(c, ccl::all_reduce_naive_ring); }
Plan all_reduce_recursive_doubling(const PlanContext& c) { return plan_of(c, ccl::all_reduce_recursive_doubling); }
Plan all_reduce_halving_doubling(const PlanContext& c) { return plan_of(c, ccl::all_reduce_halving_doubling); }
Plan all_reduce_2d(const PlanContext& c) { return plan_of(c, ccl::all_reduce_2d); }
Plan rooted_chain(const PlanContext& c) {
    return plan_of(c, [](Builder& b) { ccl::rooted_chain(b, b.c.request.op == Collective::kReduce); });
}
Plan rooted_direct(const PlanContext& c) { return plan_of(c, ccl::rooted_direct); }
Plan send_recv_ring(const PlanContext& c) { return plan_of(c, ccl::send_recv_ring); }

}  // namespace plans

namespace native {

void multicast(const OpRequest& r, const OpLayout& l, transport::Transport& t) {
    t.multicast()->add_multicast(multicast_parts(r, l));
}

}  // namespace native

std::vector<transport::MulticastPart> multicast_parts(const OpRequest& r, const OpLayout& l) {
    if (l.outer != 1) throw Error("the multicast all-gather gathers whole blocks: use ring along an inner dimension");
    const bool gather = r.op == Collective::kAllGather;
    std::vector<transport::MulticastPart> parts(l.ranks);
    for (uint32_t c = 0; c < l.ranks; ++c) {
        transport::MulticastPart& p = parts[c];
        const uint64_t bytes = gather ? l.block_elems[c] * l.element : l.elements * l.element;
        if (bytes > 0xffffffffull) throw Error("a multicast block of " + std::to_string(bytes) + " bytes is too large");
        p.sends = gather || c == r.root;
        p.bytes = static_cast<uint32_t>(bytes);
        p.src = gather ? l.own_input(c).base : l.input;
        p.dst = gather ? l.output_block(c).base : l.output;
        p.expect = gather ? l.ranks - 1 : (c == r.root ? 0 : 1);
    }
    return parts;
}

}  // namespace weft::ccl
