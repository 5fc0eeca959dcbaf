// L1 (inter-mesh) routing: the TT-Fabric spec's four-mesh example table,
// the mesh graph's deadlock check, and routes around a dead cable.
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"
#include "small_board.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/l1_routing.h"
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
using transport::MeshRouting;

namespace {

ClusterTopology four_meshes() {
    return ClusterTopology::from_spec(load_cluster(paths::cluster_file("4mesh3x3"), paths::load_built_board));
}

// `meshes` lines of two chips, each mesh's chip 1 cabled east to the next's chip 0, the last to the first.
ClusterTopology ring_of_meshes(uint32_t meshes) {
    const std::string path = "/tmp/weft-l1-ring-" + std::to_string(getpid()) + ".yaml";
    std::ofstream f(path);
    f << "name: ring_of_meshes\nboard: qemu-virt\nmeshes:\n";
    for (uint32_t m = 0; m < meshes; ++m) f << "  - id: " << m << "\n    shape: [2, 1]\n    topology: line\n";
    f << "links:\n";
    for (uint32_t m = 0; m < meshes; ++m) f << "  - [" << 2 * m + 1 << ".E, " << 2 * ((m + 1) % meshes) << ".W]\n";
    f.close();
    const ClusterSpec spec = load_cluster(path, paths::load_built_board);
    std::remove(path.c_str());
    return ClusterTopology::from_spec(spec);
}

// The spec's L1 table (§2.2.1.2.1): [source mesh][node][destination mesh], -1 for its own.
constexpr int kSpec[4][9][4] = {
    {{-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5},
     {-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5},
     {-1, 5, 6, 5},
     {-1, 5, 6, 5},
     {-1, 5, 8, 5}},
    {{3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8},
     {3, -1, 3, 8}},
    {{0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8},
     {0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8},
     {0, 0, -1, 8},
     {0, 0, -1, 8},
     {2, 2, -1, 8}},
    {{2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1},
     {2, 2, 2, -1}},
};

void test_the_spec_four_mesh_l1_table(void**) {
    const MeshRouting routing(four_meshes());
    for (uint32_t src = 0; src < 4; ++src)
        for (uint32_t node = 0; node < 9; ++node)
            for (uint32_t dst = 0; dst < 4; ++dst) {
                if (src == dst) continue;
                const int got = int(routing.exit_toward(9 * src + node, dst) - 9 * src);
                // The one cell weft departs from: mesh 3 has its own cable to
                // mesh 2 (chip 6 west), where the spec's table sends it through
                // mesh 1 (chip 2) and on through mesh 0, three crossings for one.
                const int want = src == 3 && dst == 2 ? 6 : kSpec[src][node][dst];
                if (got != want) fail_msg("mesh %u node %u -> mesh %u: exit %d, want %d", src, node, dst, got, want);
            }
}

void test_meshes_without_a_cable_cross_another(void**) {
    const MeshRouting routing(four_meshes());
    assert_true((routing.mesh_path(0, 3) == std::vector<uint32_t>{0, 1, 3}));  // the lower next mesh on a tie
    assert_true((routing.mesh_path(1, 2) == std::vector<uint32_t>{1, 0, 2}));  // up to mesh 0, then down
    assert_true((routing.mesh_path(3, 0) == std::vector<uint32_t>{3, 1, 0}));
    assert_true(routing.check().acyclic);
}

void test_a_dead_cable_is_routed_around(void**) {
    ClusterTopology t = four_meshes();
    std::vector<LinkInfo> links = t.links();
    for (LinkInfo& l : links)
        if (l.chip_a == 5 && l.chip_b == 12) l.up = false;  // mesh 0 -> mesh 1
    const MeshRouting routing(t.with_links(links));
    assert_true((routing.mesh_path(0, 1) == std::vector<uint32_t>{0, 2, 3, 1}));
    assert_int_equal(routing.exit_toward(0, 1), 6);  // toward mesh 2 now, nearest of 6 and 8
    assert_true(routing.check().acyclic);
}

void test_a_mesh_cut_off_is_named(void**) {
    ClusterTopology t = four_meshes();
    std::vector<LinkInfo> links = t.links();
    for (LinkInfo& l : links)
        if (l.chip_a == 17 || l.chip_a == 26) l.up = false;  // both cables into mesh 3
    const MeshRouting routing(t.with_links(links));
    try {
        routing.exit_toward(0, 3);
        fail_msg("mesh 3 was reached with no cable to it");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "no route from mesh 0 to mesh 3"));
    }
}

