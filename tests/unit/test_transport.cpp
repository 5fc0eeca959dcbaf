// CMocka tests of the transport seam (host/transport/transport.h), no QEMU:
// the collectives lowered and placed over a fake transport that reaches every
// chip in one hop (as a fabric's routers do), beside the EDM's cable routing;
// and the EDM transport placing an op into a recorded memory image.
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "ccl/algorithm_table.h"
#include "ccl/collective.h"
#include "ccl/lowering.h"
#include "ccl/placement.h"
#include "ccl/topology.h"
#include "common/error.h"
#include "driver/board.h"
#include "lowered_op_model.h"
#include "small_board.h"
#include "transport/cable_routing.h"
#include "transport/edm/edm_transport.h"
#include "weft/abi/edm.h"

// cmocka last: its fail() macro would clash with the C++ headers.
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

constexpr uint32_t kFakeKind = 0x7e;

// Every chip reaches every other in one hop, its routers forwarding: the
// hop from chip c to chip d leaves c at port d and enters d at port c.
// Streams get made-up ends the test can recognise; everything the runner
// asks of a transport is recorded.
class FakeTransport final : public transport::Transport {
public:
    explicit FakeTransport(uint32_t chips) : n_(chips), hops_(chips * chips) {
        for (uint32_t c = 0; c < n_; ++c)
            for (uint32_t d = 0; d < n_; ++d)
                if (c != d) hops_[c * n_ + d] = {{c, d, d, c}};
    }
    uint32_t chips() const override { return n_; }
    const std::vector<transport::Hop>& worker_hops(uint32_t from, uint32_t to) const override {
        return hops_.at(from * n_ + to);
    }
    const std::vector<transport::Hop>& parallel(uint32_t from, uint32_t to) const override {
        return hops_.at(from * n_ + to);
    }
    const transport::Hop& hop_at(uint32_t chip, uint32_t port) const override {
        if (chip == port) throw Error("no hop from a chip to itself");
        return hops_.at(chip * n_ + port).front();
    }
    uint32_t max_parallel() const override { return 1; }

    std::string name() const override { return "fake"; }
    uint32_t message_bytes() const override { return 4096; }
    std::string cannot_connect(const transport::StreamSpec& s) const override {
        return s.peer_chip == refused_chip ? "chip " + std::to_string(s.peer_chip) + " is refused" : "";
    }
    transport::StreamEnds add_stream(const transport::StreamSpec& s) override {
        if (const std::string why = cannot_connect(s); !why.empty()) throw Error("fake transport: " + why);
        added.push_back(s);
        const uint64_t i = added.size();
        return {{kFakeKind, 0, 0x10000 + 16 * i}, {kFakeKind, 0, 0x20000 + 16 * i}};
    }
    void write(ChipWriter& memory) const override {
        const uint32_t marker = 0xfab;
        memory.write(0, 0x80000000, &marker, 4);
        ++writes;
    }
    std::vector<Launch> launches() const override { return {{0, 0, nullptr, {0xfab}}}; }

    std::vector<transport::StreamSpec> added;
    mutable int writes = 0;
    uint32_t refused_chip = ~0u;

private:
    uint32_t n_;
    std::vector<std::vector<transport::Hop>> hops_;
};

std::vector<LinkInfo> line_links(uint32_t n) {
    std::vector<LinkInfo> v;
    for (uint32_t i = 0; i + 1 < n; ++i) v.push_back({i, 1, i + 1, 3, true});  // E -> W
    return v;
}

std::vector<LinkInfo> ring_links(uint32_t n) {
    std::vector<LinkInfo> v = line_links(n);
    v.push_back({n - 1, 1, 0, 3, true});
    return v;
}

LoweringOptions options(uint64_t piece, uint32_t message_bytes) {
    LoweringOptions o;
    o.piece_bytes = piece;
    o.message_bytes = message_bytes;
    o.scratch = Pages::run(0x1000000, 1 << 20);
    return o;
}

// Chip 0 sends 64 KiB to chip 3 of a line: a plan with no overlay hops to shorten.
Plan far_send() {
    Plan p;
    p.send(0, 0, Pages::run(0x100000, 65536), 3, Pages::run(0x200000, 65536));
    return p;
}

std::set<uint32_t> chips_with_workers(const LoweredOp& op) {
    std::set<uint32_t> chips;
    for (const WorkerProgram& w : op.workers) chips.insert(w.chip);
    return chips;
}

using test::small_board;

// The bytes the image writes at [address, +len) of `chip`, from the last write that covers them.
std::vector<uint8_t> written(const MemoryImage& image, uint32_t chip, uint64_t address, size_t len) {
    for (auto it = image.writes().rbegin(); it != image.writes().rend(); ++it)
        if (it->chip == chip && address >= it->address && address + len <= it->address + it->bytes.size())
            return {it->bytes.begin() + (address - it->address), it->bytes.begin() + (address - it->address + len)};
    return {};
}

