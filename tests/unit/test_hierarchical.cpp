// The hierarchical all-reduce (seed 003; host/ccl/hierarchical.cpp) played on
// symbolic values: on systems of every mesh shape from 1x1 to 5x5 and every
// topology of systems, every chip ends with every chip's input summed once,
// in one order; the root sits at each mesh's center (or where the tuning
// puts it), which sets the rounds inside a system; and the cluster file's
// systems: section refuses what it cannot be, at its line.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ccl/algorithm_table.h"
#include "ccl/collective.h"
#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/topology.h"
#include "lowered_op_model.h"
#include "plan_player.h"
#include "transport/cable_routing.h"
#include "small_board.h"

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

// `count` systems of w x h chips as a cluster file: systems in a W x H grid,
// each neighbour pair joined east-west (row 0's edge chips) or north-south
// (column 0's), wraps too where the topology has them. `extra` goes last.
std::string systems_yaml(uint32_t w, uint32_t h, const std::string& topology, uint32_t sw, uint32_t sh,
                         const std::string& extra = "") {
    const uint32_t count = sw * sh;
    std::string y = "name: systems\nboard: qemu-virt\nmeshes:\n";
    for (uint32_t s = 0; s < count; ++s)
        y += "  - id: " + std::to_string(s) + "\n    shape: [" + std::to_string(w) + ", " + std::to_string(h) +
             "]\n    topology: mesh\n";
    auto chip = [&](uint32_t s, uint32_t x, uint32_t yy) { return s * w * h + x + yy * w; };
    y += "links:\n";
    SystemsSpec spec{topology, sw, sh, 0};
    for (const auto& [a, b] : system_neighbours(spec)) {
        const bool row = a / sw == b / sw;  // same row of systems: east-west
        const uint32_t from = row ? (b == a + 1 ? a : b) : (b == a + sw ? a : b), to = from == a ? b : a;
        if (row)
            y += "  - [" + std::to_string(chip(from, w - 1, 0)) + ".E, " + std::to_string(chip(to, 0, 0)) + ".W]\n";
        else
            y += "  - [" + std::to_string(chip(from, 0, h - 1)) + ".S, " + std::to_string(chip(to, 0, 0)) + ".N]\n";
    }
    y += "systems:\n  topology: " + topology + "\n";
    if (topology != "ring_1d") y += "  w: " + std::to_string(sw) + "\n  h: " + std::to_string(sh) + "\n";
    return y + extra;
}

ClusterSpec parse(const std::string& yaml) {
    return parse_cluster(yaml, "systems.yaml", std::map<std::string, BoardInfo>{{"qemu-virt", test::small_board()}});
}

Plan plan_on(const ClusterSpec& spec, uint32_t elements, int64_t root = -1) {
    const Topology t(ClusterTopology::from_spec(spec));
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = elements * 4;
    const OpLayout l = layout_op(r, spec.num_chips, Pages::run(0x81000000, 64 << 20));
    const PlanContext ctx{r, l, t, t.ring_order(), t.line_order(), CtringTuning{}, root};
    return build_plan(ctx, "hierarchical");
}

// Every chip's every element: the same sum of every chip's input, each once.
void sums_once(const ClusterSpec& spec, const char* what) {
    const uint32_t n = spec.num_chips;
    OpRequest r;
    r.op = Collective::kAllReduce;
    r.bytes = 3 * 4;  // fewer elements than some rings have members: empty parts
    const OpLayout l = layout_op(r, n, Pages::run(0x81000000, 64 << 20));
    const Plan plan = plan_on(spec, 3);
    const std::vector<std::vector<std::string>> played = play_expressions(plan, l);
    for (uint64_t e = 0; e < l.elements; ++e) {
        std::vector<std::string> got = played[e];
        for (std::string& g : got) g = commuted(g);
        for (uint32_t c = 0; c < n; ++c) {
            if (got[c] != got[0]) fail_msg("%s: chip %u ends with %s, chip 0 %s", what, c, got[c].c_str(), got[0].c_str());
            for (uint32_t k = 0; k < n; ++k)
                if (terms_of(got[c], k) != 1)
                    fail_msg("%s: chip %u's %s has chip %u's input %zu times", what, c, got[c].c_str(), k,
                             terms_of(got[c], k));
        }
    }
}

