// CMocka tests of the host side of the collective ops, no QEMU: CTRING's
// shard indices against the CTRING design's worked 4-rank example, its auto-tune tiers
// and chunking bounds, the overlay orders and their stretch, the tensor
// slicer (piece sizes) and the lowering's bookkeeping, including pieces
// striped over several workers per link (lanes), run through a small model of
// the chips that checks they finish and never race.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ccl/algorithm_table.h"
#include "ccl/collective.h"
#include "ccl/lanes.h"
#include "ccl/lowering.h"
#include "ccl/topology.h"
#include "lowered_op_model.h"
#include "plan_player.h"
#include "transport/cable_routing.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using namespace weft::ccl;
using weft::ccl::model::run_model;

namespace {

std::vector<LinkInfo> ring_links(uint32_t n) {
    std::vector<LinkInfo> v;
    for (uint32_t i = 0; i < n; ++i) v.push_back({i, 1, (i + 1) % n, 3, true});  // E -> W
    return v;
}
std::vector<LinkInfo> line_links(uint32_t n) {
    std::vector<LinkInfo> v;
    for (uint32_t i = 0; i + 1 < n; ++i) v.push_back({i, 1, i + 1, 3, true});
    return v;
}
// A width x height mesh: E/W = ports 1/3, S/N = ports 2/0.
std::vector<LinkInfo> mesh_links(uint32_t w, uint32_t h) {
    std::vector<LinkInfo> v;
    for (uint32_t y = 0; y < h; ++y)
        for (uint32_t x = 0; x < w; ++x) {
            const uint32_t c = x + y * w;
            if (x + 1 < w) v.push_back({c, 1, c + 1, 3, true});
            if (y + 1 < h) v.push_back({c, 2, c + w, 0, true});
        }
    return v;
}

// A cluster of one w x h mesh (or torus, with wrap cables), as the bridge describes it.
Topology grid(uint32_t w, uint32_t h, bool torus) {
    std::vector<LinkInfo> links = mesh_links(w, h);
    if (torus) {
        for (uint32_t y = 0; y < h && w >= 3; ++y) links.push_back({y * w + w - 1, 1, y * w, 3, true});
        for (uint32_t x = 0; x < w && h >= 3; ++x) links.push_back({(h - 1) * w + x, 2, x, 0, true});
    }
    nlohmann::json info;
    info["chips"] = nlohmann::json::array();
    for (uint32_t c = 0; c < w * h; ++c) info["chips"].push_back({{"id", c}});
    info["meshes"] = {
        {{"id", 0}, {"shape", {w, h}}, {"topology", torus ? "torus" : "mesh"}, {"planes", 1}, {"first_chip", 0}}};
    info["links"] = nlohmann::json::array();
    for (const LinkInfo& l : links)
        info["links"].push_back({{"a", {{"chip", l.chip_a}, {"port", l.port_a}}},
                                 {"b", {{"chip", l.chip_b}, {"port", l.port_b}}},
                                 {"state", "up"}});
    return Topology(ClusterTopology::from_json(info));
}

void test_ctring_shards_match_the_seed_example(void**) {
    // the CTRING design, 4 ranks: RS step 1 handles shards 3,0,1,2 and step 2 shards
    // 2,3,0,1 on ranks 0..3; after RS rank r owns shard (r+1)%N. (The CTRING design's
    // line for step 0, "0,3,2,1", contradicts both its own later steps and
    // that ownership rule; the consistent reading is 0,1,2,3.)
    const uint32_t n = 4;
    const uint32_t step1[] = {3, 0, 1, 2}, step2[] = {2, 3, 0, 1}, step0[] = {0, 1, 2, 3};
    for (uint32_t r = 0; r < n; ++r) {
        assert_int_equal(rs_send_shard(r, 0, n), step0[r]);
        assert_int_equal(rs_send_shard(r, 1, n), step1[r]);
        assert_int_equal(rs_send_shard(r, 2, n), step2[r]);
        // What rank r receives at the last RS step is what it owns afterwards.
        assert_int_equal(rs_send_shard((r + n - 1) % n, n - 2, n), rs_owned_shard(r, n));
        assert_int_equal(rs_owned_shard(r, n), (r + 1) % n);
    }
    // Forward AG (getStepShardIdx): step 0 sends the owned shard, then what arrived.
    for (uint32_t r = 0; r < n; ++r) {
        assert_int_equal(ag_send_shard(r, 0, n), rs_owned_shard(r, n));
        for (uint32_t t = 1; t < n - 1; ++t)
            assert_int_equal(ag_send_shard(r, t, n), ag_send_shard((r + n - 1) % n, t - 1, n));
        // Reverse AG (getRevStepShardIdx): step 0 sends the owned shard left, then forwards.
        assert_int_equal(ag_rev_send_shard(r, 0, n), rs_owned_shard(r, n));
        assert_int_equal(ag_rev_send_shard(r, 1, n), ag_rev_send_shard((r + 1) % n, 0, n));
    }
}

void test_bidirectional_all_gather_covers_every_shard(void**) {
    for (uint32_t n = 2; n <= 9; ++n) {
        assert_int_equal(ag_forward_steps(n, true), (n - 1 + 1) / 2);  // ceil((N-1)/2)
        assert_int_equal(ag_reverse_steps(n, true), (n - 1) / 2);      // floor((N-1)/2)
        assert_int_equal(ag_forward_steps(n, true) + ag_reverse_steps(n, true), n - 1);
        for (uint32_t r = 0; r < n; ++r) {
            std::set<uint32_t> have{rs_owned_shard(r, n)};
            for (uint32_t t = 0; t < ag_forward_steps(n, true); ++t) have.insert(ag_send_shard((r + n - 1) % n, t, n));
            for (uint32_t t = 0; t < ag_reverse_steps(n, true); ++t) have.insert(ag_rev_send_shard((r + 1) % n, t, n));
            assert_int_equal(have.size(), n);
        }
    }
}

// The reverse reduce-scatter passes on what it received and ends where the
// forward one does: rank r owns shard r+1, both halves fully reduced.
void test_reverse_reduce_scatter_ends_at_the_same_owner(void**) {
    for (uint32_t n = 2; n <= 9; ++n)
        for (uint32_t r = 0; r < n; ++r) {
            for (uint32_t s = 1; s + 1 < n; ++s)
                assert_int_equal(rs_rev_send_shard(r, s, n), rs_rev_send_shard((r + 1) % n, s - 1, n));
            // What rank r receives from r+1 at the last step is the shard it owns.
            assert_int_equal(rs_rev_send_shard((r + 1) % n, n - 2, n), rs_owned_shard(r, n));
        }
}

// Plays a CTRING plan round by round on symbolic values: rank r's input
// elements are 1 << 8r and a reduction adds, so an output element that holds
// the sum of all ranks' bytes has every rank exactly once.
std::string play_all_reduce(const Plan& plan, const OpLayout& l) {
    const uint32_t n = l.ranks;
    std::vector<std::map<uint64_t, uint64_t>> mem(n);  // by chip: element address -> value
    constexpr uint64_t kPoison = 1ull << 63;           // an output element read before it is written
    for (uint32_t c = 0; c < n; ++c)
        for (uint64_t e = 0; e < l.elements; ++e) {
            mem[c][l.input + e * l.element] = 1ull << (8 * c);
            mem[c][l.output + e * l.element] = kPoison;
        }
    play(plan, l, mem, [](uint64_t a, uint64_t b) { return a + b; });
    uint64_t want = 0;
    for (uint32_t c = 0; c < n; ++c) want += 1ull << (8 * c);
    for (uint32_t c = 0; c < n; ++c)
        for (uint64_t e = 0; e < l.elements; ++e)
            if (mem[c][l.output + e * l.element] != want)
                return "rank " + std::to_string(c) + " element " + std::to_string(e) + " of " +
                       std::to_string(l.elements);
    return "";
}

void test_ctring_reduces_every_rank_once_either_way(void**) {
    for (uint32_t n : {2u, 3u, 4u, 5u, 8u}) {
        Topology t(n, ring_links(n));
        for (uint64_t elements : {uint64_t(1), uint64_t(n), uint64_t(7 * n + 3), uint64_t(1000)})
            for (int both_rs = 0; both_rs < 2; ++both_rs)
                for (int both_ag = 0; both_ag < 2; ++both_ag) {
                    OpRequest r;
                    r.op = Collective::kAllReduce;
                    r.bytes = elements * 4;
                    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
                    CtringTuning tune;
                    tune.bidir_rs_max_size = both_rs ? -1 : 0;
                    tune.bidir_ag_max_size = both_ag ? -1 : 0;
                    tune.min_shard_size = 4;  // shards of one element: the halves can be empty
                    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), tune};
                    const Plan plan = build_plan(ctx, "ring");
                    const std::string wrong = play_all_reduce(plan, l);
                    if (!wrong.empty())
                        fail_msg("%u ranks, %llu elements, reduce-scatter %s, all-gather %s: %s is wrong", n,
                                 (unsigned long long)elements, both_rs ? "both ways" : "one way",
                                 both_ag ? "both ways" : "one way", wrong.c_str());
                    // Both ways, every rank sends to both neighbours during the reduce-scatter.
                    if (both_rs && elements >= 2 * n && n > 2) {
                        std::set<std::pair<uint32_t, uint32_t>> hops;
                        for (const Transfer& x : plan.transfers)
                            if (x.reduce) hops.insert({x.src_chip, x.dst_chip});
                        assert_int_equal(hops.size(), 2 * n);
                    }
                }
    }
}

