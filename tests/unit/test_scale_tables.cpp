// The fabric's tables at scale (fabric_model/scale_tables.h): a grid of
// meshes made in memory, every chip's tables built from the control plane's
// routes and proved to be the builder's own, and the deadlock check that
// needs no walk of every pair of chips giving the all-pairs check's verdict,
// cycle for cycle. Then growth: 4,096 chips in bounded time and memory.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "driver/cluster_topology.h"
#include "fabric_model/scale_tables.h"
#include "model_helpers.h"
#include "small_board.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/fabric_dependencies.h"
#include "transport/fabric/routing2d.h"
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
using namespace weft::fabric_model;
using test::resident_mb;
using test::small_options;

namespace {

bool same_entry(const RouteEntry& mine, const abi::FabricRouteEntry& built) {
    return mine.hops == built.hops && mine.first == built.first && mine.route == built.route;
}

// Every chip's tables, entry for entry those the fabric's builder wrote.
void assert_tables_are_the_builders(const transport::FabricBuilder& fabric, const ClusterTopology& t,
                                    const BoardInfo& board) {
    const transport::ControlPlane control(board, t);
    ChipTable table;
    for (uint32_t chip = 0; chip < t.chips(); ++chip) {
        fill_chip_table(control, chip, table);
        const abi::FabricRouteTable& built = fabric.table(chip);
        assert_int_equal(table.to.size(), built.chips);
        for (uint32_t i = 0; i < table.to.size(); ++i)
            if (!same_entry(table.to[i], built.to[i])) fail_msg("chip %u's L0 entry for chip %u differs", chip, i);
        assert_int_equal(table.to_mesh.size(), built.meshes);
        for (uint32_t m = 0; m < table.to_mesh.size(); ++m)
            if (!same_entry(table.to_mesh[m], built.to_mesh[m]))
                fail_msg("chip %u's L1 entry for mesh %u differs", chip, m);
    }
}

// Mesh 0 of a 4x4 grid of 4x4 meshes leaves east from its column 3 and
// south from its row 3, two cables each, spread along the edge (rows and
// columns 1 and 3), on plane 0's ports facing out.
void test_a_grid_of_meshes_is_cabled_at_its_edges(void**) {
    const BoardInfo board = test::small_board();
    const ClusterTopology t = grid_of_meshes(16, 4, 4, board);
    assert_int_equal(t.chips(), 256);
    assert_int_equal(t.meshes().size(), 16);
    const std::vector<ExitNode>& out = t.exit_nodes(0);
    assert_int_equal(out.size(), 4);
    const uint32_t want_chip[4] = {7, 13, 15, 15}, want_peer[4] = {1, 4, 1, 4};
    const abi::FabricCompass want_way[4] = {abi::kFabricEast, abi::kFabricSouth, abi::kFabricEast, abi::kFabricSouth};
    for (size_t i = 0; i < out.size(); ++i) {
        assert_int_equal(out[i].chip, want_chip[i]);
        assert_int_equal(out[i].peer_mesh, want_peer[i]);
        assert_int_equal(board.ports.at(out[i].port).direction, want_way[i]);
    }
    assert_int_equal(t.exit_nodes(5).size(), 8);  // an inner mesh: two cables to each of four neighbours
    // Seven meshes: a grid three wide, its last row short.
    const ClusterTopology seven = grid_of_meshes(7, 2, 2, board, 1);
    assert_int_equal(seven.exit_nodes(6).size(), 1);  // only mesh 3 above it
    assert_int_equal(seven.exit_nodes(6)[0].peer_mesh, 3);
}

// Sixteen meshes of 4x4 fit the firmware's table: the tables take what
// abi::FabricRouteTable takes, and every chip's L1 entry for every other
// mesh leads, inside its own mesh, to an exit node whose working cable goes
// to the next mesh on the way.
void test_sixteen_4x4_meshes_are_built_and_checked(void**) {
    const BoardInfo board = test::small_board();
    const ClusterTopology t = grid_of_meshes(16, 4, 4, board);
    const TablesReport r = build_and_check_tables(t, board);
    assert_true(r.acyclic);
    assert_string_equal(r.cycle.c_str(), "");
    assert_int_equal(r.chips, 256);
    assert_int_equal(r.meshes, 16);
    assert_int_equal(r.mesh_kinds, 1);  // sixteen of one shape, every cable up: one L0 check
    assert_int_equal(r.entries, 256 * (16 + 15));
    assert_string_equal(r.beyond_abi.c_str(), "");
    assert_int_equal(r.table_bytes, 256 * sizeof(abi::FabricRouteTable));
    assert_true(r.peak_rss_mb > 0);

    const transport::ControlPlane control(board, t);
    ChipTable table;
    for (uint32_t chip = 0; chip < t.chips(); ++chip) {
        fill_chip_table(control, chip, table);
        const Mesh& own = t.mesh_of(chip);
        for (const Mesh& to : t.meshes()) {
            if (to.id == own.id) continue;
            const RouteEntry& e = table.to_mesh.at(to.id);
            assert_true(e.hops > 0);
            uint32_t at = chip - own.first_chip, dir = e.first;
            for (uint32_t h = 1; h < e.hops; ++h) {  // the steps inside its mesh
                const int next = transport::neighbor(own, at, abi::FabricCompass(dir));
                if (next < 0) fail_msg("chip %u's way to mesh %u leaves its mesh early", chip, to.id);
                at = uint32_t(next);
                dir = uint32_t(e.route >> (2 * (h - 1))) & 3;
            }
            const uint32_t exit = own.first_chip + at, next_mesh = control.l1().next_mesh(own.id, to.id);
            bool found = false;
            for (const ExitNode& x : t.exit_nodes(own.id))
                found |= x.chip == exit && x.up && x.peer_mesh == next_mesh && board.ports.at(x.port).direction == dir;
            if (!found) fail_msg("chip %u's L1 entry for mesh %u names no exit node toward it", chip, to.id);
        }
    }
}

// Four meshes of 3x3 and one of 4x4: the tables are those the builders
// write, and the check's verdict is the all-pairs check's.
void test_the_tables_are_the_builders(void**) {
    const BoardInfo board = test::small_board();
    const ClusterTopology four = grid_of_meshes(4, 3, 3, board);
    const transport::FabricBuilder fabric = transport::multi_mesh_fabric(board, four, small_options());
    assert_tables_are_the_builders(fabric, four, board);
    assert_true(transport::check_fabric_dependencies(fabric).acyclic);
    assert_true(build_and_check_tables(four, board).acyclic);
    const ClusterTopology one = grid_of_meshes(1, 4, 4, board);
    assert_tables_are_the_builders(transport::mesh_fabric(board, one, small_options()), one, board);
    const TablesReport r = build_and_check_tables(one, board);
    assert_true(r.acyclic);
    assert_int_equal(r.entries, 16 * 16);
}

// Nine meshes of 2x2, one cable between neighbours, and the cable inside
// mesh 4 from chip 16 to chip 17 down: the control plane routes mesh 4
// round it (a mesh of its own kind now), each mesh's routes are
// deadlock-free alone, yet packets crossing mesh 4 between meshes can wait
// on each other in a circle on VC 1. The builder's all-pairs check refuses
// the fabric naming a cycle; this check names the same one.
void test_a_cycle_is_named_as_the_all_pairs_check_names_it(void**) {
    const BoardInfo board = test::small_board();
    const ClusterTopology t = grid_of_meshes(9, 2, 2, board, 1);
    std::vector<LinkInfo> links = t.links();
    for (LinkInfo& l : links)
        if (l.chip_a == 16 && l.chip_b == 17) l.up = false;
    const ClusterTopology cut = t.with_links(links);
    const TablesReport r = build_and_check_tables(cut, board);
    assert_false(r.acyclic);
    assert_int_equal(r.mesh_kinds, 2);
    try {
        transport::multi_mesh_fabric(board, cut, small_options());
        fail_msg("the builder accepted tables with the cycle %s", r.cycle.c_str());
    } catch (const Error& e) {
        const std::string want = "the fabric's routes can deadlock: their channel dependency graph has the cycle ";
        assert_string_equal(e.what(), (want + r.cycle).c_str());
    }
}

// The check proves every route over the cluster's cables rather than trust
// the control plane: a cable inside a mesh that was never laid (so not
// "down", and routed over) is named.
void test_a_route_over_a_missing_cable_is_refused(void**) {
    const BoardInfo board = test::small_board();
    const ClusterTopology t = grid_of_meshes(2, 3, 3, board, 1);
    std::vector<LinkInfo> links;
    for (const LinkInfo& l : t.links())
        if (!(l.chip_a == 0 && l.chip_b == 1)) links.push_back(l);  // mesh 0's first cable was never laid
    try {
        build_and_check_tables(ClusterTopology::from_meshes(t.meshes(), links), board);
        fail_msg("tables over a cable the cluster lacks were accepted");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "takes a cable chip 0 does not have up"));
    }
}