uint32_t last_round(const Plan& p) {
    uint32_t last = 0;
    for (const Transfer& t : p.transfers) last = std::max(last, t.round);
    return last;
}

void test_every_mesh_shape_sums_every_chip_once(void**) {
    for (uint32_t w = 1; w <= 5; ++w)
        for (uint32_t h = 1; h <= 5; ++h) {
            const std::string what = "two " + std::to_string(w) + "x" + std::to_string(h) + " systems as a ring";
            sums_once(parse(systems_yaml(w, h, "ring_1d", 2, 1)), what.c_str());
        }
}

void test_every_topology_of_systems_sums_every_chip_once(void**) {
    struct Case {
        const char* topology;
        uint32_t sw, sh;
    };
    for (const Case c : {Case{"ring_1d", 3, 1}, Case{"ring_1d", 5, 1}, Case{"torus_2d", 2, 2}, Case{"torus_2d", 3, 2},
                         Case{"torus_2d", 3, 3}, Case{"mesh_2d_no_wrap", 2, 2}, Case{"mesh_2d_no_wrap", 3, 2},
                         Case{"mesh_2d_no_wrap", 1, 4}})
        for (const auto& [w, h] : {std::pair{1u, 1u}, std::pair{2u, 3u}, std::pair{3u, 3u}}) {
            const std::string what = std::string(c.topology) + " of " + std::to_string(c.sw) + "x" +
                                     std::to_string(c.sh) + " systems of " + std::to_string(w) + "x" +
                                     std::to_string(h);
            sums_once(parse(systems_yaml(w, h, c.topology, c.sw, c.sh)), what.c_str());
        }
}

// The record's claim: 4 + 4 rounds inside a 4x4 system with the center root
// (chip 10), 6 + 6 with a corner's; the roots alone talk between systems.
void test_the_center_root_halves_the_walk_in_a_system(void**) {
    const ClusterSpec one = parse(systems_yaml(4, 4, "ring_1d", 1, 1));
    assert_int_equal(last_round(plan_on(one, 64)), 4 + 4);
    assert_int_equal(last_round(plan_on(one, 64, 0)), 6 + 6);
    assert_int_equal(last_round(plan_on(one, 64, 15)), 6 + 6);
    const ClusterSpec two = parse(systems_yaml(4, 4, "ring_1d", 2, 1));
    for (const int64_t root : {int64_t(-1), int64_t(5)})
        for (const Transfer& t : plan_on(two, 64, root).transfers)
            if (t.src_chip / 16 != t.dst_chip / 16) {
                const uint32_t at = root < 0 ? 10 : uint32_t(root);
                if (t.src_chip % 16 != at || t.dst_chip % 16 != at)
                    fail_msg("chips %u and %u exchange between systems; the roots are chip %u of each", t.src_chip,
                             t.dst_chip, at);
            }
    try {
        plan_on(two, 64, 16);
        fail_msg("a root beyond the system was planned");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "WEFT_HIERARCHICAL_ROOT 16 is not a chip of a 4x4 system (0-15)"));
    }
}

void test_one_chip_systems_go_straight_to_the_exchange(void**) {
    const ClusterSpec six = parse(systems_yaml(1, 1, "mesh_2d_no_wrap", 3, 2));
    for (const Transfer& t : plan_on(six, 64).transfers)
        if (t.round > 0) assert_true(t.src_chip != t.dst_chip);  // nothing but the exchange
    sums_once(six, "six one-chip systems as a 3x2 mesh");
}

// Lowered onto the cables with four worker cores a chip (the root column's
// chips use three ports both ways: folded onto one sender and one
// receiver), the chips' model finishes and no two workers race.
void test_the_lowered_phases_finish_without_a_race(void**) {
    for (const std::string& yaml : {systems_yaml(4, 4, "ring_1d", 2, 1), systems_yaml(2, 2, "torus_2d", 2, 2),
                                    systems_yaml(1, 1, "mesh_2d_no_wrap", 3, 2), systems_yaml(3, 2, "ring_1d", 3, 1)}) {
        const ClusterSpec spec = parse(yaml);
        const Topology t(ClusterTopology::from_spec(spec));
        OpRequest r;
        r.op = Collective::kAllReduce;
        r.bytes = 40000;
        const OpLayout l = layout_op(r, spec.num_chips, Pages::run(0x81000000, 64 << 20));
        LoweringOptions o;
        o.piece_bytes = 4096;
        o.message_bytes = 1024;
        o.scratch = l.scratch;
        const std::string race =
            model::run_model(lower(plan_on(spec, 10000), transport::CableRouting(t), {4, 5, 6, 7}, o));
        if (!race.empty()) fail_msg("%u chips: %s", spec.num_chips, race.c_str());
    }
}