// Every all-reduce algorithm leaves every rank with the same bits: the same
// sum of every rank's input once, associated the same way up to the order of
// a sum's two operands (float sums are not associative; replicas that drift
// apart are a correctness bug).
// Every rank ends with the same bits, each rank's input summed in exactly once.
void assert_sums_once(const Plan& plan, const OpLayout& l, const char* what) {
    const uint32_t n = l.ranks;
    const std::vector<std::vector<std::string>> played = play_expressions(plan, l);
    for (uint64_t e = 0; e < l.elements; ++e) {
        std::vector<std::string> got = played[e];
        for (std::string& g : got) g = commuted(g);
        for (uint32_t c = 0; c < n; ++c) {
            if (got[c] != got[0])
                fail_msg("%s, element %llu: rank %u has %s, rank 0 %s", what, (unsigned long long)e, c, got[c].c_str(),
                         got[0].c_str());
            for (uint32_t k = 0; k < n; ++k)
                if (terms_of(got[c], k) != 1)
                    fail_msg("%s: rank %u's %s has x%u %zu times", what, c, got[c].c_str(), k, terms_of(got[c], k));
        }
    }
}

void test_all_reduce_ranks_sum_in_one_order(void**) {
    for (uint32_t n : {2u, 3u, 4u, 5u, 8u}) {
        Topology t(n, ring_links(n));
        OpRequest r;
        r.op = Collective::kAllReduce;
        r.bytes = 5 * n * 4;
        const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
        CtringTuning tune;
        tune.min_shard_size = 4;
        const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), tune};
        for (const std::string& algo : algorithms(r.op)) {
            if (algo == "auto") continue;
            const std::string what = algo + " on " + std::to_string(n) + " ranks";
            assert_sums_once(build_plan(ctx, algo), l, what.c_str());
        }
    }
}

