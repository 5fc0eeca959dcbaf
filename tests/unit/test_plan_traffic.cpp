// The collectives' own plans in the fabric model (host/fabric_model/
// plan_traffic.h): every algorithm weft run can run on a cluster runs in
// the model from the same lowering, every op's outputs (reductions
// included) equal the host reference's, and what the model cannot run is
// refused by name.
#include <string>

#include "ccl/algorithm_table.h"
#include "ccl/lowering.h"
#include "common/error.h"
#include "driver/topology.h"
#include "fabric_model/plan_traffic.h"

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

namespace {

ModelOptions cluster(const char* name) {
    ModelOptions o;
    o.cluster = name;
    return o;
}

// Every algorithm of every op that runs on `name` from a plan, each on a fresh model.
void every_plan_runs_on(const char* name) {
    uint32_t ran = 0, short_of_workers = 0;
    for (ccl::Collective op : ccl::all_collectives()) {
        Simulation probe(cluster(name));
        for (const std::string& algo : ccl::algorithms_on(op, probe.model().cluster().topology())) {
            Simulation sim(cluster(name));
            OpTime t;
            try {
                t = planned_collective(sim, ccl::collective_name(op), algo, 96 * 1024);
            } catch (const ccl::WorkerShortage&) {
                ++short_of_workers;  // a sender and a receiver per way out: weft run refuses it too
                continue;
            }
            if (t.ns == 0 || t.events == 0) fail_msg("%s/%s on %s took no time", t.op.c_str(), algo.c_str(), name);
            assert_string_equal(t.algo.c_str(), algo.c_str());
            assert_int_equal(t.chips, sim.chips());
            // Reductions too: the workers' math ran and every element is the host reference's.
            if (t.checked.empty()) fail_msg("%s/%s on %s was not checked", t.op.c_str(), algo.c_str(), name);
            ++ran;
        }
    }
    assert_true(ran >= 15);
    assert_true(short_of_workers <= 5);
}

void test_every_plan_runs_on_a_ring(void**) { every_plan_runs_on("ring8"); }
void test_every_plan_runs_on_a_torus(void**) { every_plan_runs_on("torus4x4"); }

void test_a_larger_all_gather_takes_longer_in_proportion(void**) {
    Simulation small(cluster("ring8")), large(cluster("ring8"));
    const OpTime a = planned_collective(small, "all_gather", "ring", 1 << 20);
    const OpTime b = planned_collective(large, "all_gather", "ring", 4 << 20);
    assert_true(b.ns > 3 * a.ns && b.ns < 5 * a.ns);  // the cables, not start-up, set its time
}

void test_an_unknown_algorithm_is_refused_with_the_list(void**) {
    Simulation sim(cluster("ring8"));
    try {
        planned_collective(sim, "all_gather", "nope", 4096);
        fail_msg("an unknown algorithm ran");
    } catch (const Error& e) {
        const std::string what = e.what();
        assert_true(what.find("'nope'") != std::string::npos);
        assert_true(what.find("its algorithms: ring, ring_bidir") != std::string::npos);
    }
    // Named as the help lists it, op/algorithm, it runs.
    assert_true(planned_collective(sim, "all_gather", "all_gather/ring_bidir", 4096).ns > 0);
}

// The fabric's own algorithms: all_gather's and broadcast's multicast run on
// a 1D fabric (ring8) as the fabric_multicast kernel does, checked; on a 2D
// fabric they are refused by name, as weft run refuses them.
void test_multicast_runs_on_a_1d_fabric(void**) {
    for (const char* op : {"all_gather", "broadcast"}) {
        Simulation sim(cluster("ring8"));
        const OpTime t = planned_collective(sim, op, "multicast", 96 * 1024 + 8);
        if (t.ns == 0) fail_msg("%s/multicast took no time", op);
        if (t.checked.empty()) fail_msg("%s/multicast was not checked", op);
    }
    Simulation torus(cluster("torus4x4"));
    try {
        planned_collective(torus, "all_gather", "multicast", 4096);
        fail_msg("multicast ran on a 2D fabric");
    } catch (const Error& e) {
        assert_true(std::string(e.what()).find("1D fabric") != std::string::npos);
    }
}

// A root that trades with every other chip of 4mesh3x3 has 35 peers over
// the fabric, a stream each: its four workers serve nine or more apiece,
// which eight channels a worker could not hold. Every such algorithm runs,
// checked against the host reference.
void test_a_root_reaches_35_peers_on_4mesh3x3(void**) {
    for (const char* op_algo : {"gather/direct", "scatter/direct", "broadcast/direct", "reduce/direct",
                                "all_reduce/reduce_root"}) {
        const std::string s = op_algo, op = s.substr(0, s.find('/'));
        Simulation sim(cluster("4mesh3x3"));
        const OpTime t = planned_collective(sim, op, s, 36 * 1024);
        if (t.ns == 0) fail_msg("%s took no time", op_algo);
        if (t.checked.empty()) fail_msg("%s was not checked", op_algo);
        assert_int_equal(t.chips, 36);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_plan_runs_on_a_ring),
        cmocka_unit_test(test_every_plan_runs_on_a_torus),
        cmocka_unit_test(test_a_larger_all_gather_takes_longer_in_proportion),
        cmocka_unit_test(test_an_unknown_algorithm_is_refused_with_the_list),
        cmocka_unit_test(test_multicast_runs_on_a_1d_fabric),
        cmocka_unit_test(test_a_root_reaches_35_peers_on_4mesh3x3),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
