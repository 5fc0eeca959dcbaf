// System test of the collective ops on a real cluster (argv[1]: pair, line4,
// ring8, mesh2x2, ring4x2, ...): every op x algorithm x data type, with sizes that leave
// remainders and sizes down to one element per rank, checked element by
// element against the host reference; all-gather along every dimension of a
// 4-D tensor; reduce-scatter and all-reduce with pieces striped over two
// workers per link; bad requests refused with a message that names the problem.
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "../common/ccl_matrix.h"
#include "ccl/algorithm_table.h"
#include "ccl/calls.h"
#include "ccl/op_case.h"
#include "system_test.h"

using namespace weft;
using namespace weft::test;

namespace {

std::string g_name = "ring8";
std::unique_ptr<Cluster> g_cluster;
std::unique_ptr<ccl::CollectiveRunner> g_runner;
std::unique_ptr<ccl::CollectiveRunner> g_striped;  // the same, with two workers per link
std::unique_ptr<ccl::CollectiveRunner> g_fabric;   // over the fabric, while a test needs it

int setup(void**) {
    if (start_for_group(g_name, &g_cluster) != 0) return -1;
    // Small EDM slots, so that even these small tensors take many messages,
    // wrap every channel's slots and cross piece boundaries.
    ccl::RunnerOptions o;
    o.transport = "edm";  // these suites are the EDM's; the fabric's and auto's have runners of their own
    o.slots = 3;
    o.slot_size = 4096;
    g_runner = std::make_unique<ccl::CollectiveRunner>(*g_cluster, o);
    o.workers_per_link = 2;
    g_striped = std::make_unique<ccl::CollectiveRunner>(*g_cluster, o);
    return 0;
}

int teardown(void**) {
    g_fabric.reset();
    g_striped.reset();
    g_runner.reset();
    g_cluster.reset();
    return 0;
}

// The 32-bit chip's clusters run the plans the 64-bit ones run; what differs
// is the firmware (its ISA, its six workers, its 32-bit addresses). They run
// every op and algorithm once over each transport, and skip the host-side
// matrices the 64-bit clusters already cover (the bridge's lossy cables, the
// 4-D shapes, the fabric's second type and size).
bool sampled() { return g_name.size() > 5 && g_name.compare(g_name.size() - 5, 5, "-rv32") == 0; }

// Runs and checks one case; returns a line describing a failure, or "".
std::string run_one(const ccl::OpRequest& r, uint32_t seed, ccl::CollectiveRunner* runner = nullptr) {
    if (!runner) runner = g_runner.get();
    std::string what = ccl::collective_name(r.op) + "/" + r.algo + "/" + ccl::dtype_name(r.dtype) + "/" +
                       ccl::redop_name(r.redop) + " " + std::to_string(r.bytes) + " B root " + std::to_string(r.root);
    try {
        const ccl::CaseResult res = ccl::run_case(*runner, *g_cluster, r, seed);
        if (res.check.checked == 0) return what + ": nothing was checked";
        if (res.check.wrong)
            return what + ": " + std::to_string(res.check.wrong) + " wrong, first " + res.check.first_wrong;
        return "";
    } catch (const std::exception& e) {
        return what + ": " + e.what();
    }
}

void report(const std::vector<std::string>& failures, size_t cases) {
    for (const auto& f : failures) fprintf(stderr, "FAIL %s\n", f.c_str());
    fprintf(stderr, "%zu cases on %s, %zu failed\n", cases, g_name.c_str(), failures.size());
    assert_int_equal(failures.size(), 0);
}

void test_every_op_algorithm_and_type(void**) {
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    std::vector<std::string> failures;
    size_t cases = 0;
    uint32_t seed = 1;
    const bool grid = ccl::is_grid(g_cluster->topology());
    // Every type at both sizes on one cluster of each shape (pair, line4, mesh2x2: the smallest of
    // each). On the others each size runs one type: f32 at one, the next of the others at the
    // other, the two swapped from one algorithm to the next, so every type still meets every
    // algorithm on every cluster kind.
    const bool every_type = g_name == "pair" || g_name == "line4" || g_name == "mesh2x2";
    uint32_t turn = 0;
    for (ccl::Collective op : ccl::all_collectives()) {
        const std::vector<std::string> algos = ccl::algorithms(op, grid);  // a grid's: rows, then columns
        for (const std::string& algo : algos) {
            const abi::DataType other = test::kMatrixTypes[1 + turn % 3];
            const bool f32_small = turn++ % 2 == 0;
            std::vector<abi::DataType> types(std::begin(test::kMatrixTypes), std::end(test::kMatrixTypes));
            if (!every_type) types = {abi::kF32, other};
            if (g_name == "ring8-rv32") types = {abi::kF32};  // mesh2x2-rv32 meets the rv32 chip's other types
            for (abi::DataType t : types) {
                // One element per rank, then a size no rank count divides (odd elements).
                for (uint64_t elements : {uint64_t(n), uint64_t(3000 * n + n / 2 + 1)}) {
                    if (types.size() == 2 && (t == abi::kF32) != (f32_small == (elements == n))) continue;
                    for (const ccl::OpRequest& r : test::matrix_cell(op, algo, t, elements, n, seed)) {
                        ++cases;
                        const std::string f = run_one(r, seed++);
                        if (!f.empty()) failures.push_back(f);
                    }
                }
            }
        }
    }
    report(failures, cases);
}

// Every op and algorithm over links that lose 1% of their frames and flip one
// bit in a million: TT-link must hide all of it from the element-wise check.
// A cluster file's wire faults are on from the start: on a lossy cluster the
// ops run (and are checked) over cables that drop and corrupt frames; on a
// clean one no cable has any fault.
void test_cluster_file_faults(void**) {
    const bool lossy = g_name.find("lossy") != std::string::npos;
    auto faults_and_drops = [] {
        double faults = 0;
        uint64_t dropped = 0;
        const nlohmann::json counters = g_cluster->counters();  // kept: the loop refers into it
        for (const auto& l : counters["links"]) {
            faults += l["faults"]["drop_rate"].get<double>() + l["faults"]["bit_error_rate"].get<double>();
            for (const char* d : {"a_to_b", "b_to_a"}) dropped += l[d]["dropped"].get<uint64_t>();
        }
        return std::make_pair(faults, dropped);
    };
    const auto [faults, dropped_before] = faults_and_drops();
    if (!lossy) {
        assert_true(faults == 0);
        return;
    }
    assert_true(faults > 0);
    std::vector<std::string> failures;
    uint32_t seed = 11;
    for (ccl::Collective op : {ccl::Collective::kAllReduce, ccl::Collective::kAllGather}) {
        ccl::OpRequest r;
        r.op = op;
        r.algo = ccl::algorithms(op).front();
        r.bytes = 256 * 1024;
        const std::string f = run_one(r, seed++);
        if (!f.empty()) failures.push_back(f);
    }
    const uint64_t dropped = faults_and_drops().second - dropped_before;
    fprintf(stderr, "cluster-file faults: %llu frames dropped\n", (unsigned long long)dropped);
    assert_true(dropped > 0);
    report(failures, 2);
}

void test_every_op_over_faulty_links(void**) {
    if (sampled()) return;
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    for (const LinkInfo& l : g_cluster->links())
        g_cluster->set_fault(l.chip_a, l.port_a, {{"drop_rate", 0.01}, {"bit_error_rate", 1e-6}});
    std::vector<std::string> failures;
    size_t cases = 0;
    uint32_t seed = 7;
    for (ccl::Collective op : ccl::all_collectives())
        for (const std::string& algo : ccl::algorithms(op)) {
            ccl::OpRequest r;
            r.op = op;
            r.algo = algo;
            r.dtype = abi::kF32;
            r.bytes = uint64_t(64 * 1024 + n / 2 + 1) * 4;  // enough frames that 1% of them is many
            r.root = seed % n;
            ++cases;
            const std::string f = run_one(r, seed++);
            if (!f.empty()) failures.push_back(f);
        }
    uint64_t retransmits = 0, crc_errors = 0, dropped = 0;
    const nlohmann::json counters = g_cluster->counters();  // kept: the loop refers into it
    for (const auto& l : counters["links"])
        for (const char* d : {"a_to_b", "b_to_a"}) {
            retransmits += l[d]["retransmits"].get<uint64_t>();
            crc_errors += l[d]["crc_errors"].get<uint64_t>();
            dropped += l[d]["dropped"].get<uint64_t>();
        }
    for (const LinkInfo& l : g_cluster->links()) g_cluster->set_fault(l.chip_a, l.port_a, {{"clear", true}});
    fprintf(stderr, "faulty links: %llu frames dropped, %llu CRC errors, %llu retransmits\n",
            (unsigned long long)dropped, (unsigned long long)crc_errors, (unsigned long long)retransmits);
    // The faults really happened (else this test proves nothing) and were repaired.
    assert_true(dropped > 0);
    assert_true(crc_errors > 0);
    assert_true(retransmits >= dropped);
    report(failures, cases);
}

// The reduce-scatter of tt-metal's CCL developer guide, with several workers: each takes every other
// piece. Reduce-scatter (every algorithm) and all-reduce (CTRING, whose first
// half is a ring reduce-scatter; with each phase one way or both ways)
// on two workers per link: one element per rank, and blocks of several pieces
// (3 slots of 4 KiB) with a remainder, so the lanes get unequal shares.
// Whether some stream of a one-lane lowering has a spare worker core at both ends.
bool has_spare_workers(const ccl::LoweredOp& op) {
    const size_t workers = g_cluster->board().cores_with_role(CoreRole::kWorker).size();
    std::map<uint32_t, size_t> used;
    for (const ccl::WorkerProgram& w : op.workers) ++used[w.chip];
    for (const ccl::Stream& s : op.streams)
        if (used[s.chip] < workers && used[s.peer_chip] < workers) return true;
    return false;
}

void test_two_workers_per_link(void**) {
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    struct Case {
        ccl::Collective op;
        std::string algo;
        bool bidir_all_gather, bidir_reduce_scatter;  // CTRING's phases
    };
    std::vector<Case> cases;
    for (const std::string& algo : ccl::algorithms(ccl::Collective::kReduceScatter))
        cases.push_back({ccl::Collective::kReduceScatter, algo, false, false});
    for (bool ag : {false, true})
        for (bool rs : {false, true}) cases.push_back({ccl::Collective::kAllReduce, "ring", ag, rs});
    std::vector<std::string> failures;
    size_t runs = 0;
    uint32_t seed = 200;
    for (const Case& c : cases) {
        // CTRING's phases go both ways below their thresholds (by default at every size).
        setenv("WEFT_CTRING_BIDIR_AG_MAX_SIZE", c.bidir_all_gather ? "-1" : "0", 1);
        setenv("WEFT_CTRING_BIDIR_RS_MAX_SIZE", c.bidir_reduce_scatter ? "-1" : "0", 1);
        for (abi::DataType t : {abi::kF32, abi::kI32})
            for (uint64_t elements : {uint64_t(n), uint64_t(16000 * n + n / 2 + 1)}) {
                ccl::OpRequest r;
                r.op = c.op;
                r.algo = c.algo;
                r.dtype = t;
                r.bytes = elements * ccl::dtype_size(t);
                const ccl::LoweredOp op = g_striped->lower_op(r, c.algo);
                bool striped = false;
                for (const ccl::Stream& s : op.streams) striped |= s.lane > 0;
                // A stream gets a second lane when both its chips have a worker core to
                // spare beyond what the op needs with one lane each: a chip sending and
                // receiving one way needs two, both ways four, and each plane as many
                // again (qemu-virt has four workers, qemu-virt32 six). Where hops have
                // several cables, pieces alternate between them and a cable may carry too
                // few to stripe: there only "no spare, no stripes" is asserted. (Tiny sizes
                // leave chips idle or cut CTRING's chunks to an element: either.)
                const bool expect = has_spare_workers(g_runner->lower_op(r, c.algo));
                const bool decided = !expect || g_runner->topology().max_cables() == 1;
                if (elements > n && decided && striped != expect)
                    failures.push_back(ccl::collective_name(c.op) + "/" + c.algo +
                                       (striped ? " striped" : " not striped") + " on " + g_name + " (" +
                                       std::to_string(r.bytes) + " B, all-gather " +
                                       (c.bidir_all_gather ? "both ways" : "one way") + ", reduce-scatter " +
                                       (c.bidir_reduce_scatter ? "both ways)" : "one way)"));
                ++runs;
                const std::string f = run_one(r, seed++, g_striped.get());
                if (!f.empty()) failures.push_back(f + " (2 workers per link)");
            }
    }
    unsetenv("WEFT_CTRING_BIDIR_AG_MAX_SIZE");
    unsetenv("WEFT_CTRING_BIDIR_RS_MAX_SIZE");
    report(failures, runs);
}

// Where neighbours are joined by two cables (ring4x2), ops stripe their hops
// over both: each cable carries its share of the bytes.
void test_planes_carry_every_hop(void**) {
    const bool planes = g_runner->topology().max_cables() > 1;
    if (g_name == "ring4x2") assert_true(planes);
    if (!planes) return;  // one cable per neighbour: nothing to stripe
    auto bytes_per_cable = [] {
        std::vector<uint64_t> v;
        const nlohmann::json counters = g_cluster->counters();  // kept: the loop refers into it
        // Both ways: a one-way ring crosses some cables of a mesh from b to a.
        for (const auto& l : counters["links"])
            v.push_back(l["a_to_b"]["bytes"].get<uint64_t>() + l["b_to_a"]["bytes"].get<uint64_t>());
        return v;
    };
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    // One way (a worker per cable), both ways and CTRING (a worker serving
    // both cables to its neighbour, each its own EDM connection).
    const std::pair<ccl::Collective, const char*> cases[] = {{ccl::Collective::kAllGather, "ring"},
                                                             {ccl::Collective::kAllGather, "ring_bidir"},
                                                             {ccl::Collective::kAllReduce, "ring"}};
    for (const auto& [collective, algo] : cases) {
        ccl::OpRequest r;
        r.op = collective;
        r.algo = algo;
        r.bytes = uint64_t(n) * 256 * 1024;
        const ccl::LoweredOp op = g_runner->lower_op(r, r.algo);
        if (op.planes != 2) fail_msg("%s/%s uses %u plane(s)", ccl::collective_name(r.op).c_str(), algo, op.planes);
        const std::vector<uint64_t> before = bytes_per_cable();
        assert_string_equal(run_one(r, 11).c_str(), "");
        const std::vector<uint64_t> after = bytes_per_cable();
        for (size_t i = 0; i < after.size(); ++i)
            if (after[i] - before[i] <
                uint64_t(n - 1) * 256 * 1024 / 2 / 4)  // a share of every step's blocks, with slack
                fail_msg("cable %zu carried %llu bytes of %s/%s striped over both planes", i,
                         (unsigned long long)(after[i] - before[i]), ccl::collective_name(r.op).c_str(), algo);
    }
}

void test_all_reduce_one_element(void**) {
    // One element in all: every rank but one has an empty shard.
    std::vector<std::string> failures;
    for (const std::string& algo : ccl::algorithms(ccl::Collective::kAllReduce)) {
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllReduce;
        r.algo = algo;
        r.bytes = 4;
        const std::string f = run_one(r, 7);
        if (!f.empty()) failures.push_back(f);
    }
    report(failures, ccl::algorithms(ccl::Collective::kAllReduce).size());
}

void test_all_gather_every_dimension(void**) {
    if (sampled()) return;
    std::vector<std::string> failures;
    size_t cases = 0;
    for (const std::string& algo : ccl::algorithms(ccl::Collective::kAllGather))
        for (uint32_t dim = 0; dim < 4; ++dim) {
            ccl::OpRequest r;
            r.op = ccl::Collective::kAllGather;
            r.algo = algo;
            r.dtype = abi::kBF16;
            r.shape = {2, 3, 4, 70};
            r.dim = dim;
            ++cases;
            const std::string f = run_one(r, 100 + dim);
            if (!f.empty()) failures.push_back(f + " (dim " + std::to_string(dim) + ")");
        }
    report(failures, cases);
}

// The cables carry what the algorithm moves, not whole EDM slots: a message
// shorter than its slot crosses as its own bytes (pieces here are ~1/3 of a
// slot). Allowed on top: the EDM's 4-byte counters, a few per message.
void test_cables_carry_only_the_payload(void**) {
    for (ccl::Collective op : {ccl::Collective::kAllGather, ccl::Collective::kAllReduce}) {
        ccl::OpRequest r;
        r.op = op;
        r.algo = "ring";
        r.bytes = 1300 * 4 * g_cluster->size() + 4;
        const ccl::CaseResult res = ccl::run_case(*g_runner, *g_cluster, r, 5);
        assert_int_equal(res.check.wrong, 0);
        const double defined = double(res.timing.bytes_on_links);
        const double ratio = double(res.traffic.wire_bytes) / defined;
        fprintf(stderr, "%s ring %llu B: %llu bytes on the cables for %.0f defined (%.3fx)\n",
                ccl::collective_name(op).c_str(), (unsigned long long)r.bytes,
                (unsigned long long)res.traffic.wire_bytes, defined, ratio);
        assert_true(defined > 0);
        if (ratio > 1.03) fail_msg("the cables carried %.3fx the algorithm's bytes", ratio);
    }
}

void test_auto_picks_a_valid_algorithm(void**) {
    for (ccl::Collective op : ccl::all_collectives()) {
        ccl::OpRequest r;
        r.op = op;
        r.bytes = 64 * 1024;
        const std::string algo = g_runner->resolve(r);
        const std::vector<std::string> algos = ccl::algorithms(op, ccl::is_grid(g_cluster->topology()));
        if (std::find(algos.begin(), algos.end(), algo) == algos.end()) fail_msg("auto picked %s", algo.c_str());
        assert_string_equal(run_one(r, 3).c_str(), "");
    }
}

void expect_error(const ccl::OpRequest& r, const char* needle) {
    try {
        ccl::run_case(*g_runner, *g_cluster, r, 1);
    } catch (const Error& e) {
        if (std::string(e.what()).find(needle) != std::string::npos) return;
        fprintf(stderr, "error '%s' does not mention '%s'\n", e.what(), needle);
        fail();
    }
    fprintf(stderr, "no error for a request that should mention '%s'\n", needle);
    fail();
}

void test_bad_requests_are_refused(void**) {
    ccl::OpRequest r;
    r.bytes = 6;  // three bf16, one and a half f32
    expect_error(r, "not a whole number of f32 elements");
    r.bytes = 0;
    expect_error(r, "at least one element");
    r.bytes = 1024;
    r.algo = "hypercube";
    expect_error(r, "unknown algorithm 'hypercube'");
    r.algo = "auto";
    r.op = ccl::Collective::kBroadcast;
    r.root = 99;
    expect_error(r, "root 99 is not a chip");
    r.root = 0;
    r.bytes = 1ull << 30;
    expect_error(r, "does not fit chip DRAM");
    try {
        ccl::parse_collective("allreduce");
        fail();
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "unknown op 'allreduce'"));
    }
    ccl::RunnerOptions o;
    o.transport = "pigeon";
    try {
        ccl::CollectiveRunner run(*g_cluster, o);
        fail_msg("a runner over an unknown transport was made");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "unknown transport 'pigeon': edm, fabric or auto"));
    }
}

