// The 1D fabric's per-hop decisions (firmware/fabric/route.h) on lines and
// rings of routers: a unicast is delivered once, by the chip `hops` away; a
// multicast by exactly its range; a packet whose TTL runs out is dropped by
// the router that sees it at 0; and on a ring the dateline's virtual channel
// is what keeps the buffers' dependency graph free of cycles (no deadlock),
// which it is not without it.
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "fabric/route.h"
#include "weft/abi/fabric.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

struct Trip {
    std::vector<int> delivered;  // positions, in order
    int expired_at = -1;
    int routers = 0;  // receptions
};

// A packet sent from position `from` towards +1 (or -1) on a line of n chips.
Trip travel(abi::FabricPacketHeader h, int from, int dir, int n) {
    Trip t;
    for (int at = from + dir; at >= 0 && at < n; at += dir) {
        ++t.routers;
        const fabric::Decision d = fabric::on_receive(h);
        if (d.expired) {
            t.expired_at = at;
            break;
        }
        if (d.deliver) t.delivered.push_back(at);
        if (!d.forward) break;
    }
    return t;
}

constexpr abi::FabricNodeId kSrc{0, 0}, kDst{0, 5};

void test_header_is_one_line(void**) {
    static_assert(sizeof(abi::FabricPacketHeader) == 64);
    const abi::FabricPacketHeader h = abi::fabric_unicast_write(kSrc, kDst, 5, 4, 0x81100000, 4096);
    assert_int_equal(h.hops, 5);
    assert_int_equal(h.ttl, abi::kFabricDefaultTtl);
    assert_int_equal(h.send_type, abi::kFabricUnicast);
    assert_int_equal(h.noc_command, abi::kFabricWrite);
    assert_int_equal(h.vc, 0);
}

void test_unicast_is_delivered_once_hops_away(void**) {
    for (int n : {2, 4, 8})
        for (int from = 0; from < n; ++from)
            for (int dir : {+1, -1})
                for (int hops = 1; from + dir * hops >= 0 && from + dir * hops < n; ++hops) {
                    const Trip t = travel(abi::fabric_unicast_write(kSrc, kDst, uint8_t(hops), 4, 0, 64), from, dir, n);
                    assert_int_equal(t.delivered.size(), 1);
                    assert_int_equal(t.delivered[0], from + dir * hops);
                    assert_int_equal(t.routers, hops);
                    assert_int_equal(t.expired_at, -1);
                }
}

void test_multicast_reaches_exactly_its_range(void**) {
    const int n = 8;
    for (int from : {0, 3})  // from an end and from the middle
        for (int first = 1; from + first < n; ++first)
            for (int count = 1; from + first + count - 1 < n; ++count) {
                const Trip t = travel(abi::fabric_multicast_write(kSrc, kDst, uint8_t(first), uint8_t(count), 4, 0, 64),
                                      from, +1, n);
                assert_int_equal(t.delivered.size(), count);
                for (int k = 0; k < count; ++k) assert_int_equal(t.delivered[k], from + first + k);
                assert_int_equal(t.routers, first + count - 1);  // nobody past the range sees it
            }
}

void test_ttl_runs_out_where_it_should(void**) {
    abi::FabricPacketHeader h = abi::fabric_unicast_write(kSrc, kDst, 2, 4, 0, 64);
    h.ttl = 1;  // one reception allowed, two hops needed
    const Trip t = travel(h, 0, +1, 4);
    assert_true(t.delivered.empty());
    assert_int_equal(t.expired_at, 2);
    h.ttl = 2;
    assert_int_equal(travel(h, 0, +1, 4).delivered.size(), 1);
    // A corrupt header that would circle a ring: dropped after ttl receptions.
    abi::FabricPacketHeader lost = abi::fabric_unicast_write(kSrc, kDst, 255, 4, 0, 64);
    lost.ttl = 10;
    int receptions = 0;
    for (fabric::Decision d; !d.expired; ++receptions) d = fabric::on_receive(lost);
    assert_int_equal(receptions, 11);  // ten forwarded, the eleventh router drops it
}