// On a ring of six meshes, the shortest way clockwise makes every crossing
// wait on the next: the check names the cycle. weft's up*/down* routes on the
// same ring do not.
void test_a_ring_of_meshes_cannot_deadlock(void**) {
    constexpr uint32_t n = 6;
    const auto clockwise = [](uint32_t a, uint32_t b) {
        std::vector<uint32_t> p{a};
        while (p.back() != b) p.push_back((p.back() + 1) % n);
        return p;
    };
    const transport::DependencyVerdict bad = transport::check_mesh_dependencies(n, clockwise);
    assert_false(bad.acyclic);
    assert_int_equal(bad.cycle.size(), n);
    assert_string_equal(bad.cycle[0].c_str(), "mesh 0 -> mesh 1");
    const MeshRouting routing(ring_of_meshes(n));
    assert_true(routing.check().acyclic);
    assert_int_equal(routing.mesh_path(2, 5).size(), 4);  // 2 -> 3 -> 4 -> 5 is as short as 2 -> 1 -> 0 -> 5
}

}  // namespace

// Three 2x2 meshes in a triangle (chips 0-3, 4-7, 8-11): mesh 0's chip 1 E
// to mesh 1's chip 0 W, mesh 1's chip 3 S to mesh 2's chip 0 N, mesh 2's chip
// 2 W to mesh 0's chip 3 E. `clockwise` sends every packet for another mesh
// on round the triangle the same way (mesh 1 -> mesh 0 through mesh 2): the
// classic cyclic routing, which a fabric must refuse.
transport::FabricBuilder triangle(const BoardInfo& board, bool clockwise) {
    std::vector<Mesh> meshes;
    for (uint32_t i = 0; i < 3; ++i) {
        Mesh m = Mesh::grid(2, 2, false);
        m.id = i;
        m.first_chip = 4 * i;
        meshes.push_back(m);
    }
    std::vector<transport::Hop> cables;
    for (uint32_t i = 0; i < 3; ++i) {  // in each mesh: 0-1 E, 2-3 E, 0-2 S, 1-3 S
        const uint32_t c = 4 * i;
        cables.push_back({c, abi::kFabricEast, c + 1, abi::kFabricWest});
        cables.push_back({c + 2, abi::kFabricEast, c + 3, abi::kFabricWest});
        cables.push_back({c, abi::kFabricSouth, c + 2, abi::kFabricNorth});
        cables.push_back({c + 1, abi::kFabricSouth, c + 3, abi::kFabricNorth});
    }
    cables.push_back({1, abi::kFabricEast, 4, abi::kFabricWest});
    cables.push_back({7, abi::kFabricSouth, 8, abi::kFabricNorth});
    cables.push_back({10, abi::kFabricWest, 3, abi::kFabricEast});
    // Each mesh's exit node and its letter toward the next mesh clockwise, and back.
    const uint32_t cw_exit[3] = {1, 3, 2}, ccw_exit[3] = {3, 0, 0};
    const char cw_letter[3] = {'E', 'S', 'W'}, ccw_letter[3] = {'E', 'W', 'N'};
    const Mesh grid = Mesh::grid(2, 2, false);
    const transport::RouteOf routes = [&](uint32_t a, uint32_t b) { return transport::dor_route(grid, a % 4, b % 4); };
    const transport::ExitOf exits = [=](uint32_t chip, uint32_t to_mesh) {
        const uint32_t own = chip / 4;
        const bool cw = clockwise || to_mesh == (own + 1) % 3;
        const uint32_t exit = cw ? cw_exit[own] : ccw_exit[own];
        return transport::dor_route(grid, chip % 4, exit) + (cw ? cw_letter[own] : ccw_letter[own]);
    };
    return transport::FabricBuilder(board, meshes, cables, FabricSpec{}, routes, exits);
}

// The deadlock check covers the meshes together: direct routes between the
// triangle's meshes are accepted; routes that all go round it one way close
// a cycle through the three exit nodes, refused with the cycle named.
void test_a_cyclic_routing_between_meshes_is_refused(void**) {
    const BoardInfo board = test::small_board();
    const transport::FabricBuilder direct = triangle(board, false);
    assert_int_equal(direct.routers().size(), 3 * 8 + 6);
    try {
        triangle(board, true);
        fail_msg("a routing round the triangle of meshes was accepted");
    } catch (const Error& e) {
        const std::string what = e.what();
        assert_true(what.find("can deadlock") != std::string::npos);
        // The cycle takes all three inter-mesh cables, past the first one on the inter-mesh VC.
        for (const char* cable : {"chip 1 E vc", "chip 7 S vc", "chip 10 W vc"})
            if (what.find(cable) == std::string::npos) fail_msg("the cycle misses %s: %s", cable, what.c_str());
    }
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_spec_four_mesh_l1_table),
        cmocka_unit_test(test_meshes_without_a_cable_cross_another),
        cmocka_unit_test(test_a_dead_cable_is_routed_around),
        cmocka_unit_test(test_a_mesh_cut_off_is_named),
        cmocka_unit_test(test_a_ring_of_meshes_cannot_deadlock),
        cmocka_unit_test(test_a_cyclic_routing_between_meshes_is_refused),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