// An op that fails (a cable pulled for good, so the op misses its deadline)
// stops its kernels before it reports, and the next op runs on the same
// cluster without a reset.
void test_failed_op_leaves_the_cluster_usable(void**) {
    if (g_cluster->size() < 2) return;
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.timeout = std::chrono::milliseconds(1500);
    o.edm_progress_timeout_us = 1'000'000;  // either deadline will do: the test waits for the sooner
    ccl::CollectiveRunner runner(*g_cluster, o);
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllGather;
    r.algo = "ring";
    r.bytes = 64 * 1024;
    const ccl::Stream cable = runner.lower_op(r, r.algo).streams.front();  // a cable the op uses
    g_cluster->set_link(cable.chip, cable.port, false);
    std::string error;
    try {
        ccl::run_case(runner, *g_cluster, r, 1);
    } catch (const Error& e) {
        error = e.what();
    }
    g_cluster->set_link(cable.chip, cable.port, true);
    // The host's stall deadline, or (on a host so busy that the cluster's own
    // time crawls) the EDM's own timeout on its dead cable: either names why.
    const bool stalled = contains(error, "nothing moved on the cluster for 1500 ms") &&
                         contains(error, "kernel(s) still running");
    if (!stalled && !contains(error, "could not move for") && !contains(error, "its cable is down"))
        fail_msg("the op over a pulled cable ended with: %s", error.c_str());
    assert_string_equal(run_one(r, 2).c_str(), "");
    r.op = ccl::Collective::kAllReduce;
    assert_string_equal(run_one(r, 3).c_str(), "");
}