void test_ctring_auto_tune_tiers(void**) {
    assert_int_equal(ctring_pipeline_depth(1024), 1);
    assert_int_equal(ctring_pipeline_depth(32 * 1024 - 1), 1);
    assert_int_equal(ctring_pipeline_depth(32 * 1024), 2);
    assert_int_equal(ctring_pipeline_depth((1 << 20) - 1), 2);
    assert_int_equal(ctring_pipeline_depth(1 << 20), 4);
    assert_int_equal(ctring_pipeline_depth((16 << 20) - 1), 4);
    assert_int_equal(ctring_pipeline_depth(16 << 20), 2);
    assert_int_equal(ctring_pipeline_depth(32 << 20), 2);
    assert_int_equal(ctring_pipeline_depth((32 << 20) + 1), 1);

    CtringTuning t;
    CtringParams p = ctring_params(4 << 20, 8, 4, t);  // 4 MiB on 8 ranks: depth 4
    assert_int_equal(p.pipeline_depth, 4);
    assert_int_equal(p.num_chunks, 32);
    assert_int_equal(p.chunk_size, (4 << 20) / 32);
    assert_true(p.bidir_ag);  // both ways at every size by default
    assert_true(ctring_params(1ull << 30, 8, 4, t).bidir_ag);
    t.bidir_ag_max_size = 4 << 20;  // a threshold: both ways up to it, one way above
    assert_true(ctring_params(4 << 20, 8, 4, t).bidir_ag);
    p = ctring_params((4 << 20) + 4, 8, 4, t);
    assert_false(p.bidir_ag);
    // Chunk size clamps at 16 MB, and chunk * chunks stays within the max BDP.
    t.pipeline_depth = 1;
    t.max_bdp = 8 << 20;
    p = ctring_params(1ull << 31, 2, 4, t);
    assert_true(p.chunk_size <= 16u << 20);
    assert_true(p.chunk_size * p.num_chunks <= t.max_bdp);
    // Overrides win; chunks stay whole elements.
    t = CtringTuning{};
    t.chunk_size = 1001;
    t.num_chunks = 3;
    t.bidir_ag_max_size = -1;
    p = ctring_params(1 << 20, 8, 4, t);
    assert_int_equal(p.num_chunks, 3);
    assert_int_equal(p.chunk_size % 4, 0);
    assert_true(p.bidir_ag);
    t.bidir_ag_max_size = 0;
    assert_false(ctring_params(1024, 8, 4, t).bidir_ag);
}

void test_ring_orders_and_stretch(void**) {
    Topology ring(8, ring_links(8));
    std::vector<uint32_t> want{0, 1, 2, 3, 4, 5, 6, 7};
    assert_true(ring.ring_order() == want);
    assert_true(ring.stretch(ring.ring_order(), true) == 1.0);
    // A line has no closing cable: the best ring's wrap hop crosses the line.
    Topology line(4, line_links(4));
    assert_true(line.line_order() == std::vector<uint32_t>({0, 1, 2, 3}));
    assert_true(line.stretch(line.line_order(), false) == 1.0);
    assert_true(line.stretch(line.ring_order(), true) == 1.5);  // (1 + 1 + 1 + 3) / 4
    // 2x2 mesh: the snake 0-1-3-2 uses only cables; row-major order would not.
    Topology m2(4, mesh_links(2, 2));
    assert_true(m2.ring_order() == std::vector<uint32_t>({0, 1, 3, 2}));
    assert_true(m2.stretch(m2.ring_order(), true) == 1.0);
    assert_true(m2.stretch({0, 1, 2, 3}, true) > 1.0);
    // 4x3 mesh (12 chips, the heuristic path): an even side admits a cable-only ring.
    Topology m43(12, mesh_links(4, 3));
    const auto o = m43.ring_order();
    assert_int_equal(o.size(), 12);
    assert_int_equal(std::set<uint32_t>(o.begin(), o.end()).size(), 12);
    assert_true(m43.stretch(o, true) <= 1.2);
    // Routes take the fewest hops and say which port.
    assert_int_equal(ring.distance(0, 4), 4);
    assert_int_equal(ring.distance(0, 6), 2);
    assert_int_equal(ring.route(0, 7).front().from_port, 3);
}

void test_disconnected_cluster_is_named(void**) {
    auto links = line_links(4);
    links[1].up = false;  // 1 - 2 cut
    Topology t(4, links);
    try {
        t.route(0, 3);
        fail();
    } catch (const std::exception& e) {
        assert_non_null(strstr(e.what(), "the cluster is cut: chips 0, 1 cannot reach chips 2, 3"));
    }
}

LoweringOptions options(uint64_t piece) {
    LoweringOptions o;
    o.piece_bytes = piece;
    o.message_bytes = 4096;
    o.scratch = Pages::run(0x1000000, 1 << 20);
    return o;
}

