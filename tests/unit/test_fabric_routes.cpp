// L0 routing of the 2D fabric (host/transport/fabric/routing2d): the seed's
// 3x3 table exactly; on every mesh and torus up to 8x8 every route reaches
// its destination, X before Y, by a shortest way; and the deadlock check:
// dimension order on a mesh is acyclic, a torus is cyclic without datelines
// and acyclic with them, and a hand-made bad table is caught with its cycle.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "transport/fabric/routing2d.h"

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

void test_the_seeds_3x3_table(void**) {
    const std::vector<std::vector<std::string>> seed = {
        {"", "E", "EE", "S", "ES", "EES", "SS", "ESS", "EESS"}, {"W", "", "E", "WS", "S", "ES", "WSS", "SS", "ESS"},
        {"WW", "W", "", "WWS", "WS", "S", "WWSS", "WSS", "SS"}, {"N", "EN", "EEN", "", "E", "EE", "S", "ES", "EES"},
        {"WN", "N", "EN", "W", "", "E", "WS", "S", "ES"},       {"WWN", "WN", "N", "WW", "W", "", "WWS", "WS", "S"},
        {"NN", "ENN", "EENN", "N", "EN", "EEN", "", "E", "EE"}, {"WNN", "NN", "ENN", "WN", "N", "EN", "W", "", "E"},
        {"WWNN", "WNN", "NN", "WWN", "WN", "N", "WW", "W", ""},
    };
    const auto t = transport::l0_tables(Mesh::grid(3, 3, false));
    for (uint32_t a = 0; a < 9; ++a)
        for (uint32_t b = 0; b < 9; ++b)
            if (t[a][b] != seed[a][b])
                fail_msg("%u -> %u: %s, the seed says %s", a, b, t[a][b].c_str(), seed[a][b].c_str());
}

uint32_t ring_distance(uint32_t a, uint32_t b, uint32_t n, bool wrap) {
    const uint32_t d = a > b ? a - b : b - a;
    return wrap ? std::min(d, n - d) : d;
}

void test_every_route_is_shortest_and_dimension_ordered(void**) {
    for (bool torus : {false, true})
        for (uint32_t w = 1; w <= 8; ++w)
            for (uint32_t h = 1; h <= 8; ++h) {
                const Mesh m = Mesh::grid(w, h, torus);
                const auto t = transport::l0_tables(m);
                for (uint32_t a = 0; a < m.chips(); ++a)
                    for (uint32_t b = 0; b < m.chips(); ++b) {
                        const std::string& r = t[a][b];
                        const uint32_t want = ring_distance(a % w, b % w, w, torus) +
                                              ring_distance(a / w, b / w, h, torus);
                        if (r.size() != want)
                            fail_msg("%ux%u %s: %u -> %u takes %zu hops, not %u", w, h, torus ? "torus" : "mesh", a, b,
                                     r.size(), want);
                        const size_t first_y = r.find_first_of("NS");
                        if (first_y != std::string::npos && r.find_first_of("EW", first_y) != std::string::npos)
                            fail_msg("%u -> %u goes Y before X: %s", a, b, r.c_str());
                    }
                // Every route ends where it should (else this throws), and no
                // table set deadlocks: dimension order, with a torus's datelines.
                if (!transport::check_dependencies(m, t, torus).acyclic)
                    fail_msg("%ux%u %s: the channel dependency graph has a cycle", w, h, torus ? "torus" : "mesh");
            }
}

void test_dimension_order_on_a_mesh_is_acyclic(void**) {
    for (uint32_t n : {2u, 3u, 4u, 8u}) {
        const Mesh m = Mesh::grid(n, n, false);
        assert_true(transport::check_dependencies(m, transport::l0_tables(m), false).acyclic);
    }
}

void test_a_torus_needs_its_datelines(void**) {
    const Mesh m = Mesh::grid(4, 4, true);
    const auto t = transport::l0_tables(m);
    const auto without = transport::check_dependencies(m, t, false);
    assert_false(without.acyclic);
    assert_true(without.cycle.size() >= 4);  // round a ring of four
    assert_true(transport::check_dependencies(m, t, true).acyclic);
}

// Under bubble flow control each ring keeps a free slot, so the check sees
// a torus ring by ring: dimension order's turns (rows, then columns) have no
// cycle. A route that turns from a column into a row closes one with the
// routes that turn from that row into the column.
void test_bubble_flow_control_is_checked_ring_by_ring(void**) {
    const Mesh m = Mesh::grid(4, 4, true);
    auto t = transport::l0_tables(m);
    assert_true(transport::check_dependencies(m, t, false, true).acyclic);
    assert_string_equal(t[0][5].c_str(), "ES");  // row 0 east, then column 1 south
    t[13][2] = "SE";                             // column 1 south (through its wrap), then row 0 east
    const auto v = transport::check_dependencies(m, t, false, true);
    assert_false(v.acyclic);
    std::string names;
    for (const auto& c : v.cycle) names += c + "; ";
    assert_string_equal(names.c_str(), "row 0 vc0; column 1 vc0; ");
}

// On a 2x2 mesh, routes that turn both ways round the square close a cycle:
// 0 E then S, 1 S then W, 3 W then N, 2 N then E.
void test_a_bad_table_is_caught_with_its_cycle(void**) {
    const Mesh m = Mesh::grid(2, 2, false);
    auto t = transport::l0_tables(m);
    t[0][3] = "ES";
    t[1][2] = "SW";
    t[3][0] = "WN";
    t[2][1] = "NE";
    const auto v = transport::check_dependencies(m, t, false);
    assert_false(v.acyclic);
    std::string names;
    for (const auto& c : v.cycle) names += c + "; ";
    assert_int_equal(v.cycle.size(), 4);
    assert_non_null(strstr(names.c_str(), "chip 0 E vc0"));
    assert_non_null(strstr(names.c_str(), "chip 1 S vc0"));
}

void test_a_route_off_the_mesh_is_refused(void**) {
    const Mesh m = Mesh::grid(3, 1, false);
    auto t = transport::l0_tables(m);
    t[0][1] = "W";
    try {
        transport::check_dependencies(m, t, false);
        fail_msg("a route off the mesh was accepted");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "chip 0 has no cable W"));
    }
}

// At scale routes are asked for one pair at a time and the dependency graph
// is a byte per channel: a 32x32 torus (a million routes) is checked without
// a table of them.
void test_a_large_torus_is_checked_on_demand(void**) {
    const Mesh m = Mesh::grid(32, 32, true);
    size_t asked = 0;
    const auto route = [&](uint32_t a, uint32_t b) {
        ++asked;
        return transport::dor_route(m, a, b);
    };
    assert_true(transport::check_dependencies(m, route, true).acyclic);
    assert_int_equal(asked, size_t(1024) * 1024);
    assert_false(transport::check_dependencies(m, route, false).acyclic);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_seeds_3x3_table),
        cmocka_unit_test(test_every_route_is_shortest_and_dimension_ordered),
        cmocka_unit_test(test_dimension_order_on_a_mesh_is_acyclic),
        cmocka_unit_test(test_a_torus_needs_its_datelines),
        cmocka_unit_test(test_bubble_flow_control_is_checked_ring_by_ring),
        cmocka_unit_test(test_a_bad_table_is_caught_with_its_cycle),
        cmocka_unit_test(test_a_route_off_the_mesh_is_refused),
        cmocka_unit_test(test_a_large_torus_is_checked_on_demand),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
