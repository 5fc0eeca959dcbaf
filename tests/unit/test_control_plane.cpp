// The fabric control plane's reroute decisions: for every single cable
// failure of a torus, of a two-plane mesh and of a one-plane mesh, what the
// routers do next, and that the tables it hands them avoid the cable and
// cannot deadlock; a cut mesh is named; a returned cable restores the routes.
#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/fabric_builder.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using transport::ControlPlane;
using transport::RerouteDecision;

namespace {

ClusterSpec spec_of(const std::string& yaml) {
    const std::string path = "/tmp/weft-cp-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << yaml;
    ClusterSpec spec = load_cluster(path, paths::load_built_board);
    std::remove(path.c_str());
    return spec;
}

ClusterSpec grid(const char* board, uint32_t w, uint32_t h, const char* topology, uint32_t planes) {
    return spec_of(std::string("name: g\nboard: ") + board + "\nmeshes:\n  - id: 0\n    shape: [" + std::to_string(w) +
                   ", " + std::to_string(h) + "]\n    topology: " + topology +
                   "\n    planes: " + std::to_string(planes) + "\n");
}

// Does `route` from `from` take the cable between chips a and b?
bool takes(const Mesh& m, uint32_t from, const std::string& route, uint32_t a, uint32_t b) {
    uint32_t at = from;
    for (char letter : route) {
        const int next = transport::neighbor(m, at, static_cast<abi::FabricCompass>(abi::fabric_compass_of(letter)));
        assert_true(next >= 0);
        if ((at == a && uint32_t(next) == b) || (at == b && uint32_t(next) == a)) return true;
        at = uint32_t(next);
    }
    return false;
}

// Every route of the mesh avoids the cable a-b, reaches its chip, and the set cannot deadlock.
void check_tables_avoid(const ControlPlane& cp, const Mesh& m, uint32_t a, uint32_t b) {
    for (uint32_t x = 0; x < m.chips(); ++x)
        for (uint32_t y = 0; y < m.chips(); ++y)
            if (takes(m, x, cp.l0_route(m, x, y), a, b))
                fail_msg("route %u->%u %s takes the dead cable %u-%u", x, y, cp.l0_route(m, x, y).c_str(), a, b);
    const auto verdict = transport::check_dependencies(
        m, [&](uint32_t x, uint32_t y) { return cp.l0_route(m, x, y); }, m.wraps());
    assert_true(verdict.acyclic);
}

void test_every_torus_cable_failure_gets_new_tables(void**) {
    const ClusterSpec spec = grid("qemu-virt", 4, 4, "torus", 1);
    const Mesh& m = spec.meshes[0];
    for (const LinkSpec& l : spec.links) {
        ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
        const uint32_t epoch = cp.epoch();
        const RerouteDecision d = cp.cable_down(l.a.chip, l.a.port);
        if (d.kind != RerouteDecision::kNewTables)
            fail_msg("cable %u.%u-%u.%u: decision %d (%s)", l.a.chip, l.a.port, l.b.chip, l.b.port, d.kind,
                     d.why.c_str());
        assert_true(cp.epoch() > epoch);
        assert_false(d.changed.empty());
        check_tables_avoid(cp, m, l.a.chip, l.b.chip);
        cp.cable_up(l.a.chip, l.a.port);
        for (uint32_t x = 0; x < m.chips(); ++x)
            for (uint32_t y = 0; y < m.chips(); ++y)
                assert_string_equal(cp.l0_route(m, x, y).c_str(), transport::dor_route(m, x, y).c_str());
    }
}

// Whether the cables of `spec` but links i and j still join every chip.
bool joined_without(const ClusterSpec& spec, size_t i, size_t j) {
    std::vector<bool> seen(spec.num_chips, false);
    std::vector<uint32_t> todo{0};
    seen[0] = true;
    while (!todo.empty()) {
        const uint32_t at = todo.back();
        todo.pop_back();
        for (size_t k = 0; k < spec.links.size(); ++k) {
            const LinkSpec& l = spec.links[k];
            if (k == i || k == j || (l.a.chip != at && l.b.chip != at)) continue;
            const uint32_t other = l.a.chip == at ? l.b.chip : l.a.chip;
            if (!seen[other]) seen[other] = true, todo.push_back(other);
        }
    }
    return std::find(seen.begin(), seen.end(), false) == seen.end();
}

// Every pair of cables down at once: tables that avoid both and cannot
// deadlock, or, where the two cut a chip off (a mesh's corner), the cut;
// never "every route could deadlock" (on a torus two dead cables of one
// ring leave mixed dimension orders that can wait in a circle: those
// tables are up*/down*'s).
void every_two_cables_down_get_tables(const ClusterSpec& spec) {
    const Mesh& m = spec.meshes[0];
    for (size_t i = 0; i < spec.links.size(); ++i)
        for (size_t j = i + 1; j < spec.links.size(); ++j) {
            const LinkSpec &a = spec.links[i], &b = spec.links[j];
            ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
            cp.cable_down(a.a.chip, a.a.port);
            const RerouteDecision d = cp.cable_down(b.a.chip, b.a.port);
            const bool joined = joined_without(spec, i, j);
            if (d.kind != (joined ? RerouteDecision::kNewTables : RerouteDecision::kCutOff))
                fail_msg("cables %u.%u and %u.%u (%s): decision %d (%s)", a.a.chip, a.a.port, b.a.chip, b.a.port,
                         joined ? "the rest join every chip" : "a chip cut off", d.kind, d.why.c_str());
            if (!joined) continue;
            check_tables_avoid(cp, m, a.a.chip, a.b.chip);
            check_tables_avoid(cp, m, b.a.chip, b.b.chip);
        }
}
void test_every_two_torus_cables_down_get_tables(void**) {
    every_two_cables_down_get_tables(grid("qemu-virt", 4, 4, "torus", 1));
}
void test_every_two_mesh_cables_down_get_tables_or_are_a_cut(void**) {
    every_two_cables_down_get_tables(grid("qemu-virt", 3, 3, "mesh", 1));
    every_two_cables_down_get_tables(grid("qemu-virt", 4, 3, "mesh", 1));
}

void test_a_two_plane_mesh_falls_back_to_the_other_plane(void**) {
    const ClusterSpec spec = grid("qemu-virt32", 3, 3, "mesh", 2);
    for (const LinkSpec& l : spec.links) {
        ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
        const RerouteDecision d = cp.cable_down(l.a.chip, l.a.port);
        assert_int_equal(d.kind, RerouteDecision::kFallback);
        const PortInfo& dead = spec.board.ports[l.a.port];
        const PortInfo& spare = spec.board.ports[d.fallback_port];
        assert_int_equal(spare.direction, dead.direction);  // the same way, on the other plane
        assert_int_not_equal(spare.plane, dead.plane);
        assert_int_equal(cp.epoch(), 1);  // the tables did not change
    }
}

// A fabric per plane without relays (the collectives striped over both
// planes): each plane's control plane routes its own fabric round its own
// dead cable with new tables, and another plane's cable changes no route.
void test_each_plane_of_a_mesh_without_relays_gets_new_tables(void**) {
    const ClusterSpec spec = grid("qemu-virt32", 3, 3, "mesh", 2);
    const Mesh& m = spec.meshes[0];
    size_t own = 0, other = 0;
    for (uint32_t plane = 0; plane < 2; ++plane)
        for (const LinkSpec& l : spec.links) {
            ControlPlane cp(spec.board, ClusterTopology::from_spec(spec), plane, false);
            const RerouteDecision d = cp.cable_down(l.a.chip, l.a.port);
            if (spec.board.ports[l.a.port].plane != plane) {
                assert_true(d.changed.empty());
                ++other;
                continue;
            }
            if (d.kind != RerouteDecision::kNewTables)
                fail_msg("plane %u, cable %u-%u: decision %d (%s)", plane, l.a.chip, l.b.chip, d.kind, d.why.c_str());
            assert_false(d.changed.empty());
            check_tables_avoid(cp, m, l.a.chip, l.b.chip);
            ++own;
        }
    assert_int_equal(own, spec.links.size());
    assert_int_equal(other, spec.links.size());
}

// The fabric the runner plans on plane 1 of a two-plane mesh with one of
// that plane's cables down routes round it by that plane's control plane
// (it was refused, and the op ran on plane 0 alone): no router on the dead
// cable, one at each end of every other plane-1 cable.
void test_each_planes_fabric_is_planned_round_its_own_dead_cable(void**) {
    const ClusterSpec spec = grid("qemu-virt32", 3, 3, "mesh", 2);
    const ClusterTopology topology = ClusterTopology::from_spec(spec);
    std::vector<LinkInfo> links = topology.links();
    const LinkInfo* dead = nullptr;
    size_t on_plane_1 = 0;
    for (LinkInfo& l : links) {
        if (spec.board.ports[l.port_a].plane != 1) continue;
        ++on_plane_1;
        if (!dead && l.chip_a == 4) l.up = false, dead = &l;  // the centre chip's first plane-1 cable
    }
    assert_non_null(dead);
    const transport::FabricBuilder f =
        transport::cluster_fabric(spec.board, topology.with_links(links), FabricSpec{}, "", 1);
    assert_int_equal(f.routers().size(), 2 * (on_plane_1 - 1));
    for (const transport::FabricRouterPlan& r : f.routers()) {
        assert_int_equal(spec.board.ports[r.port].plane, 1);
        assert_false((r.chip == dead->chip_a && r.port == dead->port_a) ||
                     (r.chip == dead->chip_b && r.port == dead->port_b));
    }
}

// Dimension order cannot avoid a mesh's cable for a chip on its row or
// column, and mixing the orders could deadlock: the routes go up*/down*.
void test_every_mesh_cable_failure_gets_new_tables(void**) {
    const ClusterSpec spec = grid("qemu-virt", 3, 3, "mesh", 1);
    const Mesh& m = spec.meshes[0];
    for (const LinkSpec& l : spec.links) {
        ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
        const RerouteDecision d = cp.cable_down(l.a.chip, l.a.port);
        if (d.kind != RerouteDecision::kNewTables)
            fail_msg("cable %u-%u: decision %d (%s)", l.a.chip, l.b.chip, d.kind, d.why.c_str());
        check_tables_avoid(cp, m, l.a.chip, l.b.chip);
    }
}

void test_a_cut_line_names_the_chips_cut_off(void**) {
    const ClusterSpec spec = grid("qemu-virt", 4, 1, "line", 1);
    ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
    const LinkSpec& middle = spec.links[1];  // chip 1 - chip 2
    const RerouteDecision d = cp.cable_down(middle.a.chip, middle.a.port);
    assert_int_equal(d.kind, RerouteDecision::kCutOff);
    assert_true((d.unreachable == std::vector<uint32_t>{0, 1, 2, 3}));  // each half cannot reach the other
    assert_string_equal(d.why.c_str(), "mesh 0 is cut: chips 0, 1 cannot reach chips 2, 3");
}

// Does `route` from `from` pass through (or end at) a chip of `chips`?
bool visits(const Mesh& m, uint32_t from, const std::string& route, const std::set<uint32_t>& chips) {
    uint32_t at = from;
    for (char letter : route) {
        at = uint32_t(transport::neighbor(m, at, static_cast<abi::FabricCompass>(abi::fabric_compass_of(letter))));
        if (chips.count(at)) return true;
    }
    return false;
}

// A failed row of a torus, or edge column of a mesh, taken out: the other
// chips reach one another without touching it, on tables that cannot
// deadlock; a mesh's middle column cuts it in two, and says so.
void test_a_removed_row_or_column_is_routed_around(void**) {
    for (const bool torus : {true, false}) {
        const ClusterSpec spec = torus ? grid("qemu-virt", 4, 4, "torus", 1) : grid("qemu-virt", 3, 3, "mesh", 1);
        const Mesh& m = spec.meshes[0];
        ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
        const RerouteDecision d = torus ? cp.remove_row(0, 1) : cp.remove_column(0, 0);
        if (d.kind != RerouteDecision::kNewTables) fail_msg("decision %d (%s)", d.kind, d.why.c_str());
        std::set<uint32_t> gone;
        for (uint32_t c = 0; c < m.chips(); ++c)
            if (cp.removed(c)) gone.insert(c);
        assert_int_equal(gone.size(), torus ? 4 : 3);
        for (uint32_t a = 0; a < m.chips(); ++a)
            for (uint32_t b = 0; b < m.chips(); ++b) {
                if (a == b || gone.count(a) || gone.count(b)) continue;
                const std::string r = cp.l0_route(m, a, b);
                assert_false(r.empty() || r == transport::kNoRoute);
                if (visits(m, a, r, gone)) fail_msg("%u->%u %s crosses the removed chips", a, b, r.c_str());
            }
        const auto verdict = transport::check_dependencies(
            m, [&](uint32_t x, uint32_t y) { return cp.l0_route(m, x, y); }, m.wraps());
        assert_true(verdict.acyclic);
    }
    const ClusterSpec spec = grid("qemu-virt", 3, 3, "mesh", 1);
    ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
    const RerouteDecision middle = cp.remove_column(0, 1);  // a mesh (no wrap) falls in two
    assert_int_equal(middle.kind, RerouteDecision::kCutOff);
    assert_string_equal(middle.why.c_str(), "mesh 0 is cut: chips 0, 3, 6 cannot reach chips 2, 5, 8");
    try {
        cp.remove_row(0, 3);
        fail_msg("a row past the mesh was removed");
    } catch (const std::exception& e) {
        assert_string_equal(e.what(), "mesh 0 has no row 3 (rows 0-2)");
    }
}

// Between meshes: 4mesh3x3 loses mesh 0's cable to mesh 1 (chip 5 E): mesh 0
// reaches mesh 1 the long way, through meshes 2 and 3, and leaves by the
// exit toward mesh 2 nearest each chip; then mesh 1's cable to mesh 3 too:
// mesh 1 is cut off, its chips named.
void test_an_inter_mesh_cable_failure_gets_new_exits(void**) {
    const ClusterSpec spec = load_cluster(paths::cluster_file("4mesh3x3"), paths::load_built_board);
    ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
    const auto east = static_cast<uint32_t>(spec.board.port_for(abi::kFabricEast, 0));
    const auto south = static_cast<uint32_t>(spec.board.port_for(abi::kFabricSouth, 0));
    assert_int_equal(cp.l1().exit_toward(0, 1), 5);
    const uint32_t epoch = cp.epoch();
    RerouteDecision d = cp.cable_down(5, east);
    assert_int_equal(d.kind, RerouteDecision::kNewTables);
    assert_true(cp.epoch() > epoch);
    const std::vector<uint32_t> path = cp.l1().mesh_path(0, 1);
    assert_int_equal(path.size(), 4);  // 0 -> 2 -> 3 -> 1
    assert_int_equal(path[1], 2);
    assert_int_equal(path[2], 3);
    assert_int_equal(cp.l1().exit_toward(0, 1), 6);  // chip 6 (S), two hops from chip 0; chip 8 is four
    assert_true(cp.l1().check().acyclic);
    assert_string_equal(cp.exit_route(0, 1).c_str(), "SSS");  // to chip 6, then its S cable
    d = cp.cable_down(17, south);
    assert_int_equal(d.kind, RerouteDecision::kCutOff);
    assert_int_equal(d.unreachable.size(), 9);
    assert_int_equal(d.unreachable.front(), 9);  // mesh 1: chips 9-17
    assert_true(d.why.find("mesh 1 is cut off") != std::string::npos);
}

// A removed column that holds exit nodes takes their cables between meshes
// with it: 4mesh3x3 without mesh 0's column 2 (chips 2, 5, 8) has lost the
// cable to mesh 1 (chip 5) and one of two to mesh 2 (chip 8), so every chip
// of mesh 0 leaves by chip 6, toward mesh 1 the long way; no chip routes
// toward a removed one.
void test_a_removed_column_of_exit_nodes_gets_new_exits(void**) {
    const ClusterSpec spec = load_cluster(paths::cluster_file("4mesh3x3"), paths::load_built_board);
    ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
    const RerouteDecision d = cp.remove_column(0, 2);
    assert_int_equal(d.kind, RerouteDecision::kNewTables);
    assert_true(d.why.find("new L1 exits") != std::string::npos);
    for (uint32_t chip : {0u, 1u, 3u, 4u, 6u, 7u})
        for (uint32_t mesh : {1u, 2u, 3u}) assert_int_equal(cp.l1().exit_toward(chip, mesh), 6);
    assert_int_equal(cp.l1().mesh_path(0, 1).size(), 4);  // 0 -> 2 -> 3 -> 1
    assert_true(cp.l1().check().acyclic);
    assert_string_equal(cp.exit_route(0, 1).c_str(), "SSS");
    assert_string_equal(cp.exit_route(2, 1).c_str(), transport::kNoRoute);  // a removed chip has none
}

void test_an_unknown_cable_is_refused_by_name(void**) {
    const ClusterSpec spec = grid("qemu-virt", 4, 1, "line", 1);
    ControlPlane cp(spec.board, ClusterTopology::from_spec(spec));
    try {
        cp.cable_down(0, 3);  // chip 0's west port: the line's end
        fail_msg("a cable that does not exist went down");
    } catch (const std::exception& e) {
        assert_string_equal(e.what(), "chip 0 port 3 has no cable");
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_torus_cable_failure_gets_new_tables),
        cmocka_unit_test(test_every_two_torus_cables_down_get_tables),
        cmocka_unit_test(test_every_two_mesh_cables_down_get_tables_or_are_a_cut),
        cmocka_unit_test(test_a_two_plane_mesh_falls_back_to_the_other_plane),
        cmocka_unit_test(test_each_plane_of_a_mesh_without_relays_gets_new_tables),
        cmocka_unit_test(test_every_mesh_cable_failure_gets_new_tables),
        cmocka_unit_test(test_each_planes_fabric_is_planned_round_its_own_dead_cable),
        cmocka_unit_test(test_a_cut_line_names_the_chips_cut_off),
        cmocka_unit_test(test_a_removed_row_or_column_is_routed_around),
        cmocka_unit_test(test_an_inter_mesh_cable_failure_gets_new_exits),
        cmocka_unit_test(test_a_removed_column_of_exit_nodes_gets_new_exits),
        cmocka_unit_test(test_an_unknown_cable_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