// What lowering `p` on the 4-worker board refuses with ("" if it does not).
std::string lowering_error(const Plan& p, const Topology& t, const LoweringOptions& o) {
    try {
        lower(p, transport::CableRouting(t), {4, 5, 6, 7}, o);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

void test_slicer_cuts_pieces_within_bounds(void**) {
    // One 100000-byte transfer over one cable in pieces of 16 KiB: 7 pieces,
    // each a whole number of 4-byte elements, sent as ceil(piece / slot) messages.
    Topology t(2, line_links(2));
    Plan p;
    p.send(0, 0, Pages::run(0x100000, 100000), 1, Pages::run(0x200000, 100000), true);
    const LoweredOp op = lower(p, transport::CableRouting(t), {4, 5, 6, 7}, options(16384));
    assert_int_equal(op.streams.size(), 1);
    assert_int_equal(op.hops, 7);
    assert_int_equal(op.bytes_on_links, 100000);
    uint32_t expect_messages = 6 * 4 + (100000 - 6 * 16384 + 4095) / 4096;
    assert_int_equal(op.streams[0].messages, expect_messages);
    uint64_t seen = 0;
    for (const WorkerProgram& w : op.workers)
        for (const abi::CclInstr& in : w.code)
            if (in.opcode == abi::kCclRecvReduce) {
                assert_true(in.dst.page_size <= 16384);
                assert_int_equal(in.dst.page_size % 4, 0);
                assert_int_equal(in.dst.base, 0x200000 + seen);
                seen += in.dst.page_size;
            }
    assert_int_equal(seen, 100000);
}

void test_lowering_routes_and_orders_workers(void**) {
    // Chip 0 to chip 3 on a line: forwarded through 1 and 2's scratch.
    Topology t(4, line_links(4));
    Plan p;
    p.send(0, 0, Pages::run(0x100000, 8192), 3, Pages::run(0x200000, 8192));
    const LoweredOp op = lower(p, transport::CableRouting(t), {4, 5, 6, 7}, options(1 << 20));
    assert_int_equal(op.hops, 3);
    assert_int_equal(op.streams.size(), 3);
    for (const Stream& s : op.streams) assert_int_equal(s.messages, 2);
    // Chips 1 and 2 each run a receiver and a sender; the sender waits for the receiver.
    for (uint32_t chip : {1u, 2u}) {
        const WorkerProgram *rx = nullptr, *tx = nullptr;
        for (const WorkerProgram& w : op.workers)
            if (w.chip == chip) (w.receives ? rx : tx) = &w;
        assert_non_null(rx);
        assert_non_null(tx);
        assert_int_equal(rx->code.back().opcode, abi::kCclSignal);
        assert_int_equal(tx->code.front().opcode, abi::kCclWait);
        assert_int_equal(tx->code.front().arg, rx->index);
        assert_int_equal(tx->code.front().count, 1);
    }
}

// The centre of a 3x3 mesh sending and receiving on all four ports would
// need 8 workers: on four worker cores it gets two senders and two
// receivers, each serving two ports, and on two cores one of each serving
// all four; the chips' model finishes without a race either way. With one
// worker core not even that fits, and the chip is named.
void test_a_chip_with_too_many_ports_folds_them_onto_its_workers(void**) {
    Topology t(9, mesh_links(3, 3));
    Plan p;
    for (uint32_t to : {1u, 3u, 5u, 7u}) {
        p.send(0, 4, Pages::run(0x100000, 64), to, Pages::run(0x200000, 64));
        p.send(0, to, Pages::run(0x100000, 64), 4, Pages::run(0x300000 + to * 64, 64));
    }
    for (auto [cores, ports] :
         {std::pair{std::vector<uint32_t>{4, 5, 6, 7}, 2u}, std::pair{std::vector<uint32_t>{4, 5}, 4u}}) {
        const LoweredOp op = lower(p, transport::CableRouting(t), cores, options(1 << 20));
        uint32_t on_centre = 0;
        for (const WorkerProgram& w : op.workers)
            if (w.chip == 4) {
                ++on_centre;
                assert_int_equal(w.ports.size(), ports);
            }
        assert_int_equal(on_centre, std::min<size_t>(cores.size(), 4));
        const std::string race = run_model(op);
        if (!race.empty()) fail_msg("%s", race.c_str());
    }
    try {
        lower(p, transport::CableRouting(t), {4}, options(1 << 20));
        fail_msg("lowered onto one worker core");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "2 worker cores"));
    }
}

// ---- lanes: several workers per link striding the slicer's pieces ----

void test_ring_reduce_scatter_strides_pieces_over_two_workers(void**) {
    // Ring reduce-scatter on 4 chips, blocks of 5 pieces and a bit (the last
    // piece short), two workers per link: piece k of every transfer goes
    // through lane k % 2, each lane with its own sender, receiver and stream.
    const uint32_t n = 4;
    const uint64_t piece = 16384;
    Topology t(n, ring_links(n));
    OpRequest r;
    r.op = Collective::kReduceScatter;
    r.bytes = n * (5 * piece + 400);
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(piece);
    o.workers_per_link = 2;
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);

    // Per chip: senders on E and receivers on W, lanes 0 and 1, on four distinct cores.
    assert_int_equal(op.workers.size(), 4 * n);
    assert_int_equal(op.streams.size(), 2 * n);
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen_streams;
    for (const Stream& s : op.streams) {
        assert_int_equal(s.port, 1);
        assert_int_equal(s.peer_chip, (s.chip + 1) % n);
        assert_true(s.lane < 2);
        assert_true(seen_streams.insert({s.chip, s.port, s.lane}).second);
        const WorkerProgram *tx = nullptr, *rx = nullptr;
        for (const WorkerProgram& w : op.workers) {
            if (w.chip == s.chip && w.core == s.sender_core) tx = &w;
            if (w.chip == s.peer_chip && w.core == s.receiver_core) rx = &w;
        }
        assert_non_null(tx);
        assert_non_null(rx);
        assert_false(tx->receives);
        assert_true(rx->receives);
        assert_int_equal(tx->lane, s.lane);
        assert_int_equal(rx->lane, s.lane);
    }
    for (uint32_t c = 0; c < n; ++c) {
        std::set<uint32_t> cores;
        for (const WorkerProgram& w : op.workers)
            if (w.chip == c) cores.insert(w.core);
        assert_int_equal(cores.size(), 4);
    }

    // Every send and receive is piece k % 2 of its block, and one worker's
    // pieces of one block are strided by the two workers' worth: k, k+2, ...
    auto piece_of = [&](uint64_t address, uint64_t* block_base) {
        for (uint32_t b = 0; b < n; ++b) {
            const Pages blk = l.work_block(b);
            if (address >= blk.base && address < blk.base + blk.bytes()) {
                *block_base = blk.base;
                return (address - blk.base) / piece;
            }
        }
        fail_msg("address 0x%llx outside the work blocks", (unsigned long long)address);
        return uint64_t(0);
    };
    uint32_t sends = 0, receives = 0;
    for (const WorkerProgram& w : op.workers) {
        std::map<uint64_t, uint64_t> last;  // block -> the piece this worker last moved of it
        for (const abi::CclInstr& in : w.code) {
            const bool send = in.opcode == abi::kCclSend, receive = in.opcode == abi::kCclRecvReduce;
            if (!send && !receive) continue;
            uint64_t block = 0;
            const uint64_t k = piece_of(send ? in.src.base : in.dst.base, &block);
            assert_int_equal(k % 2, w.lane);
            auto it = last.find(block);
            if (it != last.end()) assert_int_equal(k, it->second + 2);
            last[block] = k;
            (send ? sends : receives)++;
        }
    }
    // n - 1 steps, n transfers each, 6 pieces per transfer.
    assert_int_equal(sends, (n - 1) * n * 6);
    assert_int_equal(receives, sends);
    assert_string_equal(run_model(op).c_str(), "");
    // One lane: the same op, and the model agrees too.
    o.workers_per_link = 1;
    const LoweredOp one = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    assert_int_equal(one.streams.size(), n);
    assert_string_equal(run_model(one).c_str(), "");
}

