// L1 (inter-mesh) routing: the TT-Fabric spec's four-mesh example table,
// the mesh graph's deadlock check, and routes around a dead cable.
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"
#include "transport/fabric/l1_routing.h"

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

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_spec_four_mesh_l1_table),
        cmocka_unit_test(test_meshes_without_a_cable_cross_another),
        cmocka_unit_test(test_a_dead_cable_is_routed_around),
        cmocka_unit_test(test_a_mesh_cut_off_is_named),
        cmocka_unit_test(test_a_ring_of_meshes_cannot_deadlock),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