template <typename T>
T args_of(const Launch& l) {
    T t{};
    assert_true(l.args.size() * 4 >= sizeof(T));
    std::memcpy(&t, l.args.data(), sizeof(T));
    return t;
}

void test_cable_routing_forwards_through_every_chip_between(void**) {
    ccl::Topology t(4, line_links(4));
    const LoweredOp op = lower(far_send(), transport::CableRouting(t), {4, 5, 6, 7}, options(16384, 4096));
    assert_true(chips_with_workers(op) == (std::set<uint32_t>{0, 1, 2, 3}));
    assert_int_equal(op.streams.size(), 3);  // 0->1, 1->2, 2->3
    assert_int_equal(op.hops, 4 * 3);        // four pieces, three hops each
    assert_string_equal(run_model(op).c_str(), "");
}

void test_a_transport_that_routes_leaves_the_chips_between_alone(void**) {
    FakeTransport fake(4);
    const LoweredOp op = lower(far_send(), fake, {4, 5, 6, 7}, options(16384, fake.message_bytes()));
    assert_true(chips_with_workers(op) == (std::set<uint32_t>{0, 3}));
    assert_int_equal(op.streams.size(), 1);
    const Stream& s = op.streams[0];
    assert_int_equal(s.chip, 0);
    assert_int_equal(s.port, 3);  // the fake's port towards chip 3
    assert_int_equal(s.peer_chip, 3);
    assert_int_equal(s.peer_port, 0);
    assert_int_equal(s.messages, 65536 / 4096);  // counted in the transport's messages
    assert_int_equal(op.hops, 4);
    assert_int_equal(op.bytes_on_links, 65536);
    assert_string_equal(run_model(op).c_str(), "");
}

void test_ring_all_reduce_over_the_fake_transport_is_race_free(void**) {
    const uint32_t n = 4;
    ccl::Topology t(n, ring_links(n));
    FakeTransport fake(n);
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = n * 3 * 16384 + 400;
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    for (const char* algo : {"ring", "naive_ring", "tree"}) {
        LoweringOptions o = options(16384, fake.message_bytes());
        o.element_size = l.element;
        o.scratch = l.scratch;
        const LoweredOp op = lower(build_plan(ctx, algo), fake, {4, 5, 6, 7}, o);
        for (const Stream& s : op.streams) assert_string_equal(fake.cannot_connect(s).c_str(), "");
        const std::string verdict = run_model(op);
        if (!verdict.empty()) fprintf(stderr, "%s: %s\n", algo, verdict.c_str());
        assert_string_equal(verdict.c_str(), "");
    }
}

void test_placement_takes_every_stream_end_from_the_transport(void**) {
    const uint32_t n = 4;
    ccl::Topology t(n, ring_links(n));
    FakeTransport fake(n);
    OpRequest r;
    r.op = Collective::kAllGather;
    r.bytes = n * 2 * 16384;
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(16384, fake.message_bytes());
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), fake, {4, 5, 6, 7}, o);
    const BoardInfo board = small_board();
    transport::L1Allocator mem(board);
    const KernelImage worker_kernel{};
    const PlacedOp placed = place_op(op, fake, mem, &worker_kernel);

    assert_int_equal(fake.added.size(), op.streams.size());
    for (size_t s = 0; s < op.streams.size(); ++s) {
        assert_int_equal(fake.added[s].chip, op.streams[s].chip);
        assert_int_equal(fake.added[s].messages, op.streams[s].messages);
    }
    assert_int_equal(fake.writes, 1);
    assert_int_equal(written(placed.memory, 0, 0x80000000, 4).size(), 4);
    // The transport's kernels first, then a worker kernel per worker.
    assert_int_equal(placed.launches.size(), 1 + op.workers.size());
    assert_null(placed.launches[0].kernel);
    std::set<uint64_t> refs_seen;
    for (size_t w = 0; w < op.workers.size(); ++w) {
        const Launch& l = placed.launches[1 + w];
        assert_ptr_equal(l.kernel, &worker_kernel);
        const auto args = args_of<abi::CclWorkerArgs>(l);
        assert_int_equal(args.instructions, op.workers[w].code.size());
        assert_int_equal(args.channel_count, op.workers[w].ports.size());
        assert_true(board.cores[l.core].l1.contains(args.program, args.instructions * sizeof(abi::CclInstr)));
        const auto table = written(placed.memory, l.chip, args.channels, sizeof(abi::ChannelRef) * args.channel_count);
        assert_int_equal(table.size(), sizeof(abi::ChannelRef) * args.channel_count);
        for (uint32_t c = 0; c < args.channel_count; ++c) {
            abi::ChannelRef ref;
            std::memcpy(&ref, table.data() + c * sizeof ref, sizeof ref);
            assert_int_equal(ref.transport, kFakeKind);
            assert_true(refs_seen.insert(ref.address).second);  // every end handed to one worker only
        }
    }
    assert_int_equal(refs_seen.size(), 2 * op.streams.size());
}

