// CMocka tests of the algorithm table (host/ccl/algorithm_table.h), no QEMU:
// every op has algorithms, each name once per op, the lists users see keep
// their order, and an algorithm that needs a transport capability (the
// fabric's multicast) is refused by a transport that lacks it, naming both,
// and placed by one that offers it.
#include <cstring>
#include <set>
#include <string>

#include "ccl/algorithm_table.h"
#include "ccl/placement.h"
#include "ccl/topology.h"
#include "small_board.h"
#include "transport/edm/edm_transport.h"
#include "transport/fabric/fabric_transport.h"

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

namespace {

std::string words(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : " ") + n;
    return out;
}

using test::small_board;

// A line of three chips, E -> W.
std::vector<LinkInfo> line3() { return {{0, 1, 1, 3, true}, {1, 1, 2, 3, true}}; }

transport::FabricBuilder line3_fabric(const BoardInfo& board) {
    return transport::FabricBuilder(board, {0, 1, 2}, {{0, 1, 1, 3}, {1, 1, 2, 3}}, false);
}

uint32_t kind_capabilities(const std::string& name) {
    for (const transport::TransportKind& k : transport::transport_kinds())
        if (name == k.name) return k.capabilities;
    fail_msg("no transport kind '%s'", name.c_str());
    return 0;
}

void test_every_op_has_an_algorithm_that_runs_anywhere(void**) {
    for (Collective op : all_collectives())
        if (algorithms(op).empty()) fail_msg("%s has no algorithm", collective_name(op).c_str());
}

void test_names_are_unique_per_op_and_lower_one_way(void**) {
    std::set<std::pair<Collective, std::string>> seen;
    for (const Algorithm& a : algorithm_table()) {
        if (!seen.insert({a.op, a.name}).second)
            fail_msg("%s has two algorithms named %s", collective_name(a.op).c_str(), a.name);
        if ((a.plan == nullptr) == (a.native == nullptr))
            fail_msg("%s/%s needs exactly one of a plan and a transport's own op", collective_name(a.op).c_str(),
                     a.name);
        // A transport runs an op itself only through a capability it offers.
        if (a.native && !a.capabilities) fail_msg("%s/%s needs no capability", collective_name(a.op).c_str(), a.name);
        if (a.capabilities && transports_for(a).empty())
            fail_msg("%s/%s runs on no transport", collective_name(a.op).c_str(), a.name);
    }
}

void test_multicast_needs_the_multicast_capability(void**) {
    size_t rows = 0;
    for (const Algorithm& a : algorithm_table()) {
        if (std::string(a.name) != "multicast") continue;
        ++rows;
        assert_int_equal(a.capabilities, transport::kCanMulticast);
        assert_null(a.plan);
        assert_false(can_run(a, true, 0));
        assert_true(can_run(a, false, transport::kCanMulticast));
    }
    assert_int_equal(rows, 2);  // all_gather's and broadcast's
    assert_string_equal(words(transports_for(*find_algorithm(Collective::kBroadcast, "multicast"))).c_str(), "fabric");
}

// What help, completion and --algo's errors list, in the order they always had.
void test_the_lists_users_see_keep_their_order(void**) {
    assert_string_equal(words(algorithms(Collective::kAllReduce, true)).c_str(),
                        "ring full_mesh reduce_root tree naive_ring recursive_doubling halving_doubling swing 2d");
    assert_string_equal(words(all_algorithms(Collective::kAllReduce)).c_str(),
                        "ring full_mesh reduce_root tree naive_ring recursive_doubling halving_doubling swing 2d hierarchical");
    assert_string_equal(words(algorithms(Collective::kAllGather)).c_str(), "ring ring_bidir ring_halfway line");
    assert_string_equal(words(all_algorithms(Collective::kAllGather)).c_str(),
                        "ring ring_bidir ring_halfway line multicast 2d");
    assert_string_equal(words(algorithms(Collective::kBroadcast, false, transport::kCanMulticast)).c_str(),
                        "chain direct multicast");
    assert_null(find_algorithm(Collective::kReduce, "multicast"));
}

// The EDM offers no multicast: asking it for one names the algorithm, the
// EDM, and the transport that would do.
void test_a_transport_without_the_capability_is_refused_by_name(void**) {
    const BoardInfo board = small_board();
    const ccl::Topology t(3, line3());
    transport::L1Allocator mem(board);
    transport::EdmTransport edm(t, board, mem, {});
    assert_null(edm.multicast());
    assert_int_equal(edm.capabilities(), kind_capabilities("edm"));
    const Algorithm& a = *find_algorithm(Collective::kAllGather, "multicast");
    assert_string_equal(cannot_run(a, edm.name(), edm.capabilities()).c_str(),
                        "all_gather's multicast algorithm needs a transport that can multicast, which the edm "
                        "cannot: it runs on the fabric: use --transport fabric");
    assert_string_equal(cannot_run(*find_algorithm(Collective::kAllGather, "ring"), edm.name(), 0).c_str(), "");
}

// The fabric offers it: the row's op places one multicast kernel per chip,
// each reaching the chips on either side of it along the line.
void test_the_fabric_places_a_multicast_all_gather(void**) {
    const BoardInfo board = small_board();
    const transport::FabricBuilder fabric = line3_fabric(board);
    transport::L1Allocator mem(board);
    transport::FabricStreamOptions streams;
    streams.message_bytes = 4096;  // the fabric's packets' payload
    transport::FabricTransport ft(fabric, board, mem, streams);
    assert_int_equal(ft.capabilities(), kind_capabilities("fabric"));
    const Algorithm& a = *find_algorithm(Collective::kAllGather, "multicast");
    assert_string_equal(cannot_run(a, ft.name(), ft.capabilities()).c_str(), "");
    OpRequest r;
    r.op = Collective::kAllGather;
    r.bytes = 3 * 4096;
    const OpLayout l = layout_op(r, 3, Pages::run(0x81000000, 64 << 20));
    a.native(r, l, ft);
    const PlacedOp placed = place_op(LoweredOp{}, ft, mem, nullptr);
    assert_int_equal(placed.launches.size(), 3);
    const uint8_t forward[3] = {2, 1, 0}, backward[3] = {0, 1, 2};
    for (uint32_t c = 0; c < 3; ++c) {
        const Launch& launch = placed.launches[c];
        assert_int_equal(launch.chip, c);
        assert_string_equal(launch.kernel->name.c_str(), "fabric_multicast");
        abi::FabricMulticastArgs args{};
        assert_true(launch.args.size() * 4 >= sizeof args);
        std::memcpy(&args, launch.args.data(), sizeof args);
        assert_int_equal(args.count[0], forward[c]);
        assert_int_equal(args.count[1], backward[c]);
        assert_int_equal(args.expect, 2);
        assert_int_equal(args.dst, l.output_block(c).base);
        assert_int_equal(args.bytes, 4096);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_has_an_algorithm_that_runs_anywhere),
        cmocka_unit_test(test_names_are_unique_per_op_and_lower_one_way),
        cmocka_unit_test(test_multicast_needs_the_multicast_capability),
        cmocka_unit_test(test_the_lists_users_see_keep_their_order),
        cmocka_unit_test(test_a_transport_without_the_capability_is_refused_by_name),
        cmocka_unit_test(test_the_fabric_places_a_multicast_all_gather),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