// Every op and algorithm on buffers the caller placed: in place (where the
// op has a meaning for it) at an address that is not page-aligned, and out
// of place with the output below the input; the send buffer of an
// out-of-place op is left as it was.
std::vector<std::string> user_buffer_cases(ccl::CollectiveRunner& runner, const char* label, size_t& cases,
                                           uint32_t& seed) {
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    const uint64_t base = g_cluster->board().dram.base + (5 << 20) + 4;
    std::vector<std::string> failures;
    for (ccl::Collective op : ccl::all_collectives()) {
        const std::vector<std::string> algos = ccl::algorithms(op, ccl::is_grid(g_cluster->topology()));
        for (const std::string& algo : algos)
            for (bool in_place : {true, false}) {
                if (in_place && op == ccl::Collective::kSendRecv) continue;
                ccl::OpRequest r;
                r.op = op;
                r.algo = algo;
                r.bytes = (3000 * n + n / 2 + 1) * 4;
                r.root = seed % n;
                r.send = in_place ? base : base + (1 << 20);
                r.recv = base;
                ++cases;
                const std::string f = run_one(r, seed++, &runner);
                if (!f.empty()) failures.push_back(std::string(label) + (in_place ? " in place " : " ") + f);
            }
    }
    return failures;
}

void test_every_op_on_user_buffers(void**) {
    size_t cases = 0;
    uint32_t seed = 500;
    const std::vector<std::string> failures = user_buffer_cases(*g_runner, "edm", cases, seed);
    report(failures, cases);
}