void refuses(const std::string& yaml, const char* says) {
    try {
        parse(yaml);
        fail_msg("accepted a cluster file that should say: %s", says);
    } catch (const Error& e) {
        if (!strstr(e.what(), says)) fail_msg("said '%s', not '%s'", e.what(), says);
        if (strncmp(e.what(), "systems.yaml:", 13) != 0 || !isdigit(e.what()[13]))
            fail_msg("'%s' does not start with the file and line", e.what());
    }
}

void test_a_wrong_systems_section_is_refused_at_its_line(void**) {
    std::string y = systems_yaml(2, 2, "torus_2d", 2, 2);
    refuses(y.substr(0, y.find("systems:")) + "systems:\n  topology: hypercube\n",
            "unknown systems topology 'hypercube' (known: ring_1d, torus_2d, mesh_2d_no_wrap)");
    refuses(y.substr(0, y.find("systems:")) + "systems:\n  topology: torus_2d\n  w: 3\n  h: 1\n",
            "a 3x1 grid holds 3 systems, but the file has 4 meshes");
    const std::string six = systems_yaml(1, 1, "mesh_2d_no_wrap", 3, 2);
    refuses(six.substr(0, six.find("systems:")) + "systems:\n  topology: torus_2d\n",
            "6 systems are not a square grid: give w and h");
    refuses(six.substr(0, six.find("systems:")) + "systems:\n  topology: ring_1d\n  w: 6\n",
            "a ring_1d of systems is one row: it takes no w or h");
    std::string ring = systems_yaml(2, 2, "ring_1d", 3, 1);
    ring.erase(ring.find("  - [5.E, 8.W]\n"), 15);  // the cable from system 1 to system 2
    refuses(ring, "systems 1 and 2 are neighbours in a ring_1d but no cable joins mesh 1 to mesh 2");
    std::string mixed = systems_yaml(2, 2, "ring_1d", 2, 1);
    mixed.replace(mixed.find("shape: [2, 2]", mixed.find("id: 1")), 13, "shape: [2, 1]");
    refuses(mixed, "every system must have one shape: mesh 1 is 2x1, mesh 0 2x2");
}

void test_hierarchical_is_offered_only_on_a_cluster_of_systems(void**) {
    const ClusterSpec systems = parse(systems_yaml(2, 2, "ring_1d", 2, 1));
    const std::vector<std::string> on = algorithms_on(Collective::kAllReduce, ClusterTopology::from_spec(systems));
    assert_true(std::find(on.begin(), on.end(), "hierarchical") != on.end());
    std::string plain = systems_yaml(2, 2, "ring_1d", 2, 1);
    plain = plain.substr(0, plain.find("systems:"));
    const std::vector<std::string> off = algorithms_on(Collective::kAllReduce, ClusterTopology::from_spec(parse(plain)));
    assert_true(std::find(off.begin(), off.end(), "hierarchical") == off.end());
    try {
        plan_on(parse(plain), 64);
        fail_msg("hierarchical was planned without systems");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "needs a systems: section"));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_mesh_shape_sums_every_chip_once),
        cmocka_unit_test(test_every_topology_of_systems_sums_every_chip_once),
        cmocka_unit_test(test_the_center_root_halves_the_walk_in_a_system),
        cmocka_unit_test(test_one_chip_systems_go_straight_to_the_exchange),
        cmocka_unit_test(test_the_lowered_phases_finish_without_a_race),
        cmocka_unit_test(test_a_wrong_systems_section_is_refused_at_its_line),
        cmocka_unit_test(test_hierarchical_is_offered_only_on_a_cluster_of_systems),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