// CTRING with both phases both ways (the default), lowered: senders and
// receivers on both ports of every chip, and the chips' model finishes
// without a race.
void test_ctring_both_ways_lowers_without_a_race(void**) {
    const uint32_t n = 4;
    Topology t(n, ring_links(n));
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = n * 5 * 16384 + 12;
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(16384);
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    std::set<std::pair<uint32_t, uint32_t>> ports;  // (chip, port) that send
    for (const Stream& x : op.streams) ports.insert({x.chip, x.port});
    assert_int_equal(ports.size(), 2 * n);
    assert_string_equal(run_model(op).c_str(), "");
}

// Every all-reduce algorithm lowered onto rings and lines of several sizes:
// the chips' model finishes, and no two workers touch a byte unordered.
void test_all_reduce_algorithms_lower_without_a_race(void**) {
    for (uint32_t n : {3u, 4u, 5u, 8u})
        for (int shape : {0, 1, 2}) {
            if (shape == 2 && n != 4 && n != 8) continue;
            const bool ring = shape == 1;
            Topology t(n, shape == 0 ? line_links(n) : ring ? ring_links(n) : mesh_links(2, n / 2));
            OpRequest r;
            r.op = Collective::kAllReduce;
            r.bytes = n * 4 * 1000 + 12;
            const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
            const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
            LoweringOptions o = options(4096);
            o.scratch = l.scratch;
            for (const std::string& algo : algorithms(r.op)) {
                if (algo == "auto") continue;
                std::string got;
                try {
                    got = run_model(lower(build_plan(ctx, algo), transport::CableRouting(t), {4, 5, 6, 7}, o));
                } catch (const Error& e) {
                    fprintf(stderr, "%s on %u chips not lowered: %s\n", algo.c_str(), n, e.what());
                    continue;  // does not fit four workers: auto would not pick it
                }
                if (!got.empty())
                    fail_msg("%s on a %s of %u: %s", algo.c_str(),
                             shape == 0 ? "line"
                             : ring     ? "ring"
                                        : "mesh",
                             n, got.c_str());
            }
        }
}

// The 2d all-reduce (rows, then columns, and columns, then rows, each both
// ways) on meshes and tori: every rank ends with the same bits, every rank's
// input summed in exactly once, every cable busy both ways from the start;
// and on a line it is refused by name.
void test_2d_all_reduce_sums_once_in_one_order(void**) {
    for (auto [w, h, torus] : {std::tuple{2u, 2u, false}, std::tuple{3u, 3u, false}, std::tuple{4u, 4u, true},
                               std::tuple{8u, 4u, true}, std::tuple{3u, 2u, false}}) {
        const uint32_t n = w * h;
        Topology t = grid(w, h, torus);
        OpRequest r;
        r.op = Collective::kAllReduce;
        r.bytes = 7 * n * 4;
        const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
        const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
        const Plan plan = build_plan(ctx, "2d");
        const std::string what = "2d on " + std::to_string(w) + "x" + std::to_string(h);
        assert_sums_once(plan, l, what.c_str());
        // On torus4x4 the four quarters send over all 64 cable directions at once.
        std::set<std::pair<uint32_t, uint32_t>> first_round;
        for (const Transfer& x : plan.transfers)
            if (x.round == 1 && x.src_chip != x.dst_chip) first_round.insert({x.src_chip, x.dst_chip});
        if (w == 4 && h == 4 && first_round.size() != 64)
            fail_msg("2d on torus4x4: its first round sends over %zu of 64 cable directions", first_round.size());
        // Lowered onto the grid's cables, four workers a chip: the model
        // finishes without a race. On a torus (and 2x2) each row and column
        // is a ring of cables: a sender and a receiver per dimension. A mesh
        // row of three or more wraps back through its chips: both ways in
        // both dimensions, eight workers, folded onto one sender and one
        // receiver a chip.
        LoweringOptions o = options(4096);
        o.scratch = l.scratch;
        const std::string race = run_model(lower(plan, transport::CableRouting(t), {4, 5, 6, 7}, o));
        if (!race.empty()) fail_msg("2d on %ux%u: %s", w, h, race.c_str());
    }
    Topology line(4, line_links(4));
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = 64;
    const OpLayout l = layout_op(r, 4, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, line, line.ring_order(), line.line_order(), CtringTuning{}};
    try {
        build_plan(ctx, "2d");
        fail_msg("2d was planned on a line");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "one mesh or torus of at least 2x2"));
    }
}