// The NCCL-style calls: an op started, the host busy meanwhile, a second op
// refused until the first is waited for; buffers that cannot be are refused by name.
void test_calls_on_user_buffers(void**) {
    const uint64_t base = g_cluster->board().dram.base + (2 << 20);
    const uint64_t count = 1000;
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    std::vector<float> v(count);
    for (uint32_t c = 0; c < n; ++c) {
        for (uint64_t i = 0; i < count; ++i) v[i] = float(c + i % 7);
        g_cluster->chip(c).write(base, v.data(), count * 4);
    }
    ccl::PendingOp op = ccl::all_reduce(*g_runner, base, base, count, abi::kF32, abi::kMathSum);
    try {
        ccl::all_reduce(*g_runner, base + (1 << 20), base + (1 << 20), count, abi::kF32, abi::kMathSum);
        fail_msg("a second op started while the first ran");
    } catch (const Error& e) {
        assert_true(contains(e.what(), "still running"));
    }
    g_runner->wait(op);
    for (uint32_t c = 0; c < n; ++c) {
        g_cluster->chip(c).read(base, v.data(), count * 4);
        for (uint64_t i = 0; i < count; ++i)
            if (v[i] != float(n * (n - 1) / 2 + n * (i % 7)))
                fail_msg("chip %u element %llu is %g", c, (unsigned long long)i, v[i]);
    }
    auto refused = [&](uint64_t send, uint64_t recv, ccl::Collective c, const char* needle) {
        try {
            ccl::PendingOp o = c == ccl::Collective::kAllGather
                                   ? ccl::all_gather(*g_runner, send, recv, count, abi::kF32)
                                   : ccl::all_reduce(*g_runner, send, recv, count, abi::kF32, abi::kMathSum);
            g_runner->wait(o);
        } catch (const Error& e) {
            if (contains(e.what(), needle)) return;
            fail_msg("error '%s' does not mention '%s'", e.what(), needle);
        }
        fail_msg("no error for buffers that should mention '%s'", needle);
    };
    const Region& dram = g_cluster->board().dram;
    refused(base, base + 100 * 4, ccl::Collective::kAllReduce, "overlaps the send buffer");
    refused(base, base + 2, ccl::Collective::kAllReduce, "not aligned to its 4-byte elements");
    refused(dram.base + dram.size - 16, base, ccl::Collective::kAllReduce, "is not inside chip DRAM");
    refused(0, base, ccl::Collective::kAllReduce, "address 0 is not a buffer");
    refused(base, base + 400, ccl::Collective::kAllGather, "overlaps the send buffer");
    ccl::OpRequest r;
    r.op = ccl::Collective::kSendRecv;
    r.bytes = 4096;
    r.send = r.recv = base;
    expect_error(r, "send_recv cannot run in place");
    // The runner is still good after the refusals.
    ccl::OpRequest plain;
    plain.bytes = 4096;
    assert_string_equal(run_one(plain, 7).c_str(), "");
}