void test_placement_names_a_stream_the_transport_refuses(void**) {
    FakeTransport fake(4);
    fake.refused_chip = 3;
    const LoweredOp op = lower(far_send(), fake, {4, 5, 6, 7}, options(16384, fake.message_bytes()));
    const BoardInfo board = small_board();
    transport::L1Allocator mem(board);
    std::string error;
    try {
        place_op(op, fake, mem, nullptr);
    } catch (const Error& e) {
        error = e.what();
    }
    assert_non_null(strstr(error.c_str(), "chip 3 is refused"));
}

void test_edm_transport_places_an_edm_pair_per_cable(void**) {
    const uint32_t n = 4;
    ccl::Topology t(n, ring_links(n));
    const BoardInfo board = small_board();
    transport::L1Allocator mem(board);
    transport::EdmOptions eo;
    eo.slots = 4;
    eo.slot_size = 4096;
    transport::EdmTransport edm(t, board, mem, eo);
    OpRequest r;
    r.op = Collective::kAllGather;
    r.bytes = n * 2 * 16384;
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}};
    LoweringOptions o = options(16384, edm.message_bytes());
    o.scratch = l.scratch;
    const LoweredOp op = lower(build_plan(ctx, "ring"), edm, {4, 5, 6, 7}, o);
    assert_int_equal(op.streams.size(), n);  // one way round the ring
    const PlacedOp placed = place_op(op, edm, mem, nullptr);

    // Every stream end is an EDM connection in its worker's L1.
    for (size_t s = 0; s < op.streams.size(); ++s) {
        const auto& ends = placed.ends[s];
        assert_int_equal(ends.sender.transport, abi::kTransportEdm);
        assert_int_equal(ends.receiver.transport, abi::kTransportEdm);
        assert_true(board.cores[op.streams[s].sender_core].l1.contains(ends.sender.address, 1));
        assert_true(board.cores[op.streams[s].receiver_core].l1.contains(ends.receiver.address, 1));
    }
    // Two EDM launches per cable, each pointing at a configuration the image writes.
    size_t edms = 0;
    for (const Launch& launch : placed.launches) {
        if (!launch.kernel || launch.kernel->name != "edm") continue;
        ++edms;
        assert_int_equal(board.cores[launch.core].role, CoreRole::kErisc);
        const auto args = args_of<abi::EdmArgs>(launch);
        const auto bytes = written(placed.memory, launch.chip, args.config, sizeof(abi::EdmConfig));
        assert_int_equal(bytes.size(), sizeof(abi::EdmConfig));
        abi::EdmConfig c;
        std::memcpy(&c, bytes.data(), sizeof c);
        assert_int_equal(c.magic, abi::kEdmMagic);
        assert_int_equal(c.num_channels, 1);
        assert_int_equal(c.port, board.cores[launch.core].port);
    }
    assert_int_equal(edms, 2 * n);
    assert_int_equal(edm.channels_on(0, 1), 1);
}

void test_edm_transport_refuses_ports_no_cable_joins(void**) {
    ccl::Topology t(4, line_links(4));
    const BoardInfo board = small_board();
    transport::L1Allocator mem(board);
    transport::EdmTransport edm(t, board, mem, {});
    transport::StreamSpec s;
    s.chip = 0;
    s.port = 1;
    s.peer_chip = 2;  // chip 0's E cable goes to chip 1
    s.peer_port = 3;
    s.sender_core = 4;
    s.receiver_core = 5;
    s.messages = 1;
    assert_non_null(strstr(edm.cannot_connect(s).c_str(), "no cable joins these ports"));
    s.peer_chip = 1;
    assert_string_equal(edm.cannot_connect(s).c_str(), "");
    s.receiver_core = 1;  // an ERISC core
    assert_non_null(strstr(edm.cannot_connect(s).c_str(), "core 1 is not a worker core"));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cable_routing_forwards_through_every_chip_between),
        cmocka_unit_test(test_a_transport_that_routes_leaves_the_chips_between_alone),
        cmocka_unit_test(test_ring_all_reduce_over_the_fake_transport_is_race_free),
        cmocka_unit_test(test_placement_takes_every_stream_end_from_the_transport),
        cmocka_unit_test(test_placement_names_a_stream_the_transport_refuses),
        cmocka_unit_test(test_edm_transport_places_an_edm_pair_per_cable),
        cmocka_unit_test(test_edm_transport_refuses_ports_no_cable_joins),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