// Growth: 64 meshes of 8x8 (4,096 chips, 520,192 entries) in well under the
// bounds, so the 262,144 chips of 1024 meshes of 16x16 take minutes, not
// hours, and memory in MB (nothing is kept per pair of chips).
void test_4096_chips_are_built_and_checked_in_bounded_time_and_memory(void**) {
    const BoardInfo board = test::small_board();
    const double before = resident_mb();
    const auto t0 = std::chrono::steady_clock::now();
    const TablesReport r = build_and_check_tables(grid_of_meshes(64, 8, 8, board), board);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double grown = resident_mb() - before;
    fprintf(stderr, "64 meshes of 8x8: %u chips, build %.2f s, check %.2f s, %.1f MB resident more\n", r.chips,
            r.seconds_build, r.seconds_check, grown);
    assert_int_equal(r.chips, 4096);
    assert_true(r.acyclic);
    assert_int_equal(r.mesh_kinds, 1);
    assert_string_equal(r.beyond_abi.c_str(), "");  // the firmware's L1 holds 1024 meshes
    assert_true(seconds < 5);
    assert_true(grown < 300);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_grid_of_meshes_is_cabled_at_its_edges),
        cmocka_unit_test(test_sixteen_4x4_meshes_are_built_and_checked),
        cmocka_unit_test(test_the_tables_are_the_builders),
        cmocka_unit_test(test_a_cycle_is_named_as_the_all_pairs_check_names_it),
        cmocka_unit_test(test_a_route_over_a_missing_cable_is_refused),
        cmocka_unit_test(test_4096_chips_are_built_and_checked_in_bounded_time_and_memory),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