// ncclCommSplit: the cluster cut into two halves by colour, an all-reduce on
// each half at the same time (each on its own cables), every element
// checked against the sum over that half only; a communicator over chips
// with no cables between them, or over chips busy with another's op, refused.
void test_communicators_split_and_run_at_once(void**) {
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    if (n < 4 || ccl::is_grid(g_cluster->topology())) return;  // halves of a ring or line (chips in cable order)
    ccl::RunnerOptions o;
    o.slots = 3;
    o.slot_size = 4096;
    std::vector<int> colour(n);
    for (uint32_t c = 0; c < n; ++c) colour[c] = c < n / 2 ? 0 : 1;
    auto comms = ccl::CollectiveRunner::split(*g_cluster, colour, o);
    assert_int_equal(comms.size(), 2);
    const uint64_t count = 3001, addr = g_cluster->board().dram.base + (3 << 20);
    auto value = [](uint32_t chip, uint64_t i) { return float((chip * 7 + i) % 13); };
    std::vector<float> v(count);
    for (uint32_t c = 0; c < n; ++c) {
        for (uint64_t i = 0; i < count; ++i) v[i] = value(c, i);
        g_cluster->chip(c).write(addr, v.data(), count * 4);
    }
    ccl::PendingOp first = ccl::all_reduce(*comms[0], addr, addr, count, abi::kF32, abi::kMathSum);
    try {  // chip 0 is busy with the first half's op
        ccl::CollectiveRunner whole(*g_cluster, o);
        ccl::all_reduce(whole, addr, addr, count, abi::kF32, abi::kMathSum);
        fail_msg("an op over chips that run another communicator's op started");
    } catch (const Error& e) {
        assert_true(contains(e.what(), "is running another communicator's op"));
    }
    ccl::PendingOp second = ccl::all_reduce(*comms[1], addr, addr, count, abi::kF32, abi::kMathSum);
    comms[0]->wait(first);
    comms[1]->wait(second);
    for (uint32_t c = 0; c < n; ++c) {
        g_cluster->chip(c).read(addr, v.data(), count * 4);
        for (uint64_t i = 0; i < count; ++i) {
            float want = 0;
            for (uint32_t k : comms[colour[c]]->chips()) want += value(k, i);
            if (v[i] != want) fail_msg("chip %u element %llu: %g, not %g", c, (unsigned long long)i, v[i], want);
        }
    }
    // Every other chip: no cable joins two of them.
    std::vector<uint32_t> apart;
    for (uint32_t c = 0; c < n; c += 2) apart.push_back(c);
    try {
        ccl::CollectiveRunner sparse(*g_cluster, apart, o);
        ccl::OpRequest r;
        r.bytes = 4096;
        ccl::run_case(sparse, *g_cluster, r, 1);
        fail_msg("a communicator with no cables between its chips ran an op");
    } catch (const Error& e) {
        if (!contains(e.what(), "no path of working links")) fail_msg("got: %s", e.what());
    }
    try {
        ccl::CollectiveRunner twice(*g_cluster, {0, 1, 0}, o);
        fail_msg("a communicator naming a chip twice was made");
    } catch (const Error& e) {
        assert_true(contains(e.what(), "chip 0 is in the communicator twice"));
    }
}

}  // namespace