// Kept DRAM (tensors that outlive an op) is left alone: the buffers weft
// places go round it, and a caller's buffer inside it is refused by name.
void test_kept_dram_is_left_alone(void**) {
    const Pages dram = Pages::run(0x81000000, 64 << 20);
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = 1 << 20;
    r.keep = {Pages::run(dram.base, 3 << 20), Pages::run(dram.base + (5 << 20), 1 << 20)};
    const OpLayout l = layout_op(r, 4, dram);
    const std::vector<Pages> placed = {Pages::run(l.input, l.input_bytes), Pages::run(l.output, l.output_bytes),
                                       Pages::run(l.work, l.work_bytes), l.scratch};
    for (const Pages& p : placed)
        for (const Pages& k : r.keep)
            if (p.bytes() && p.base < k.end() && k.base < p.end())
                fail_msg("a buffer at 0x%llx overlaps kept DRAM at 0x%llx", (unsigned long long)p.base,
                         (unsigned long long)k.base);
    assert_true(l.input >= dram.base + (3 << 20));  // the lowest gap past the first kept range
    r.send = r.recv = dram.base + (5 << 20) + 4096;
    try {
        layout_op(r, 4, dram);
        fail_msg("an op ran in kept DRAM");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "overlaps the kept buffer"));
        assert_non_null(strstr(e.what(), "a tensor the op must leave alone"));
    }
}

// Swing on meshes and tori whose sides are powers of two: every step within
// one row or one column, and on a square one in every round both
// dimensions carry data (the parts start on different dimensions); on
// torus4x4 every cable carries data both ways in every round. Other shapes run
// the ring schedule, folded onto a power of two. Each sums once, lowers
// without a race, and on a ring moves fewer bytes over cables than
// halving-doubling, whose partners are 4, 2, 1 places away on ring8 where
// Swing's are 1, 1, 3.
void test_swing_sums_once_and_stays_near(void**) {
    for (auto [w, h, torus] : {std::tuple{2u, 2u, false}, std::tuple{4u, 4u, true}, std::tuple{8u, 4u, true},
                               std::tuple{4u, 2u, false}, std::tuple{3u, 3u, false}, std::tuple{3u, 2u, false}}) {
        const uint32_t n = w * h;
        Topology t = grid(w, h, torus);
        OpRequest r;
        r.op = Collective::kAllReduce;
        r.bytes = 4 * n * 128 + 12;  // large enough for its four parts (a small vector runs one)
        const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
        const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
        const Plan plan = build_plan(ctx, "swing");
        const std::string what = "swing on " + std::to_string(w) + "x" + std::to_string(h);
        if (n <= 16) assert_sums_once(plan, l, what.c_str());  // 8x4's play would take seconds
        LoweringOptions o = options(4096);
        o.scratch = l.scratch;
        const std::string race = run_model(lower(plan, transport::CableRouting(t), {4, 5, 6, 7}, o));
        if (!race.empty()) fail_msg("%s: %s", what.c_str(), race.c_str());
        if ((w & (w - 1)) || (h & (h - 1))) continue;
        std::map<uint32_t, std::set<char>> dims_of_round;
        std::map<uint32_t, std::set<std::pair<uint32_t, uint32_t>>> sends_of_round;
        for (const Transfer& x : plan.transfers) {
            if (x.src_chip == x.dst_chip) continue;
            const bool same_row = x.src_chip / w == x.dst_chip / w, same_column = x.src_chip % w == x.dst_chip % w;
            if (!same_row && !same_column)
                fail_msg("%s: chip %u sends to chip %u, off its row and column", what.c_str(), x.src_chip, x.dst_chip);
            dims_of_round[x.round].insert(same_row ? 'x' : 'y');
            sends_of_round[x.round].insert({x.src_chip, x.dst_chip});
        }
        // On torus4x4 every step's partners are neighbours, and the four
        // parts together use all 64 cable directions in every round.
        if (w == 4 && h == 4)
            for (const auto& [round, sends] : sends_of_round)
                if (sends.size() != 64)
                    fail_msg("%s: round %u sends over %zu of 64 cable directions", what.c_str(), round, sends.size());
        // On 8x4 the longer side's last step has no partner step on the other.
        if (w == 4 && h == 4) {  // 1 KiB: one part, over half of one dimension's cables both ways
            OpRequest small = r;
            small.bytes = 1024;
            const OpLayout sl = layout_op(small, n, Pages::run(0x81000000, 64 << 20));
            const Plan one = build_plan({small, sl, t, t.ring_order(), t.line_order(), CtringTuning{}}, "swing");
            std::set<std::pair<uint32_t, uint32_t>> last_round;  // the all-gather's last step: step 0's partners
            for (const Transfer& x : one.transfers)
                if (x.src_chip != x.dst_chip && x.round == one.transfers.back().round)
                    last_round.insert({x.src_chip, x.dst_chip});
            assert_int_equal(last_round.size(), 16);
        }
        for (const auto& [round, dims] : dims_of_round)
            if (w == h && dims.size() != 2) fail_msg("%s: round %u uses one dimension only", what.c_str(), round);
    }
    Topology ring8(8, ring_links(8));
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = 64 * 1024;
    const OpLayout l = layout_op(r, 8, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, ring8, ring8.ring_order(), ring8.line_order(), CtringTuning{}};
    LoweringOptions o = options(4096);
    o.scratch = l.scratch;
    const uint64_t swing =
        lower(build_plan(ctx, "swing"), transport::CableRouting(ring8), {4, 5, 6, 7}, o).bytes_on_links;
    const uint64_t halving =
        lower(build_plan(ctx, "halving_doubling"), transport::CableRouting(ring8), {4, 5, 6, 7}, o).bytes_on_links;
    fprintf(stderr, "ring8, 64 KiB: swing puts %llu bytes on cables, halving-doubling %llu\n",
            (unsigned long long)swing, (unsigned long long)halving);
    assert_true(swing < halving);
}