// Between meshes (a router with tables) the TTL counts new routes, not
// cables: a packet with TTL 1 crosses any number of cables on its route,
// gets one new route where it enters a mesh, and is dropped at the next.
void test_between_meshes_ttl_counts_new_routes(void**) {
    static abi::FabricRouteTable table{};  // a chip of mesh 1: toward mesh 2, one cable east
    table.meshes = 3;
    table.to_mesh[2] = abi::FabricRouteEntry{1, abi::kFabricEast, 0, 0};
    const fabric::Hop at{2, abi::kFabricWest, {1, 0}, &table};
    abi::FabricPacketHeader h = abi::fabric_unicast_write({0, 0}, {2, 3}, 5, 4, 0, 64);
    h.ttl = 1;
    for (int cable = 0; cable < 4; ++cable) {  // along its route: the TTL is not touched
        const fabric::Decision d = fabric::on_receive(h, at);
        assert_true(d.forward && !d.expired);
    }
    assert_int_equal(h.ttl, 1);
    fabric::Decision d = fabric::on_receive(h, at);  // its route ends here: a new one
    assert_true(d.forward && !d.expired);
    assert_int_equal(d.next, abi::kFabricEast);
    assert_int_equal(h.ttl, 0);
    d = fabric::on_receive(h, at);  // and ends again: no TTL left for another
    assert_true(d.expired);
}

// Channel dependency graph of every route on a ring of n (both directions,
// every source and length up to n-1): a packet holding the buffer of channel
// (cable, direction, vc) waits for the next one's. Deadlock is possible iff
// the graph has a cycle (Dally and Seitz).
bool has_cycle(int n, bool dateline) {
    using Channel = std::tuple<int, int, int>;  // cable (from position), direction, vc
    std::map<Channel, std::set<Channel>> next;
    for (int dir : {+1, -1})
        for (int s = 0; s < n; ++s)
            for (int hops = 2; hops < n; ++hops) {
                abi::FabricPacketHeader h = abi::fabric_unicast_write(kSrc, kDst, uint8_t(hops), 4, 0, 64);
                int at = s;
                Channel prev{-1, 0, 0};
                for (int k = 0; k < hops; ++k) {
                    const int to = ((at + dir) % n + n) % n;
                    fabric::cross_cable(h, dateline && ((dir > 0 && at == n - 1) || (dir < 0 && at == 0)));
                    const Channel c{at, dir, h.vc};
                    if (std::get<0>(prev) >= 0) next[prev].insert(c);
                    prev = c;
                    at = to;
                }
            }
    std::map<Channel, int> state;  // 1: on the path, 2: done
    std::function<bool(const Channel&)> visit = [&](const Channel& c) {
        state[c] = 1;
        for (const Channel& d : next[c])
            if (state[d] == 1 || (state[d] == 0 && visit(d))) return true;
        state[c] = 2;
        return false;
    };
    for (const auto& [c, _] : next)
        if (state[c] == 0 && visit(c)) return true;
    return false;
}

void test_dateline_breaks_the_ring_cycle(void**) {
    for (int n : {3, 4, 8}) {
        assert_true(has_cycle(n, false));  // one VC: wrapping traffic can deadlock
        assert_false(has_cycle(n, true));  // the dateline VC: it cannot
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_is_one_line),
        cmocka_unit_test(test_unicast_is_delivered_once_hops_away),
        cmocka_unit_test(test_multicast_reaches_exactly_its_range),
        cmocka_unit_test(test_ttl_runs_out_where_it_should),
        cmocka_unit_test(test_between_meshes_ttl_counts_new_routes),
        cmocka_unit_test(test_dateline_breaks_the_ring_cycle),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