// Every op and algorithm over the fabric (its routers forward; small
// messages so that the streams wrap their slots), then the EDM again once the
// fabric is stopped: the routers gave their cores back.
void test_every_op_and_algorithm_over_the_fabric(void**) {
    ccl::RunnerOptions o;
    o.transport = "fabric";
    o.fabric_streams.slots = 3;
    o.fabric_streams.message_bytes = 4096;
    g_fabric = std::make_unique<ccl::CollectiveRunner>(*g_cluster, o);
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    std::vector<std::string> failures;
    size_t cases = 0;
    uint32_t seed = 300;
    for (ccl::Collective op : ccl::all_collectives()) {
        // The fabric's multicast too, on a 1D fabric (a grid's fabric is 2D: refused by name, below).
        const bool grid = ccl::is_grid(g_cluster->topology());
        const std::vector<std::string> algos =
            ccl::algorithms(op, grid, grid ? 0u : uint32_t(transport::kCanMulticast));
        // The type is the workers' business, not the transport's: each size of each algorithm
        // runs one type, the pairing swapped from one algorithm to the next.
        uint32_t turn = 0;
        for (const std::string& algo : algos) {
            ++turn;
            for (uint64_t elements : {uint64_t(n), uint64_t(3000 * n + n / 2 + 1)}) {
                const abi::DataType t = turn++ % 2 ? abi::kI32 : abi::kF32;
                if (sampled() && elements == n) continue;
                ccl::OpRequest r;
                r.op = op;
                r.algo = algo;
                r.dtype = t;
                r.bytes = elements * ccl::dtype_size(t);
                r.root = seed % n;
                ++cases;
                const std::string f = run_one(r, seed++, g_fabric.get());
                if (!f.empty()) failures.push_back("fabric " + f);
            }
        }
    }
    if (ccl::is_grid(g_cluster->topology())) {
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllGather;
        r.algo = "multicast";
        r.bytes = 4096;
        ++cases;
        const std::string f = run_one(r, seed++, g_fabric.get());
        if (f.find("run on a 1D fabric") == std::string::npos)
            failures.push_back("multicast on a 2D fabric was not refused by name: " + f);
    }
    // The fabric's own algorithms need the fabric: over the EDM they are refused by name.
    {
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllGather;
        r.algo = "multicast";
        r.bytes = 4096;
        ++cases;
        const std::string f = run_one(r, seed++);
        if (f.find("runs on the fabric: use --transport fabric") == std::string::npos)
            failures.push_back("multicast over the EDM was not refused by name: " + f);
    }
    for (const std::string& f : user_buffer_cases(*g_fabric, "fabric", cases, seed)) failures.push_back(f);
    g_fabric.reset();
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.bytes = 4096;
    const std::string f = run_one(r, seed++);
    if (!f.empty()) failures.push_back("edm after the fabric " + f);
    report(failures, cases + 1);
}

int main(int argc, char** argv) {
    if (argc > 1) g_name = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_file_faults),  // first: later tests change the faults
        cmocka_unit_test(test_bad_requests_are_refused),
        cmocka_unit_test(test_every_op_algorithm_and_type),
        cmocka_unit_test(test_all_reduce_one_element),
        cmocka_unit_test(test_planes_carry_every_hop),
        cmocka_unit_test(test_two_workers_per_link),
        cmocka_unit_test(test_all_gather_every_dimension),
        cmocka_unit_test(test_auto_picks_a_valid_algorithm),
        cmocka_unit_test(test_every_op_over_faulty_links),  // clears the faults when done
        cmocka_unit_test(test_cables_carry_only_the_payload),
        cmocka_unit_test(test_failed_op_leaves_the_cluster_usable),
        cmocka_unit_test(test_every_op_on_user_buffers),
        cmocka_unit_test(test_calls_on_user_buffers),
        cmocka_unit_test(test_communicators_split_and_run_at_once),
        cmocka_unit_test(test_every_op_and_algorithm_over_the_fabric),
    };
    return cmocka_run_group_tests_name(("ccl on " + g_name).c_str(), tests, setup, teardown);
}