// The 2d all-gather on meshes and tori: every rank ends with every rank's
// block, each of the four quarters having travelled its own way.
void test_2d_all_gather_delivers_every_block(void**) {
    for (auto [w, h, torus] :
         {std::tuple{2u, 2u, false}, std::tuple{3u, 3u, false}, std::tuple{4u, 4u, true}, std::tuple{3u, 2u, false}}) {
        const uint32_t n = w * h;
        Topology t = grid(w, h, torus);
        OpRequest r;
        r.op = Collective::kAllGather;
        r.bytes = (5 * n + 3) * 4;  // blocks of different sizes
        const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
        const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
        const Plan plan = build_plan(ctx, "2d");
        auto at = [&](const Pages& p) {
            std::vector<uint64_t> v;
            for (uint64_t pg = 0; pg < p.count; ++pg)
                for (uint64_t off = 0; off < p.page_size; off += l.element) v.push_back(p.base + pg * p.stride + off);
            return v;
        };
        std::vector<std::map<uint64_t, int64_t>> mem(n);
        for (uint32_t c = 0; c < n; ++c) {
            const std::vector<uint64_t> in = at(l.own_input(c));
            for (size_t i = 0; i < in.size(); ++i) mem[c][in[i]] = int64_t(c) << 32 | int64_t(i);
        }
        play(plan, l, mem, [](int64_t, int64_t) -> int64_t { return -1; });
        for (uint32_t c = 0; c < n; ++c)
            for (uint32_t k = 0; k < n; ++k) {
                const std::vector<uint64_t> out = at(l.output_block(k));
                for (size_t i = 0; i < out.size(); ++i)
                    if (mem[c][out[i]] != (int64_t(k) << 32 | int64_t(i)))
                        fail_msg("2d all-gather on %ux%u: rank %u's element %zu of block %u is wrong", w, h, c, i, k);
            }
        LoweringOptions o = options(4096);
        const std::string race = run_model(lower(plan, transport::CableRouting(t), {4, 5, 6, 7}, o));
        if (!race.empty()) fail_msg("2d all-gather on %ux%u: %s", w, h, race.c_str());
    }
}

// ---- planes: neighbours joined by two cables ----

// A ring whose neighbours are joined by two cables: plane 0 on ports E/W
// (1/3), plane 1 on ports 0/2, as the qemu-virt-2plane board names them.
std::vector<LinkInfo> ring_links_two_planes(uint32_t n) {
    std::vector<LinkInfo> v = ring_links(n);
    for (uint32_t i = 0; i < n; ++i) v.push_back({i, 0, (i + 1) % n, 2, true});
    return v;
}

void test_ring_all_gather_stripes_every_hop_over_both_planes(void**) {
    const uint32_t n = 4;
    Topology t(n, ring_links_two_planes(n));
    assert_int_equal(t.max_cables(), 2);
    assert_int_equal(t.cables(0, 1).size(), 2);
    assert_int_equal(t.cables(0, 2).size(), 0);
    assert_int_equal(t.ring_order().size(), n);
    assert_true(t.stretch(t.ring_order(), true) == 1.0);  // two cables are still one hop
    OpRequest r;
    r.op = Collective::kAllGather;
    r.bytes = n * 6 * 16384;  // blocks of six pieces: three on each cable
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(16384);
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    assert_int_equal(op.planes, 2);
    // Each chip sends on both E ports and receives on both W ports: four
    // workers (one per cable, as they fit), a stream per cable.
    assert_int_equal(op.workers.size(), 4 * n);
    for (const WorkerProgram& w : op.workers) assert_int_equal(w.ports.size(), 1);
    assert_int_equal(op.streams.size(), 2 * n);
    std::map<uint32_t, uint64_t> messages_by_port;
    for (const Stream& s : op.streams) {
        assert_int_equal(s.peer_chip, (s.chip + 1) % n);
        assert_true(s.port == 0 || s.port == 1);
        messages_by_port[s.port] += s.messages;
    }
    assert_int_equal(messages_by_port.size(), 2);
    assert_int_equal(messages_by_port[0], messages_by_port[1]);  // half of every block each
    assert_int_equal(op.bytes_on_links, uint64_t(n) * (n - 1) * 6 * 16384);
    assert_string_equal(run_model(op).c_str(), "");

    // A block of one piece stays on one cable: the second would cost more than it carries.
    const LoweredOp big_pieces = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, [&] {
        LoweringOptions b = o;
        b.piece_bytes = 6 * 16384;
        return b;
    }());
    assert_int_equal(big_pieces.planes, 1);
    // Asked for pieces of one message where a hop stripes (the runner does on
    // shaped cables), the same blocks go over both, half on each.
    const LoweredOp striped = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, [&] {
        LoweringOptions b = o;
        b.piece_bytes = 6 * 16384;
        b.stripe_piece_bytes = 16384;
        return b;
    }());
    assert_int_equal(striped.planes, 2);
    std::map<uint32_t, uint64_t> striped_messages;
    for (const Stream& s : striped.streams) striped_messages[s.port] += s.messages;
    assert_int_equal(striped_messages.size(), 2);
    assert_int_equal(striped_messages[0], striped_messages[1]);
    assert_string_equal(run_model(striped).c_str(), "");

    // Asked for one plane: every hop on one cable, three workers a chip.
    o.planes = 1;
    const LoweredOp one = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    assert_int_equal(one.planes, 1);
    assert_int_equal(one.streams.size(), n);
    assert_string_equal(run_model(one).c_str(), "");

    // Both ways round the ring on two planes, a worker per cable, would need
    // eight workers a chip: instead each worker serves both cables to its
    // neighbour, one EDM connection each, and instructions name theirs.
    o.planes = 0;
    const LoweredOp bidir = lower(build_plan(ctx, "ring_bidir"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    assert_int_equal(bidir.planes, 2);
    assert_int_equal(bidir.workers.size(), 4 * n);
    assert_int_equal(bidir.streams.size(), 4 * n);  // two cables, both ways
    std::set<uint32_t> connections_used;
    for (const WorkerProgram& w : bidir.workers) {
        assert_int_equal(w.ports.size(), 2);
        for (const abi::CclInstr& in : w.code)
            if (in.opcode == abi::kCclSend || in.opcode == abi::kCclRecv) {
                assert_true(in.channel < 2);
                connections_used.insert(in.channel);
            }
    }
    assert_int_equal(connections_used.size(), 2);
    assert_string_equal(run_model(bidir).c_str(), "");
}

void test_lanes_go_where_cores_are_spare(void**) {
    // Line of 4 with the ring algorithm: the middle chips send and receive both
    // ways, so all four of their cores are busy and no cable gets a second lane;
    // the end chips' cables could, but their far ends are the middle chips.
    Topology t(4, line_links(4));
    OpRequest r;
    r.op = Collective::kReduceScatter;
    r.bytes = 4 * 5 * 16384;
    const OpLayout l = layout_op(r, 4, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(16384);
    o.workers_per_link = 2;
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), transport::CableRouting(t), {4, 5, 6, 7}, o);
    for (const Stream& s : op.streams) assert_int_equal(s.lane, 0);
    assert_string_equal(run_model(op).c_str(), "");

    // choose_lanes alone: a spare core at each end buys one more lane, handed
    // out a level at a time; a direction with one piece gets no second lane.
    const std::vector<LinkDirection> dirs = {{0, 1, 1, 9}, {1, 1, 2, 9}, {2, 1, 0, 1}};
    assert_true(choose_lanes(dirs, {2, 2, 2}, 4, 2) == std::vector<uint32_t>({2, 2, 1}));
    assert_true(choose_lanes(dirs, {2, 3, 2}, 4, 2) == std::vector<uint32_t>({2, 1, 1}));
    assert_true(choose_lanes(dirs, {2, 2, 2}, 8, 4) == std::vector<uint32_t>({4, 4, 1}));
    assert_true(choose_lanes(dirs, {2, 2, 2}, 4, 1) == std::vector<uint32_t>({1, 1, 1}));
}

