// The host-model machine at scale: 1,024 chips (a 32x32 mesh) built in one
// process with everything the host computes about them, the topology, its
// ring order and the 2D routes' deadlock check, in bounded memory and time.
// A chip maps its memory untouched (only the pages used are resident) and no
// structure is kept per pair of chips, so this is a test of growth: building
// twice as many chips should cost about twice as much, not four times.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"
#include "driver/topology.h"
#include "fabric_model/grid_cluster.h"
#include "fabric_model/traffic.h"
#include "model/host_cluster.h"
#include "model_helpers.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/fabric_transport.h"
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
using test::resident_mb;

namespace {

ClusterSpec mesh_spec(uint32_t w, uint32_t h) {
    const std::string path = "/tmp/weft-model-scale-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path) << "name: mesh" << w << "x" << h << "\nboard: qemu-virt\nmeshes:\n  - id: 0\n    shape: [" << w
                        << ", " << h << "]\n    topology: mesh\n";
    ClusterSpec spec = load_cluster(path, paths::load_built_board);
    std::remove(path.c_str());
    return spec;
}

void test_a_32x32_mesh_machine_is_built_in_bounded_memory_and_time(void**) {
    const double before = resident_mb();
    const auto t0 = std::chrono::steady_clock::now();
    const ClusterSpec spec = mesh_spec(32, 32);
    model::HostCluster machine(spec);
    const Topology topo(ClusterTopology::from_spec(spec));
    const std::vector<uint32_t> ring = topo.ring_order();
    const Mesh mesh = Mesh::grid(32, 32, false);
    const auto verdict = transport::check_dependencies(
        mesh, [&](uint32_t a, uint32_t b) { return transport::dor_route(mesh, a, b); }, false);
    machine.step_devices();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double grown = resident_mb() - before;
    fprintf(stderr, "1024 chips: %.2f s, %.1f MB resident more\n", seconds, grown);
    assert_int_equal(spec.num_chips, 1024);
    assert_int_equal(ring.size(), 1024);
    assert_true(topo.stretch(ring, false) == 1.0);  // the snake: every step one cable
    assert_int_equal(topo.distance(0, 1023), 62);   // corner to corner
    assert_true(verdict.acyclic);
    assert_true(grown < 200);
    assert_true(seconds < 10);
}

// A fabric of 1,024 chips (16 meshes of 8x8, as weft-fabric-model plans
// it) and the routing the collectives lower onto it: every pair of chips is
// one worker hop apart, but only the pairs an op asks for are kept.
void test_a_1024_chip_fabric_and_its_routing_stay_small(void**) {
    fabric_model::GridCluster grid;
    grid.meshes = 16;
    grid.width = grid.height = 8;
    const ClusterSpec spec = fabric_model::grid_cluster_spec(grid);
    const ClusterTopology topology = ClusterTopology::from_spec(spec);
    const auto t0 = std::chrono::steady_clock::now();
    const transport::FabricBuilder fabric = transport::multi_mesh_fabric(spec.board, topology);
    // The routing alone: kept for every pair (one hop each) it came to 24 MB.
    const double before = resident_mb();
    const transport::FabricRouting routing(fabric);
    const Hop far = routing.worker_hops(0, 1023).front();
    const double grown = resident_mb() - before;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fprintf(stderr, "1024-chip fabric and routing: %.2f s; the routing %.1f MB resident more\n", seconds, grown);
    assert_int_equal(spec.num_chips, 1024);
    assert_int_equal(far.to_chip, 1023);
    assert_true(routing.parallel(5, 5).empty());  // a chip is no hop from itself
    assert_true(grown < 4);
    assert_true(seconds < 5);
}

// Resident KB a modelled chip adds: the model of `meshes` meshes of 4x4,
// planned and its routers started, less that of 16 meshes, per chip more.
double kb_per_modelled_chip(uint32_t meshes) {
    const auto resident_of = [](uint32_t n) {
        fabric_model::ModelOptions o;
        o.grid = fabric_model::GridCluster{};
        o.grid->meshes = n;
        o.grid->width = o.grid->height = 4;
        const double before = resident_mb();
        fabric_model::Simulation sim(o);
        return std::make_pair(resident_mb() - before, sim.chips());
    };
    const auto [small_mb, small_chips] = resident_of(16);
    const auto [big_mb, big_chips] = resident_of(meshes);
    return (big_mb - small_mb) * 1024 / (big_chips - small_chips);
}

// A chip of the model backs only the pages its firmware and the host wrote:
// its routers share one copy of its tables (FabricSpec::table_per_chip), and
// a write of what memory nobody wrote already reads (zeros) backs none. Here
// 100 KB a chip before, 68 after; under traffic ~145 KB before, so the
// 262,144 chips of 1024 meshes of 16x16 needed ~37 GB.
void test_a_modelled_chip_backs_only_what_it_uses(void**) {
    const auto t0 = std::chrono::steady_clock::now();
    const double kb = kb_per_modelled_chip(128);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fprintf(stderr, "a modelled chip: %.0f KB resident (%.2f s)\n", kb, seconds);
#ifdef __SANITIZE_ADDRESS__
    const double bound = 110;  // make sanitize: the heap's red zones, 93 KB here
#else
    const double bound = 85;
#endif
    assert_true(kb < bound);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_32x32_mesh_machine_is_built_in_bounded_memory_and_time),
        cmocka_unit_test(test_a_1024_chip_fabric_and_its_routing_stay_small),
        cmocka_unit_test(test_a_modelled_chip_backs_only_what_it_uses),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