void test_too_many_workers_per_link_is_refused(void**) {
    Topology t(2, line_links(2));
    Plan p;
    p.send(0, 0, Pages::run(0x100000, 64), 1, Pages::run(0x200000, 64));
    LoweringOptions o = options(1 << 20);
    o.workers_per_link = 3;
    const std::string too_many = lowering_error(p, t, o);
    assert_non_null(strstr(too_many.c_str(), "workers_per_link 3 needs 6 worker cores"));
    assert_non_null(strstr(too_many.c_str(), "the board has 4"));
    o.workers_per_link = 0;
    assert_non_null(strstr(lowering_error(p, t, o).c_str(), "at least 1"));
}

void test_layout_splits_remainders_to_the_first_ranks(void**) {
    OpRequest r;
    r.op = Collective::kReduceScatter;
    r.bytes = 4 * 11;
    const OpLayout l = layout_op(r, 4, Pages::run(0x81000000, 200 << 20));
    assert_true(l.block_elems == std::vector<uint64_t>({3, 3, 3, 2}));
    assert_true(l.block_first == std::vector<uint64_t>({0, 3, 6, 9}));
    r.op = Collective::kAllGather;
    r.shape = {2, 3, 4, 5};
    r.dim = 2;
    const OpLayout g = layout_op(r, 4, Pages::run(0x81000000, 200 << 20));
    const Pages b = g.output_block(1);  // 6 pages of 4*5 elements, one every 4 ranks' worth
    assert_int_equal(b.count, 6);
    assert_int_equal(b.page_size, 20 * 4);
    assert_int_equal(b.stride, 4 * 20 * 4);
    assert_int_equal(b.base, g.output + 20 * 4);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctring_shards_match_the_seed_example),
        cmocka_unit_test(test_bidirectional_all_gather_covers_every_shard),
        cmocka_unit_test(test_reverse_reduce_scatter_ends_at_the_same_owner),
        cmocka_unit_test(test_ctring_reduces_every_rank_once_either_way),
        cmocka_unit_test(test_2d_all_reduce_sums_once_in_one_order),
        cmocka_unit_test(test_swing_sums_once_and_stays_near),
        cmocka_unit_test(test_2d_all_gather_delivers_every_block),
        cmocka_unit_test(test_ctring_auto_tune_tiers),
        cmocka_unit_test(test_all_reduce_ranks_sum_in_one_order),
        cmocka_unit_test(test_ring_orders_and_stretch),
        cmocka_unit_test(test_disconnected_cluster_is_named),
        cmocka_unit_test(test_slicer_cuts_pieces_within_bounds),
        cmocka_unit_test(test_lowering_routes_and_orders_workers),
        cmocka_unit_test(test_a_chip_with_too_many_ports_folds_them_onto_its_workers),
        cmocka_unit_test(test_layout_splits_remainders_to_the_first_ranks),
        cmocka_unit_test(test_ring_reduce_scatter_strides_pieces_over_two_workers),
        cmocka_unit_test(test_ctring_both_ways_lowers_without_a_race),
        cmocka_unit_test(test_all_reduce_algorithms_lower_without_a_race),
        cmocka_unit_test(test_ring_all_gather_stripes_every_hop_over_both_planes),
        cmocka_unit_test(test_lanes_go_where_cores_are_spare),
        cmocka_unit_test(test_too_many_workers_per_link_is_refused),
        cmocka_unit_test(test_kept_dram_is_left_alone),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
