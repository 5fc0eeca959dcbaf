// The fabric on real QEMU clusters (1D on line4 and ring8, 2D on mesh3x3,
// torus4x4 and the 32-chip galaxy, downshifted too): a fabric_router
// resident image on every port the fabric uses, worker kernels sending with
// the worker API (fabric_traffic), and the host checking every byte and every
// count where the packets land.
#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "ccl/calls.h"
#include "ccl/op_case.h"
#include "common/error.h"
#include "driver/resident.h"
#include "fabric_model/replay.h"
#include "system_test.h"
#include "test_kernels.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/packet_log.h"
#include "transport/fabric/replay_traffic.h"
#include "transport/fabric/router_telemetry.h"
#include "transport/fabric/socket.h"
#include "transport/l1_allocator.h"

using namespace weft;
using namespace weft::test;
using namespace std::chrono;
using transport::FabricDirection;

namespace {

std::unique_ptr<Cluster> g_cluster;
bool g_ring = false;
bool g_2d = false;   // a mesh or torus: transport::mesh_fabric
bool g_wrap = true;  // 2D: use the torus's wrap cables (false: downshifted to a mesh)
std::unique_ptr<transport::Fabric> g_fabric;
// Regions of each chip's DRAM (offsets from its base).
// A cable back to how the cluster file made it: no faults, no shaping, plugged in.
const nlohmann::json kUnfaulted = {{"clear", true}, {"bandwidth_gbps", 0}, {"latency_us", 0}};
const nlohmann::json kStillPulled = {{"bandwidth_gbps", 0}, {"latency_us", 0}};  // unshaped, not plugged back
constexpr uint32_t kSrc = 0x0, kDst = 0x100000, kSems = 0x200000, kIncs = 0x200100, kInline = 0x200200,
                   kDone = 0x200300, kScatter = 0x300000, kBlock = 16 * 1024;

uint64_t dram(uint32_t offset) { return g_cluster->board().dram.base + offset; }
// A cable to be pulled under an op is first slowed to a crawl, so that its
// share of the op is still queued on it when the pull lands. Shaping runs on
// the wall clock while a loaded host slows the chips: at 2-20 MB/s a loaded
// host has more than once carried the whole share across before the pull (the
// op right, nothing rerouted). At 200 KB/s a 16 KiB message takes ~80 ms.
void slow_to_a_crawl(uint32_t chip, uint32_t port) { g_cluster->set_fault(chip, port, {{"bandwidth_gbps", 0.0002}}); }
// The board's worker core number `w` (qemu-virt: cores 4-7; qemu-virt32: 8-11).
uint32_t worker_core(uint32_t w) { return g_cluster->board().cores_with_role(CoreRole::kWorker).at(w); }
uint8_t pattern(uint32_t from, uint32_t to, uint32_t i) {
    return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + 1);
}

int setup_line4(void**) {
    g_ring = false;
    return start_for_group("line4", &g_cluster);
}
int setup_ring8(void**) {
    g_ring = true;
    return start_for_group("ring8", &g_cluster);
}
int setup_mesh3x3(void**) {
    g_ring = false;
    g_2d = true;
    return start_for_group("mesh3x3", &g_cluster);
}
int setup_torus4x4(void**) {
    g_ring = false;
    g_2d = true;
    return start_for_group("torus4x4", &g_cluster);
}
int setup_ring8x2(void**) {
    g_ring = true;
    return start_for_group("ring8x2", &g_cluster);
}
int setup_mesh2x2_rv32(void**) {
    g_ring = false;
    g_2d = true;
    return start_for_group("mesh2x2-rv32", &g_cluster);
}
int setup_galaxy(void**) {
    g_ring = false;
    g_2d = true;
    return start_for_group("galaxy", &g_cluster);
}
int setup_4mesh3x3(void**) {
    g_ring = false;
    g_2d = true;
    return start_for_group("4mesh3x3", &g_cluster);
}
// After every test, passed or not: no router left running and every cable
// up, unfaulted and unshaped, so a test that fails half-way (cmocka jumps
// past its own clean-up, a runner's destructor among it) does not fail the
// ones after it.
int heal_cables(void**) {
    if (!g_cluster) return 0;
    g_fabric.reset();
    for (const resident::Running& r : resident::list(*g_cluster)) resident::stop(*g_cluster, r.chip, r.core, seconds(5));
    for (const LinkInfo& l : g_cluster->links()) g_cluster->set_fault(l.chip_a, l.port_a, kUnfaulted);
    return 0;
}
int teardown(void**) {
    g_fabric.reset();
    g_cluster.reset();
    g_2d = false;
    g_wrap = true;
    return 0;
}

// Each chip's sources hold pattern(chip, t, i) at kSrc + t * kBlock; every destination is cleared.
void prepare(uint32_t bytes) {
    for (uint32_t f = 0; f < g_cluster->size(); ++f) {
        std::vector<uint8_t> src(bytes);
        for (uint32_t t = 0; t < g_cluster->size(); ++t) {
            for (uint32_t i = 0; i < bytes; ++i) src[i] = pattern(f, t, i);
            g_cluster->chip(f).write(dram(kSrc + t * kBlock), src.data(), bytes);
        }
        const std::vector<uint8_t> zero(0x200000, 0);
        g_cluster->chip(f).write(dram(kDst), zero.data(), zero.size());
        g_cluster->chip(f).write(dram(kScatter), zero.data(), 0x10000);
    }
}

// Jobs for fabric_traffic kernels: `workers` per chip (the board's worker cores),
// each on its own lane of its chip's routers.
struct Traffic {
    uint32_t workers;
    std::vector<test_abi::FabricTrafficArgs> args;
    explicit Traffic(uint32_t workers_per_chip = 1)
        : workers(workers_per_chip), args(g_cluster->size() * workers_per_chip) {
        for (auto& a : args) a = test_abi::FabricTrafficArgs{};
    }
    void add(uint32_t chip, const test_abi::FabricTrafficJob& j, uint32_t worker = 0) {
        auto& a = args.at(chip * workers + worker);
        if (a.job_count == test_abi::kFabricTrafficMaxJobs) fail_msg("too many jobs for chip %u", chip);
        a.jobs[a.job_count++] = j;
    }
    bool full(uint32_t chip, uint32_t worker) const {
        return args.at(chip * workers + worker).job_count == test_abi::kFabricTrafficMaxJobs;
    }
    // Connects every worker both ways it can go, and runs the kernels.
    void run(transport::Fabric& fabric, milliseconds timeout = milliseconds(30000)) {
        transport::L1Allocator l1(g_cluster->board());
        g_cluster->run(launches(fabric, l1), timeout);
    }
    std::vector<Launch> launches(transport::Fabric& fabric, transport::L1Allocator& l1) {
        std::vector<Launch> launches;
        for (uint32_t c = 0; c < g_cluster->size(); ++c)
            for (uint32_t w = 0; w < workers; ++w) {
                test_abi::FabricTrafficArgs& a = args[c * workers + w];
                if (!a.job_count) continue;
                fabric.builder().connect_every_way(*g_cluster, l1, c, w, worker_core(w), a.connection);
                launches.push_back(
                    {c, worker_core(w), &kernel_named(g_cluster->board(), "fabric_traffic"), KernelArgWords::of(a)});
            }
        return launches;
    }
};

// fabric_traffic's connection for a direction of a 1D fabric: forward, then backward.
uint32_t way_1d(FabricDirection d) { return d == FabricDirection::kBackward ? 1 : 0; }

// fabric_traffic's connection for a direction: 2D by compass, 1D forward then backward.
uint32_t connection_of(FabricDirection d) { return g_2d ? static_cast<uint32_t>(d) : way_1d(d); }

test_abi::FabricTrafficJob job_to(transport::Fabric& fabric, uint32_t from, uint32_t to, uint8_t command) {
    const transport::FabricRoute r = fabric.builder().route(from, to);
    test_abi::FabricTrafficJob j{};
    j.command = command;
    j.hops = static_cast<uint8_t>(r.hops);
    j.count = 1;
    j.ttl = abi::kFabricDefaultTtl;
    j.direction = static_cast<uint8_t>(connection_of(r.direction));
    j.route = r.route;
    j.dst_mesh = static_cast<uint8_t>(fabric.builder().node(to).mesh);
    j.dst_chip = fabric.builder().node(to).chip;
    return j;
}

// f's block for t written into t's block for f, counted on t's semaphore for f.
test_abi::FabricTrafficJob block_write(transport::Fabric& fabric, uint32_t f, uint32_t t, uint32_t bytes) {
    auto w = job_to(fabric, f, t, abi::kFabricWriteInc);
    w.src = dram(kSrc + t * kBlock);
    w.dst = dram(kDst + f * kBlock);
    w.bytes = bytes;
    w.sem = dram(kSems + 4 * f);
    w.inc = 1;
    return w;
}

// Packets land after the kernels end (sends are asynchronous): wait for the count.
bool word_reaches(uint32_t chip, uint64_t addr, uint32_t want) {
    for (int i = 0; i < 5000; ++i) {
        if (g_cluster->chip(chip).read32(addr) == want) return true;
        std::this_thread::sleep_for(milliseconds(1));
    }
    return false;
}

// One mesh or torus (wrap cables used unless g_wrap is false), or several meshes.
transport::FabricBuilder fabric_2d(Cluster& cluster, const FabricSpec& o) {
    if (cluster.topology().meshes().size() > 1)
        return transport::multi_mesh_fabric(cluster.board(), cluster.topology(), o);
    return transport::mesh_fabric(cluster.board(), cluster.topology(), o, g_wrap);
}

// A test that fails jumps out past its destructors: the fabric is global, so
// the next test (or the teardown) stops what a failed one left running.
transport::Fabric& start_fabric(FabricSpec o = {}) {
    g_fabric.reset();
    g_fabric = transport::Fabric::start(*g_cluster,
                                        g_2d ? fabric_2d(*g_cluster, o) : transport::fabric_over(*g_cluster, g_ring, o),
                                        milliseconds(10000));
    return *g_fabric;
}

void test_every_chip_to_every_other_with_each_command(void**) {
    auto* fabric = &start_fabric();
    constexpr uint32_t kBytes = 9000;  // three packets of 4 KiB slots
    prepare(kBytes);
    const uint32_t n = g_cluster->size();
    // Five jobs per destination, each destination's on one worker's lane.
    const uint32_t workers = (5 * (n - 1) + test_abi::kFabricTrafficMaxJobs - 1) / test_abi::kFabricTrafficMaxJobs;
    Traffic traffic(workers);
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t t = 0; t < n; ++t) {
            if (f == t) continue;
            const uint32_t worker = t % workers;
            traffic.add(f, block_write(*fabric, f, t, kBytes), worker);
            auto inc = job_to(*fabric, f, t, abi::kFabricAtomicInc);
            inc.sem = dram(kIncs + 4 * f);
            inc.inc = f + 1;
            traffic.add(f, inc, worker);
            auto in = job_to(*fabric, f, t, abi::kFabricInlineWrite);
            in.dst = dram(kInline + 4 * f);
            in.inc = 0xC0DE0000u | (f << 8) | t;
            traffic.add(f, in, worker);
            auto sc = job_to(*fabric, f, t, abi::kFabricScatterWrite);
            sc.src = dram(kSrc + t * kBlock);
            sc.dst = dram(kScatter + f * 1024);
            sc.scatter[0] = dram(kScatter + f * 1024 + 256);
            sc.scatter[1] = dram(kScatter + f * 1024 + 512);
            sc.bytes = 100;
            traffic.add(f, sc, worker);
            // Last on the lane, so it lands after everything above.
            auto done = job_to(*fabric, f, t, abi::kFabricAtomicInc);
            done.sem = dram(kDone + 4 * f);
            done.inc = 1;
            traffic.add(f, done, worker);
        }
    traffic.run(*fabric);
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t f = 0; f < n; ++f) {
            if (f == t) continue;
            Chip& chip = g_cluster->chip(t);
            if (!word_reaches(t, dram(kDone + 4 * f), 1)) fail_msg("chip %u never heard the end from chip %u", t, f);
            assert_int_equal(chip.read32(dram(kSems + 4 * f)), 1);
            assert_true(word_reaches(t, dram(kIncs + 4 * f), f + 1));
            assert_true(word_reaches(t, dram(kInline + 4 * f), 0xC0DE0000u | (f << 8) | t));
            std::vector<uint8_t> got(kBytes + 1);
            chip.read(dram(kDst + f * kBlock), got.data(), got.size());
            for (uint32_t i = 0; i < kBytes; ++i)
                if (got[i] != pattern(f, t, i)) fail_msg("chip %u -> %u: byte %u differs", f, t, i);
            assert_int_equal(got[kBytes], 0);
            for (uint32_t part = 0; part < 3; ++part) {
                uint8_t s[101];
                chip.read(dram(kScatter + f * 1024 + 256 * part), s, sizeof s);
                for (uint32_t i = 0; i < 100; ++i)
                    if (s[i] != pattern(f, t, 100 * part + i)) fail_msg("scatter %u -> %u part %u differs", f, t, part);
                assert_int_equal(s[100], 0);
            }
        }
    fabric->stop();
}

// The routers log every packet they send over their cables; the same
// all-to-all, replayed in the fabric model (the same firmware over the same
// tables, in virtual time), must send every packet over the same cables.
void test_a_recorded_all_to_all_replays_alike_in_the_model(void**) {
    FabricSpec spec = g_cluster->fabric_spec();
    spec.record_packets = 1024;
    g_fabric.reset();
    g_fabric = transport::Fabric::start(*g_cluster,
                                        transport::cluster_fabric(g_cluster->board(), g_cluster->topology(), spec),
                                        milliseconds(10000));
    transport::Fabric& fabric = *g_fabric;
    constexpr uint32_t kBytes = 9000;
    prepare(kBytes);
    const uint32_t n = g_cluster->size();
    Traffic traffic;
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t t = 0; t < n; ++t) {
            if (f == t) continue;
            traffic.add(f, block_write(fabric, f, t, kBytes));
        }
    traffic.run(fabric);
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t f = 0; f < n; ++f)
            if (f != t && !word_reaches(t, dram(kSems + 4 * f), 1)) fail_msg("chip %u never heard from chip %u", t, f);
    const transport::PacketLog log = transport::read_packet_log(*g_cluster, fabric.builder());
    const uint32_t payload = fabric.builder().spec().payload_bytes();
    fabric.stop();
    assert_true(log.lost.empty());

    fabric_model::ModelOptions o;
    o.cluster = "torus4x4";  // the torus group's cluster file, which the model loads too
    o.fabric.record_packets = spec.record_packets;
    fabric_model::Simulation sim(o);
    const fabric_model::Replay r = fabric_model::replay_log(sim, log);
    assert_int_equal(r.packets, n * (n - 1) * ((kBytes + payload - 1) / payload));
    if (!r.differs.empty()) fail_msg("%s", r.differs.c_str());
    assert_int_equal(r.log.hops.size(), log.hops.size());
}

// The other way: random writes generated in the model, logged by its
// routers, then each packet the model sent sent again from the same chip on
// QEMU (weft replay's plan_replay and replay_on): QEMU's routers log every
// packet on the same cables.
void test_traffic_from_the_model_replays_alike_on_qemu(void**) {
    FabricSpec spec = g_cluster->fabric_spec();
    spec.record_packets = 1024;
    fabric_model::ModelOptions o;
    o.cluster = "torus4x4";
    o.fabric.record_packets = spec.record_packets;
    fabric_model::Simulation sim(o);
    std::mt19937 random(29);
    const uint32_t n = sim.chips();
    for (uint32_t i = 0; i < 8 * n; ++i) {  // several packets each where bytes exceed one
        const uint32_t from = i % n, to = (from + 1 + random() % (n - 1)) % n;
        const uint32_t bytes = 1 + random() % (3 * sim.max_payload());
        sim.write(from, to, sim.model().dram(kDst + i * kBlock * 4), sim.model().dram(kSrc), bytes,
                  sim.model().dram(kSems + 4 * (i % 64)));
    }
    sim.finish();
    const transport::PacketLog model_log = transport::read_packet_log(sim.model().cluster(), sim.model().fabric());

    g_fabric.reset();
    g_fabric = transport::Fabric::start(*g_cluster,
                                        transport::cluster_fabric(g_cluster->board(), g_cluster->topology(), spec),
                                        milliseconds(10000));
    transport::Fabric& fabric = *g_fabric;
    const transport::ReplayPlan plan = transport::plan_replay(fabric.builder(), g_cluster->board(), model_log);
    const transport::PacketLog qemu_log = transport::replay_on(*g_cluster, fabric, plan, milliseconds(30000));
    fabric.stop();
    assert_true(qemu_log.lost.empty());
    assert_true(plan.packets > 8 * n);  // some writes were several packets
    assert_int_equal(qemu_log.hops.size(), model_log.hops.size());
    const std::string differs = transport::paths_differ(transport::paths_of(transport::as_replayed(model_log)),
                                                        transport::paths_of(transport::as_replayed(qemu_log)),
                                                        "the model", "QEMU");
    if (!differs.empty()) fail_msg("%s", differs.c_str());
}

// Multicasts too: the model's, on the ring's 1D fabric (each chip to a
// neighbour and up to three chips on, both ways), sent again on QEMU from
// the log alone, reach the same chips over the same cables.
void test_model_multicasts_replay_alike_on_qemu(void**) {
    FabricSpec spec = g_cluster->fabric_spec();
    spec.record_packets = 1024;
    fabric_model::ModelOptions o;
    o.cluster = g_cluster->info().value("name", std::string());
    o.fabric.record_packets = spec.record_packets;
    fabric_model::Simulation sim(o);
    model::FabricModel& m = sim.model();
    const uint32_t n = sim.chips();
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t next : {(f + 1) % n, (f + n - 1) % n})
            sim.multicast(f, next, uint8_t(2 + f % 3), m.dram(kDst + f * kBlock), m.dram(kSrc), 1000 + 7 * f,
                          m.dram(kSems + 4 * f));
    sim.finish();
    const transport::PacketLog model_log = transport::read_packet_log(m.cluster(), m.fabric());

    g_fabric.reset();
    g_fabric = transport::Fabric::start(*g_cluster,
                                        transport::cluster_fabric(g_cluster->board(), g_cluster->topology(), spec),
                                        milliseconds(10000));
    transport::Fabric& fabric = *g_fabric;
    const transport::ReplayPlan plan = transport::plan_replay(fabric.builder(), g_cluster->board(), model_log);
    assert_int_equal(plan.multicast, 2 * n);
    const transport::PacketLog qemu_log = transport::replay_on(*g_cluster, fabric, plan, milliseconds(30000));
    fabric.stop();
    g_fabric.reset();
    assert_true(qemu_log.lost.empty());
    assert_int_equal(qemu_log.hops.size(), model_log.hops.size());
    const std::string differs = transport::paths_differ(transport::paths_of(transport::as_replayed(model_log)),
                                                        transport::paths_of(transport::as_replayed(qemu_log)),
                                                        "the model", "QEMU");
    if (!differs.empty()) fail_msg("%s", differs.c_str());
}

// A multicast reaches exactly its range: the chips whose region holds the bytes.
void multicast(transport::Fabric& fabric, uint32_t from, FabricDirection d, uint8_t hops, uint8_t count,
               const std::vector<uint32_t>& expect) {
    constexpr uint32_t kBytes = 5000;
    prepare(kBytes);
    Traffic traffic;
    test_abi::FabricTrafficJob j{};
    j.command = abi::kFabricWriteInc;
    j.hops = hops;
    j.count = count;
    j.ttl = abi::kFabricDefaultTtl;
    j.direction = static_cast<uint8_t>(connection_of(d));
    if (g_2d) {  // the connection of its compass; straight on from there
        const uint32_t compass = static_cast<uint32_t>(d);
        for (uint32_t h = 1; h < hops; ++h) j.route |= compass << (2 * (h - 1));
    }
    j.src = dram(kSrc);
    j.dst = dram(kDst);
    j.bytes = kBytes;
    j.sem = dram(kSems);
    j.inc = 1;
    for (uint32_t c = 0; c < g_cluster->size(); ++c) g_cluster->chip(c).write32(dram(kSems), 0);
    traffic.add(from, j);
    traffic.run(fabric);
    for (uint32_t c : expect) assert_true(word_reaches(c, dram(kSems), 1));
    std::this_thread::sleep_for(milliseconds(20));  // anything wrongly sent further has landed too
    for (uint32_t c = 0; c < g_cluster->size(); ++c) {
        const bool in = std::find(expect.begin(), expect.end(), c) != expect.end();
        assert_int_equal(g_cluster->chip(c).read32(dram(kSems)), in ? 1 : 0);
        std::vector<uint8_t> got(kBytes);
        g_cluster->chip(c).read(dram(kDst), got.data(), kBytes);
        for (uint32_t i = 0; i < kBytes; ++i)
            if (got[i] != (in ? pattern(from, 0, i) : 0)) fail_msg("chip %u byte %u is wrong", c, i);
    }
}

void test_multicast_reaches_exactly_its_range(void**) {
    auto* fabric = &start_fabric();
    if (!g_ring) {
        multicast(*fabric, 0, FabricDirection::kForward, 1, 3, {1, 2, 3});
        multicast(*fabric, 1, FabricDirection::kForward, 1, 2, {2, 3});
        multicast(*fabric, 2, FabricDirection::kBackward, 1, 2, {0, 1});
    } else {
        multicast(*fabric, 2, FabricDirection::kForward, 2, 3, {4, 5, 6});
        multicast(*fabric, 1, FabricDirection::kBackward, 1, 4, {0, 5, 6, 7});  // across the dateline
    }
    fabric->stop();
}

// TTL 1 across two hops is dropped by the second router, which posts the event.
void test_ttl_one_across_two_hops_is_dropped_and_reported(void**) {
    auto* fabric = &start_fabric();
    prepare(64);
    for (uint32_t c = 0; c < g_cluster->size(); ++c) g_cluster->chip(c).write32(dram(kSems), 0);
    Traffic traffic;
    auto j = job_to(*fabric, 0, 2, abi::kFabricAtomicInc);
    assert_int_equal(j.hops, 2);
    j.ttl = 1;
    j.sem = dram(kSems);
    j.inc = 1;
    traffic.add(0, j);
    auto ok = j;
    ok.ttl = 2;
    ok.sem = dram(kSems + 4);
    traffic.add(0, ok);
    traffic.run(*fabric);
    assert_true(word_reaches(2, dram(kSems + 4), 1));
    assert_int_equal(g_cluster->chip(2).read32(dram(kSems)), 0);
    // Counted in the router's status, and posted as an event naming its chip.
    const auto& r = fabric->builder().routers().at(fabric->builder().router_index(2, FabricDirection::kBackward));
    assert_int_equal(g_cluster->chip(2).read32(r.config.status + offsetof(abi::FabricRouterStatus, dropped)), 1);
    // The chip posted the event naming the router's port (the bridge drains
    // the ring into events.log).
    const abi::EventRing& ring = g_cluster->chip(2).control().events;
    const abi::StatusEvent& last = ring.slots[(ring.tail - 1) % abi::kEventSlots];
    assert_int_equal(last.kind, abi::kEventDroppedPacket);
    assert_int_equal(last.port, r.port);
    fabric->stop();
}

// While the fabric runs its ERISC cores are taken, by name; once stopped they are free again.
void test_routers_hold_their_cores_until_stopped(void**) {
    auto* fabric = &start_fabric();
    const auto& r = fabric->builder().routers().front();
    const std::string busy = [&] {
        try {
            g_cluster->run({reloc_probe(g_cluster->board(), r.chip, r.core)}, milliseconds(5000));
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string();
    }();
    assert_true(contains(busy, "fabric_router"));
    fabric->stop();
    const auto results = g_cluster->run({reloc_probe(g_cluster->board(), r.chip, r.core)}, milliseconds(5000));
    assert_int_equal(results.at(0).return_code, 1321);
}

// Every router stands in the hang report, with what it has done. A router
// is described while it waits, and an idle one waits nearly always; on a
// loaded host one may be caught between two polls, so the report is taken
// again (for up to a second) until it names them all.
void test_hang_report_names_every_router(void**) {
    auto* fabric = &start_fabric();
    size_t routers = 0;
    for (int tries = 0; tries < 50 && routers != fabric->builder().routers().size(); ++tries) {
        if (tries) std::this_thread::sleep_for(milliseconds(20));
        const std::string report = g_cluster->hang_report({});
        routers = 0;
        for (size_t at = 0; (at = report.find("fabric router on port", at)) != std::string::npos; ++at) ++routers;
    }
    assert_int_equal(routers, fabric->builder().routers().size());
    fabric->stop();
}

// Chip 1's router facing chip 0 is stopped, so chip 0's packets for chip 1
// get no credits: the op times out, and its hang report shows the head packet
// where it stands; the router posts a timeout event once its timeout passes;
// the cluster stays usable.
void test_a_stuck_packet_is_reported_where_it_stands(void**) {
    FabricSpec o;
    o.slots = 2;
    o.router_timeout_ms = 200;
    auto* fabric = &start_fabric(o);
    const auto& plans = fabric->builder().routers();
    const auto& stopped = plans.at(fabric->builder().router_index(1, FabricDirection::kBackward));
    resident::stop(*g_cluster, stopped.chip, stopped.core, milliseconds(5000));
    Traffic traffic;
    for (uint32_t i = 0; i < 6; ++i) {
        auto j = job_to(*fabric, 0, 1, abi::kFabricAtomicInc);
        j.sem = dram(kSems);
        j.inc = 1;
        traffic.add(0, j);
    }
    std::string error;
    try {
        traffic.run(*fabric, milliseconds(2000));
    } catch (const TimeoutError& e) {
        error = e.what();
    }
    if (!contains(error, "fabric router on port E") || !contains(error, "worker lane 0: 2/2 slots used") ||
        !contains(error, "head packet #2 from chip 0 (mesh 0) to chip 1: atomic inc"))
        fail_msg("the hang report does not show the stuck packet:\n%s", error.c_str());
    const auto& sender = plans.at(fabric->builder().router_index(0, FabricDirection::kForward));
    assert_true(g_cluster->chip(0).read32(sender.config.status + offsetof(abi::FabricRouterStatus, timeouts)) >= 1);
    fabric->stop();
    // Usable again: a fresh fabric carries the same traffic.
    fabric = &start_fabric();
    for (uint32_t c = 0; c < g_cluster->size(); ++c) g_cluster->chip(c).write32(dram(kSems), 0);
    traffic.run(*fabric);
    assert_true(word_reaches(1, dram(kSems), 6));
    fabric->stop();
}

// 1000 packets of random sizes between random chips, from four workers a
// chip, each to a place of its own: every one arrives exactly once with
// every byte right. On ring8 the traffic wraps round the ring both ways,
// across the dateline.
void test_random_packets_arrive_exactly_once(void**) {
    auto* fabric = &start_fabric();
    const uint32_t n = g_cluster->size();
    constexpr uint32_t kPackets = 1000, kMax = 6000, kWorkers = 4;
    constexpr uint32_t kLanding = 0x1000000, kCounts = 0x800000;
    prepare(kMax);
    std::mt19937 random(2026);
    struct Sent {
        uint32_t from, to, bytes;
    };
    std::vector<Sent> sent;
    for (uint32_t c = 0; c < n; ++c) {
        std::vector<uint8_t> zero(4 * kPackets, 0);
        g_cluster->chip(c).write(dram(kCounts), zero.data(), zero.size());
    }
    uint32_t i = 0;
    while (i < kPackets) {
        Traffic traffic(kWorkers);
        for (; i < kPackets; ++i) {
            const uint32_t from = random() % n, to = (from + 1 + random() % (n - 1)) % n, w = random() % kWorkers;
            if (traffic.full(from, w)) break;
            const uint32_t bytes = 1 + random() % kMax;
            auto j = job_to(*fabric, from, to, abi::kFabricWriteInc);
            j.src = dram(kSrc + to * kBlock);
            j.dst = dram(kLanding + i * 8192);
            j.bytes = bytes;
            j.sem = dram(kCounts + 4 * i);
            j.inc = 1;
            traffic.add(from, j, w);
            sent.push_back({from, to, bytes});
        }
        traffic.run(*fabric);
    }
    for (uint32_t k = 0; k < kPackets; ++k) {
        const Sent& s = sent[k];
        if (!word_reaches(s.to, dram(kCounts + 4 * k), 1))
            fail_msg("packet %u (%u -> %u) never arrived", k, s.from, s.to);
    }
    std::this_thread::sleep_for(milliseconds(20));  // a duplicate would have landed by now
    for (uint32_t k = 0; k < kPackets; ++k) {
        const Sent& s = sent[k];
        for (uint32_t c = 0; c < n; ++c) {
            const uint32_t got = g_cluster->chip(c).read32(dram(kCounts + 4 * k));
            if (got != (c == s.to ? 1u : 0u))
                fail_msg("packet %u (%u -> %u) counted %u times on chip %u", k, s.from, s.to, got, c);
        }
        std::vector<uint8_t> got(s.bytes);
        g_cluster->chip(s.to).read(dram(kLanding + k * 8192), got.data(), s.bytes);
        for (uint32_t b = 0; b < s.bytes; ++b)
            if (got[b] != pattern(s.from, s.to, b)) fail_msg("packet %u byte %u differs", k, b);
    }
    fabric->stop();
}

// Ring8 full of traffic wrapping both ways: every chip streams 48 packets of
// 16 KiB to the chips three hops away on either side at once. It completes
// (the dateline VC keeps the ring from deadlocking; the CMocka model shows
// the same traffic deadlock without it), and the packets that crossed the
// dateline travelled on VC 1; under bubble flow control every packet stays
// on VC 0. `to(f, w)`: worker w of chip f's destination (another traffic).
void full_both_ways(bool bubble, uint32_t packets = 48, std::function<uint32_t(uint32_t, uint32_t)> to = {}) {
    g_fabric.reset();
    FabricSpec o;
    o.packet_bytes = 16384;
    o.slots = 4;
    o.bubble = bubble;
    auto* fabric = &start_fabric(o);
    const uint32_t n = g_cluster->size();
    if (!to) to = [n](uint32_t f, uint32_t w) { return w == 0 ? (f + 3) % n : (f + n - 3) % n; };
    const uint32_t kPackets = packets, kBytes = 16384;
    prepare(kBytes);
    Traffic traffic(2);
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t w = 0; w < 2; ++w) {
            const uint32_t t = to(f, w);
            for (uint32_t k = 0; k < kPackets; ++k) {
                auto j = job_to(*fabric, f, t, abi::kFabricWriteInc);
                j.src = dram(kSrc + t * kBlock);
                j.dst = dram(kDst + (2 * f + w) * kBlock);
                j.bytes = kBytes;
                j.sem = dram(kSems + 4 * (2 * f + w));
                j.inc = 1;
                traffic.add(f, j, w);
            }
        }
    traffic.run(*fabric, milliseconds(60000));
    uint32_t vc1 = 0;
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t w = 0; w < 2; ++w) {
            const uint32_t t = to(f, w);
            if (!word_reaches(t, dram(kSems + 4 * (2 * f + w)), kPackets))
                fail_msg("chip %u got %u of chip %u's packets", t,
                         g_cluster->chip(t).read32(dram(kSems + 4 * (2 * f + w))), f);
            std::vector<uint8_t> got(kBytes);
            g_cluster->chip(t).read(dram(kDst + (2 * f + w) * kBlock), got.data(), kBytes);
            for (uint32_t b = 0; b < kBytes; ++b)
                if (got[b] != pattern(f, t, b)) fail_msg("chip %u -> %u byte %u differs", f, t, b);
        }
    for (const auto& r : fabric->builder().routers())
        vc1 += g_cluster->chip(r.chip).read32(r.config.status + offsetof(abi::FabricRouterStatus, receivers) +
                                              sizeof(abi::FabricChannelStatus) +
                                              offsetof(abi::FabricChannelStatus, done));
    if (bubble) assert_int_equal(vc1, 0);
    else
        assert_true(vc1 > 0);
    fabric->stop();
}
void test_a_ring_full_both_ways_completes(void**) { full_both_ways(false); }
void test_a_ring_full_both_ways_completes_under_bubble_flow_control(void**) { full_both_ways(true); }

// A torus under bubble flow control: every chip streams to the chips two
// columns and one row away either way, so packets wrap and turn from rows
// into columns (entering a column's ring needs its next receiver's bubble
// too). Every packet arrives right, all on VC 0.
void test_a_torus_full_of_turns_completes_under_bubble_flow_control(void**) {
    const Mesh mesh = g_cluster->topology().meshes()[0];
    const uint32_t w = mesh.width, h = mesh.height;
    full_both_ways(true, 16, [w, h](uint32_t f, uint32_t worker) {
        const uint32_t x = f % w, y = f / w;
        return (x + 2) % w + (worker == 0 ? (y + 1) % h : (y + h - 1) % h) * w;
    });
}

// 2D multicast along a row or a column span of mesh3x3 (chip = x + 3y):
// exactly the chips of the span get it, once.
void test_2d_multicast_reaches_exactly_its_span(void**) {
    auto* fabric = &start_fabric();
    multicast(*fabric, 3, FabricDirection::kEast, 1, 2, {4, 5});   // row 1 from (0, 1)
    multicast(*fabric, 1, FabricDirection::kSouth, 1, 2, {4, 7});  // column 1 from (1, 0)
    multicast(*fabric, 8, FabricDirection::kWest, 2, 1, {6});      // two cables on, one chip
    fabric->stop();
}

// The TT-Fabric spec's cyclic pattern (6.1) on the mesh's corners: D1 -> D4,
// D2 -> D3, D3 -> D2, D4 -> D1, each streaming 48 packets through channels
// two slots deep. Routed X first, then Y, it completes.
void test_the_specs_cyclic_pattern_completes(void**) {
    FabricSpec o;
    o.slots = 2;
    auto* fabric = &start_fabric(o);
    constexpr uint32_t kBytes = 4000, kPackets = test_abi::kFabricTrafficMaxJobs;
    prepare(kBytes);
    const uint32_t d1 = 0, d2 = 2, d3 = 6, d4 = 8;
    const std::pair<uint32_t, uint32_t> flows[] = {{d1, d4}, {d2, d3}, {d3, d2}, {d4, d1}};
    Traffic traffic;
    for (auto [f, t] : flows)
        for (uint32_t i = 0; i < kPackets; ++i) {
            traffic.add(f, block_write(*fabric, f, t, kBytes));
        }
    traffic.run(*fabric);
    for (auto [f, t] : flows) {
        if (!word_reaches(t, dram(kSems + 4 * f), kPackets))
            fail_msg("chip %u got %u of chip %u's %u packets", t, g_cluster->chip(t).read32(dram(kSems + 4 * f)), f,
                     kPackets);
        std::vector<uint8_t> got(kBytes);
        g_cluster->chip(t).read(dram(kDst + f * kBlock), got.data(), kBytes);
        for (uint32_t b = 0; b < kBytes; ++b)
            if (got[b] != pattern(f, t, b)) fail_msg("chip %u -> %u byte %u differs", f, t, b);
    }
    fabric->stop();
}

// Packets a fabric's routers delivered and forwarded, all of them together.
uint64_t router_traffic(const transport::Fabric& f) {
    uint64_t n = 0;
    for (const auto& r : f.builder().routers()) {
        const uint64_t st = r.config.status;
        n += g_cluster->chip(r.chip).read32(st + offsetof(abi::FabricRouterStatus, delivered));
        n += g_cluster->chip(r.chip).read32(st + offsetof(abi::FabricRouterStatus, forwarded));
    }
    return n;
}

// Routing planes (the spec's 2.2.2): on ring8x2 each pair of neighbours has
// a cable in each plane; each plane is a fabric of its own, on its own ports'
// ERISC cores, both running at once. Traffic sent on one plane arrives, and
// the other plane's routers never see a packet of it.
void test_planes_are_independent_fabrics(void**) {
    g_fabric.reset();
    std::unique_ptr<transport::Fabric> planes[2];
    for (uint32_t p = 0; p < 2; ++p)
        planes[p] =
            transport::Fabric::start(*g_cluster, transport::fabric_over(*g_cluster, true, {}, p), milliseconds(10000));
    for (const auto& r : planes[0]->builder().routers())
        for (const auto& q : planes[1]->builder().routers())
            if (r.chip == q.chip) assert_int_not_equal(r.core, q.core);
    constexpr uint32_t kBytes = 6000;
    const uint32_t n = g_cluster->size();
    for (uint32_t p : {1u, 0u}) {
        prepare(kBytes);
        const uint64_t other_before = router_traffic(*planes[1 - p]);
        Traffic traffic;
        for (uint32_t f = 0; f < n; ++f)
            for (uint32_t t : {(f + 1) % n, (f + 3) % n, (f + n - 2) % n}) {
                auto w = job_to(*planes[p], f, t, abi::kFabricWriteInc);
                w.src = dram(kSrc + t * kBlock);
                w.dst = dram(kDst + f * kBlock);
                w.bytes = kBytes;
                w.sem = dram(kSems + 4 * f);
                w.inc = 1;
                traffic.add(f, w);
            }
        traffic.run(*planes[p]);
        for (uint32_t f = 0; f < n; ++f)
            for (uint32_t t : {(f + 1) % n, (f + 3) % n, (f + n - 2) % n}) {
                if (!word_reaches(t, dram(kSems + 4 * f), 1))
                    fail_msg("plane %u: chip %u -> %u never arrived", p, f, t);
                std::vector<uint8_t> got(kBytes);
                g_cluster->chip(t).read(dram(kDst + f * kBlock), got.data(), kBytes);
                for (uint32_t b = 0; b < kBytes; ++b)
                    if (got[b] != pattern(f, t, b)) fail_msg("plane %u: chip %u -> %u byte %u differs", p, f, t, b);
            }
        assert_true(router_traffic(*planes[p]) > 0);
        assert_int_equal(router_traffic(*planes[1 - p]), other_before);
    }
    planes[1]->stop();
    planes[0]->stop();
}

void all_reduce_is_right(const char* transport);

// Firmware events of `kind` the event log holds for `chip` (and `port`, if
// named), from the whole file: a failing op's timeouts soon push them out of
// the recent ones.
std::vector<nlohmann::json> events_at(const char* kind, uint32_t chip, const char* port = nullptr) {
    std::ifstream log(g_cluster->events()["log"].get<std::string>());
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(log, line);) {
        const nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
        if (!e.is_discarded() && e.value("kind", "") == kind && e.value("chip", -1) == int(chip) &&
            (!port || e.value("port_name", "") == port))
            out.push_back(e);
    }
    return out;
}

// A runner over the fabric, its fabric started over every cable by a small op.
// The event log gains a `kind` event at (chip, port) beyond the `before` it
// had, within 2 s (the bridge drains the chips' events as it goes).
void expect_more_events(const char* kind, uint32_t chip, const char* port, size_t before) {
    for (int i = 0; i < 100; ++i) {
        if (events_at(kind, chip, port).size() > before) return;
        std::this_thread::sleep_for(milliseconds(20));
    }
    fail_msg("no new %s event at chip %u port %s", kind, chip, port);
}

void warm_up(ccl::CollectiveRunner& run) {
    ccl::OpRequest warm;
    warm.op = ccl::Collective::kAllReduce;
    warm.bytes = 4096;
    ccl::run_case(run, *g_cluster, warm, 2);
}
// A ring all-reduce of `bytes`, the op most of these tests run.
ccl::OpRequest ring_all_reduce(uint64_t bytes) {
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.algo = "ring";
    r.bytes = bytes;
    return r;
}
ccl::RunnerOptions over_fabric() {
    ccl::RunnerOptions o;
    o.transport = "fabric";
    return o;
}

// Payload bytes each plane's cables carried so far, both ways (ring8x2).
std::array<uint64_t, 2> bytes_by_plane() {
    std::array<uint64_t, 2> by{};
    const nlohmann::json counters = g_cluster->counters();  // a temporary would end before the loop
    for (const nlohmann::json& l : counters["links"]) {
        const uint32_t plane = g_cluster->board().ports.at(l["a"]["port"].get<uint32_t>()).plane;
        by.at(plane) += l["a_to_b"]["bytes"].get<uint64_t>() + l["b_to_a"]["bytes"].get<uint64_t>();
    }
    return by;
}

// The collectives over the fabric of every plane (ring8x2: a fabric on each):
// a hop's pieces go over both planes' cables, about half on each; with a
// plane-1 cable pulled, the next op runs right on plane 0 alone, and with it
// back, on both again.
void test_collectives_stripe_over_both_planes(void**) {
    g_fabric.reset();
    const ccl::OpRequest r = ring_all_reduce(4 << 20);
    ccl::CollectiveRunner run(*g_cluster, over_fabric());
    const std::array<uint64_t, 2> before = bytes_by_plane();
    ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 11);
    assert_int_equal(res.check.wrong, 0);
    assert_int_equal(res.timing.planes, 2);
    const std::array<uint64_t, 2> after = bytes_by_plane();
    const double plane0 = double(after[0] - before[0]), plane1 = double(after[1] - before[1]);
    fprintf(stderr, "plane 0 carried %.0f bytes, plane 1 %.0f\n", plane0, plane1);
    assert_true(plane1 > 0.3 * (plane0 + plane1) && plane0 > 0.3 * (plane0 + plane1));

    const uint32_t east1 = static_cast<uint32_t>(g_cluster->board().port_for(abi::kFabricEast, 1));
    g_cluster->set_link(3, east1, false);
    res = ccl::run_case(run, *g_cluster, r, 12);
    assert_int_equal(res.check.wrong, 0);
    assert_int_equal(res.timing.planes, 1);
    g_cluster->set_link(3, east1, true);
    res = ccl::run_case(run, *g_cluster, r, 13);
    assert_int_equal(res.check.wrong, 0);
    assert_int_equal(res.timing.planes, 2);
}

// The two routers (not relays) of the cable from chip `chip` east to the
// next chip west, as the routers publish them.
struct CableEnds {
    uint32_t chip;
    uint32_t peer = chip + 1;  // the chip its east cable leads to
    std::vector<transport::RouterView> routers() const {
        std::vector<transport::RouterView> v;
        for (const transport::RouterView& r : transport::read_routers(*g_cluster))
            if (!r.relay && ((r.chip == chip && r.way == "E") || (r.chip == peer && r.way == "W"))) v.push_back(r);
        return v;
    }
    bool both(uint32_t state) const {
        size_t n = 0;
        for (const transport::RouterView& r : routers()) n += r.status.state == state;
        return n == 2;
    }
    uint64_t bytes_sent() const {
        uint64_t b = 0;
        for (const transport::RouterView& r : routers()) b += r.status.bytes_sent;
        return b;
    }
};

// Ethernet fallback, live (ring8x2's 1D fabric, mesh2x2-rv32's 2D one): a
// plane-0 fabric with relays on plane 1. While
// every chip streams to every other, chip 0's plane-0 east cable is pulled:
// traffic goes on round it through the relays; the cable comes back under
// the stream and its routers return to it. Every byte arrives and every
// increment counts once, the cable carried traffic again after its return,
// and the events name the cable and both routers, rerouted with their
// fallback port and rejoined. The cluster runs ops as before.
void test_a_pulled_cable_moves_onto_its_fallback_live(void**) {
    g_fabric.reset();
    FabricSpec o;
    o.fallback = true;
    auto* fabric = &start_fabric(o);
    constexpr uint32_t kBig = 256 * 1024, kIncsPerPair = 8;
    constexpr uint32_t kBigSrc = 0x1000000, kBigDst = 0x2000000;
    const uint32_t n = g_cluster->size();
    std::vector<uint8_t> src(kBig);
    for (uint32_t f = 0; f < n; ++f) {
        for (uint32_t t = 0; t < n; ++t) {
            for (uint32_t i = 0; i < kBig; ++i) src[i] = pattern(f, t, i);
            g_cluster->chip(f).write(dram(kBigSrc + t * kBig), src.data(), kBig);
        }
        g_cluster->clear(f, dram(kBigDst), size_t(n) * kBig);
        g_cluster->clear(f, dram(kSems), 0x400);
    }
    Traffic traffic(2);
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t t = 0; t < n; ++t) {
            if (f == t) continue;
            auto w = job_to(*fabric, f, t, abi::kFabricWriteInc);
            w.src = dram(kBigSrc + t * kBig);
            w.dst = dram(kBigDst + f * kBig);
            w.bytes = kBig;
            w.sem = dram(kSems + 4 * f);
            w.inc = 1;
            traffic.add(f, w, t % 2);
            for (uint32_t k = 0; k < kIncsPerPair; ++k) {
                auto inc = job_to(*fabric, f, t, abi::kFabricAtomicInc);
                inc.sem = dram(kIncs + 4 * f);
                inc.inc = 1;
                traffic.add(f, inc, t % 2);
            }
        }
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    // Crawling, the cable still holds its share for the relays to carry, and
    // the relays still hold it when the cable comes back, however fast a
    // loaded host runs them.
    const uint32_t relay_port = static_cast<uint32_t>(port_named(g_cluster->board(), "E1"));
    slow_to_a_crawl(0, east);
    slow_to_a_crawl(0, relay_port);
    const size_t rerouted_before = events_at("rerouted", 0, "E").size();
    const size_t rejoined_before = events_at("rejoined", 0, "E").size();
    transport::L1Allocator l1(g_cluster->board());
    std::vector<Launch> launches = traffic.launches(*fabric, l1);
    const auto running = g_cluster->launch_all(launches);
    // Pulled once the stream is under way (a fifth of chip 1's packets in), well before its end.
    const auto delivered = [&] {
        uint64_t n = 0;
        for (const transport::RouterView& r : transport::read_routers(*g_cluster))
            n += r.chip == 1 ? r.status.delivered : 0;
        return n;
    };
    const uint64_t packets_to_chip_1 = (n - 1) * (kBig / fabric->builder().spec().payload_bytes() + kIncsPerPair);
    for (int i = 0; i < 2000 && delivered() < packets_to_chip_1 / 5; ++i) std::this_thread::sleep_for(milliseconds(1));
    g_cluster->set_link(0, east, false);
    // Both ends move onto their relays; the control plane notes it (tend, as
    // an op's wait plays it). Then the cable comes back under the stream.
    const CableEnds cable{0};
    uint64_t relayed = 0, resent = 0;
    const auto on_relays = [&] {  // both moved, and the relays carry their traffic
        relayed = resent = 0;
        for (const transport::RouterView& r : transport::read_routers(*g_cluster)) {
            if (r.relay) relayed += r.status.forwarded;
            if (r.status.state == abi::kFabricRouterRerouted) resent += r.status.resent;
        }
        return cable.both(abi::kFabricRouterRerouted) && relayed > 0;
    };
    for (int i = 0; i < 1000 && !on_relays(); ++i) {
        assert_string_equal(fabric->tend().c_str(), "");
        std::this_thread::sleep_for(milliseconds(5));
    }
    assert_true(on_relays());
    if (g_cluster->chip(1).read32(dram(kSems)) != 0)
        fail_msg("chip 0's stream to chip 1 ended before the cable came back");
    const uint64_t before_return = cable.bytes_sent();
    g_cluster->set_fault(0, east, kUnfaulted);
    g_cluster->set_link(0, east, true);
    assert_string_equal(fabric->tend().c_str(), "");  // the control plane sees it back: both routers told
    g_cluster->set_fault(0, relay_port, kUnfaulted);
    g_cluster->wait_all(running, milliseconds(60000), [&] { return fabric->tend(); });
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t f = 0; f < n; ++f) {
            if (f == t) continue;
            if (!word_reaches(t, dram(kSems + 4 * f), 1)) fail_msg("chip %u -> %u never completed", f, t);
            if (!word_reaches(t, dram(kIncs + 4 * f), kIncsPerPair))
                fail_msg("chip %u -> %u: %u increments, not %u", f, t, g_cluster->chip(t).read32(dram(kIncs + 4 * f)),
                         kIncsPerPair);
            std::vector<uint8_t> got(kBig);
            g_cluster->chip(t).read(dram(kBigDst + f * kBig), got.data(), kBig);
            for (uint32_t i = 0; i < kBig; ++i)
                if (got[i] != pattern(f, t, i)) fail_msg("chip %u -> %u: byte %u differs", f, t, i);
        }
    const uint64_t after_return = cable.bytes_sent() - before_return;
    fprintf(stderr, "after the pull: %llu packets relayed, %llu sent again; back: %llu bytes over the cable\n",
            static_cast<unsigned long long>(relayed), static_cast<unsigned long long>(resent),
            static_cast<unsigned long long>(after_return));
    assert_true(cable.both(abi::kFabricRouterRunning));  // off their relays, on the cable again
    assert_true(after_return > 0);
    std::vector<nlohmann::json> events;
    for (int i = 0; i < 100 && (events.size() <= rerouted_before || events_at("rejoined", 1, "W").empty()); ++i) {
        events = events_at("rerouted", 0, "E");
        std::this_thread::sleep_for(milliseconds(20));
    }
    assert_true(events.size() > rerouted_before);
    assert_string_equal(events.back().value("fallback_port_name", "").c_str(), "E1");
    assert_true(events_at("rerouted", 1, "W").size() > 0);
    assert_true(events_at("rejoined", 0, "E").size() > rejoined_before);
    assert_true(events_at("rejoined", 1, "W").size() > 0);
    fabric->stop();
    g_fabric.reset();
    all_reduce_is_right("fabric");
}

// The galaxy's fabric downshifted (the spec's section 3): a 2D mesh over the
// same 32 chips (wrap cables unused), then a 1D ring over the snake order.
void test_galaxy_as_a_mesh(void**) {
    g_wrap = false;
    test_every_chip_to_every_other_with_each_command(nullptr);
    g_wrap = true;
}
void test_galaxy_as_a_ring(void**) {
    g_2d = false;
    g_ring = true;
    test_every_chip_to_every_other_with_each_command(nullptr);
    g_2d = true;
    g_ring = false;
}

// The galaxy downshifted to 8 row rings and 4 column rings (12 fabrics at
// once): every chip writes to every other chip of its row through its row's
// fabric and of its column through its column's, every byte checked.
void test_galaxy_as_row_and_column_rings(void**) {
    g_fabric.reset();
    std::vector<std::unique_ptr<transport::Fabric>> fabrics;
    const std::vector<transport::FabricBuilder> plans = transport::rows_and_columns(*g_cluster, true);
    for (const auto& plan : plans) fabrics.push_back(transport::Fabric::start(*g_cluster, plan, milliseconds(10000)));
    const ClusterTopology topo = g_cluster->topology();
    const uint32_t w = topo.meshes()[0].width, h = topo.meshes()[0].height, n = w * h;
    constexpr uint32_t kBytes = 3000;
    prepare(kBytes);
    transport::L1Allocator l1(g_cluster->board());
    std::vector<test_abi::FabricTrafficArgs> args(n);
    std::vector<Launch> launches;
    std::vector<std::pair<uint32_t, uint32_t>> sent;
    for (uint32_t c = 0; c < n; ++c) {
        const ChipCoord at = topo.coord(c);
        test_abi::FabricTrafficArgs& a = args[c] = test_abi::FabricTrafficArgs{};
        // Connections 0, 1: the row's fabric forward, backward; 2, 3: the column's.
        const transport::Fabric* mine[2] = {fabrics[at.y].get(), fabrics[h + at.x].get()};
        for (uint32_t k = 0; k < 2; ++k)
            for (FabricDirection d : {FabricDirection::kForward, FabricDirection::kBackward})
                a.connection[2 * k + way_1d(d)] = mine[k]->builder().connect(*g_cluster, l1, c, d, 0, worker_core(0));
        for (uint32_t t = 0; t < n; ++t) {
            const ChipCoord to = topo.coord(t);
            if (t == c || (to.y != at.y && to.x != at.x)) continue;
            const uint32_t k = to.y == at.y ? 0 : 1;
            const transport::FabricRoute r = mine[k]->builder().route(c, t);
            test_abi::FabricTrafficJob& j = a.jobs[a.job_count++];
            j.command = abi::kFabricWriteInc;
            j.hops = static_cast<uint8_t>(r.hops);
            j.count = 1;
            j.ttl = abi::kFabricDefaultTtl;
            j.direction = static_cast<uint8_t>(2 * k + way_1d(r.direction));
            j.dst_chip = static_cast<uint16_t>(t);
            j.src = dram(kSrc + t * kBlock);
            j.dst = dram(kDst + c * kBlock);
            j.bytes = kBytes;
            j.sem = dram(kSems + 4 * c);
            j.inc = 1;
            sent.push_back({c, t});
        }
        launches.push_back(
            {c, worker_core(0), &kernel_named(g_cluster->board(), "fabric_traffic"), KernelArgWords::of(a)});
    }
    g_cluster->run(launches, milliseconds(60000));
    for (auto [f, t] : sent) {
        if (!word_reaches(t, dram(kSems + 4 * f), 1)) fail_msg("chip %u -> %u never arrived", f, t);
        std::vector<uint8_t> got(kBytes);
        g_cluster->chip(t).read(dram(kDst + f * kBlock), got.data(), kBytes);
        for (uint32_t b = 0; b < kBytes; ++b)
            if (got[b] != pattern(f, t, b)) fail_msg("chip %u -> %u byte %u differs", f, t, b);
    }
    for (auto it = fabrics.rbegin(); it != fabrics.rend(); ++it) (*it)->stop();
}

// All-reduce and all-gather on the galaxy, each algorithm that fits, over
// the EDM and over the 2D fabric: every element checked against the host.
// (auto picks one of the two: test_ccl checks what it picks.)
void test_galaxy_all_reduce_and_all_gather(void**) {
    g_fabric.reset();
    std::vector<std::string> failures;
    for (const char* transport : {"edm", "fabric"}) {
        ccl::RunnerOptions o;
        o.transport = transport;
        ccl::CollectiveRunner run(*g_cluster, o);
        for (ccl::Collective op : {ccl::Collective::kAllReduce, ccl::Collective::kAllGather})
            for (const char* algo : {"2d", "ring"}) {
                ccl::OpRequest r;
                r.op = op;
                r.algo = algo;
                r.bytes = 32 * 3001 * 4;  // no rank count divides it evenly into blocks of pages
                try {
                    const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 7);
                    if (res.check.wrong)
                        failures.push_back(std::string(transport) + " " + ccl::collective_name(op) + " " + algo + ": " +
                                           std::to_string(res.check.wrong) + " wrong");
                } catch (const std::exception& e) {
                    failures.push_back(std::string(transport) + " " + ccl::collective_name(op) + " " + algo + ": " +
                                       e.what());
                }
            }
    }
    for (const auto& f : failures) fprintf(stderr, "FAIL %s\n", f.c_str());
    assert_int_equal(failures.size(), 0);
}

// One all-reduce over `transport` on a fresh runner, checked against the host.
void all_reduce_is_right(const char* transport) {
    ccl::RunnerOptions o;
    o.transport = transport;
    ccl::CollectiveRunner run(*g_cluster, o);
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.bytes = 256 * 1024;
    const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 11);
    if (res.check.wrong) fail_msg("%s all-reduce after the fault: %zu wrong", transport, size_t(res.check.wrong));
}

// An op that fails under `meanwhile` (a fault injected while it runs): its
// error and how long it took to fail from the fault (not from before its
// inputs were written: 4 MiB on each of 36 chips took seconds on a loaded host).
// A fault fails the op "fast": before its deadline, which is at least 20 s
// of the cluster's own time (CollectiveRunner::deadline) and so at least
// that of wall time. A tighter wall-clock bound fails on a loaded host: an
// inter-mesh failure here took 10.8 s beside the rest of the suite.
constexpr double kLeastDeadlineSeconds = 20;

std::pair<std::string, double> failure_of(ccl::CollectiveRunner& run, const std::function<void()>& meanwhile) {
    const ccl::OpRequest r = ring_all_reduce(4 << 20);
    auto faulted = steady_clock::now();
    double faulting = 0;  // how long the fault took to inject
    const auto since_fault = [&] { return duration<double>(steady_clock::now() - faulted).count(); };
    ccl::CaseResult res;
    try {
        res = ccl::run_case(run, *g_cluster, r, 3, [&] {
            const auto before = steady_clock::now();
            meanwhile();
            faulted = steady_clock::now();
            faulting = duration<double>(faulted - before).count();
        });
    } catch (const std::exception& x) {
        return {x.what(), since_fault()};
    }
    // Not a failure: say what ran, so that a test expecting one names it.
    char ran[200];
    snprintf(ran, sizeof ran,
             "(no error: the op ran %.1f s over %u plane(s) with %zu wrong bytes; the fault took %.1f s)",
             res.timing.seconds, res.timing.planes, size_t(res.check.wrong), faulting);
    return {ran, since_fault()};
}

// A plane-1 cable pulled under an op striped over both planes (ring8x2):
// plane 1's ring sends its packets back the other way round, and the op is
// right; the next op, with the cable still out, runs right on plane 0 alone
// (a ring without a cable is no ring); back in, on both again.
void test_a_plane_that_loses_a_cable_under_an_op_is_left_out(void**) {
    g_fabric.reset();
    const uint32_t east1 = static_cast<uint32_t>(g_cluster->board().port_for(abi::kFabricEast, 1));
    ccl::CollectiveRunner run(*g_cluster, over_fabric());
    const ccl::OpRequest r = ring_all_reduce(1 << 20);
    slow_to_a_crawl(3, east1);
    ccl::CaseResult res =
        ccl::run_case(run, *g_cluster, ring_all_reduce(4 << 20), 3, [&] { g_cluster->set_link(3, east1, false); });
    if (res.check.wrong) fail_msg("plane 1 lost a cable under the op: %zu wrong", size_t(res.check.wrong));
    assert_int_equal(res.timing.planes, 2);
    g_cluster->set_fault(3, east1, kStillPulled);
    res = ccl::run_case(run, *g_cluster, r, 21);
    assert_int_equal(res.check.wrong, 0);
    assert_int_equal(res.timing.planes, 1);
    g_cluster->set_link(3, east1, true);
    res = ccl::run_case(run, *g_cluster, r, 22);
    assert_int_equal(res.check.wrong, 0);
    assert_int_equal(res.timing.planes, 2);
}

// A cable of a ring pulled under a fabric op: its two routers report the
// link down (an event, not a panic), settle what crossed it, and send the
// rest, and every later packet for it, back the other way round on VC 2,
// the ring's escape class; the op is right. Once the cable is back, EDM and
// fabric ops are right again.
void test_a_pulled_ring_cable_sends_its_packets_back_round_live(void**) {
    const size_t downs_before = events_at("link_down", 0, "E").size();
    const size_t rerouted_before = events_at("rerouted", 0, "E").size();
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        warm_up(run);
        slow_to_a_crawl(0, east);  // else the op could end before the pull
        const ccl::CaseResult res =
            ccl::run_case(run, *g_cluster, ring_all_reduce(4 << 20), 3, [&] { g_cluster->set_link(0, east, false); });
        g_cluster->set_fault(0, east, kStillPulled);
        if (res.check.wrong) fail_msg("ring8 lost a cable under the op: %zu wrong", size_t(res.check.wrong));
        size_t rerouted = 0, sent_back = 0;
        for (const transport::RouterView& v : transport::read_routers(*g_cluster)) {
            rerouted += v.status.state == abi::kFabricRouterRerouted;
            sent_back += v.status.receivers[2].done;
        }
        assert_int_equal(rerouted, 2);  // both ends of the cable
        assert_true(sent_back > 0);
    }
    g_cluster->set_link(0, east, true);
    assert_true(events_at("link_down", 0, "E").size() > downs_before);
    expect_more_events("rerouted", 0, "E", rerouted_before);
    all_reduce_is_right("edm");
    all_reduce_is_right("fabric");
}

// A multicast all-gather with a ring cable pulled under it: the cable's two
// routers send the multicasts they hold for it, and every later one, back
// the other way round from the far end of their runs, and the op is right;
// only those two routers are rerouted.
void test_a_multicast_for_a_dead_ring_cable_goes_back_round_live(void**) {
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    constexpr uint32_t kChip = 2;  // another cable than the unicast test's, whose events are still fresh
    const size_t before = events_at("rerouted", kChip, "E").size();
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        warm_up(run);
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllGather;
        r.algo = "multicast";
        r.bytes = 4 << 20;
        slow_to_a_crawl(kChip, east);
        const ccl::CaseResult res =
            ccl::run_case(run, *g_cluster, r, 3, [&] { g_cluster->set_link(kChip, east, false); });
        g_cluster->set_fault(kChip, east, kUnfaulted);  // still pulled
        if (res.check.wrong) fail_msg("multicast all-gather with a cable pulled: %zu wrong", size_t(res.check.wrong));
        size_t rerouted = 0;
        for (const transport::RouterView& v : transport::read_routers(*g_cluster))
            if (v.status.state == abi::kFabricRouterRerouted) {
                ++rerouted;
                if (v.chip != kChip && v.chip != kChip + 1) fail_msg("chip %u's router was rerouted", v.chip);
            }
        assert_int_equal(rerouted, 2);  // both ends of the cable
    }
    g_cluster->set_link(kChip, east, true);
    expect_more_events("rerouted", kChip, "E", before);
    all_reduce_is_right("fabric");
}

// A line has no other way round: a cable pulled under a fabric op cuts it,
// and the op fails within seconds naming the chips on each side, with no
// hang report (the cause is known); no router stays resident, and with the
// cable back ops are right again.
void test_a_pulled_line_cable_fails_the_op_naming_the_cut(void**) {
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        warm_up(run);
        slow_to_a_crawl(1, east);
        const auto [e, seconds] = failure_of(run, [&] { g_cluster->set_link(1, east, false); });
        g_cluster->set_link(1, east, true);
        g_cluster->set_fault(1, east, kUnfaulted);
        fprintf(stderr, "failed in %.1f s: %s\n", seconds, e.substr(0, e.find('\n')).c_str());
        if (!contains(e, "the line is cut: chips 0, 1 cannot reach chips 2, 3")) fail_msg("%s", e.c_str());
        assert_false(contains(e, "hang report"));
        assert_true(seconds < kLeastDeadlineSeconds);
        assert_int_equal(resident::list(*g_cluster).size(), 0);
    }
    all_reduce_is_right("edm");
    all_reduce_is_right("fabric");
}

// A cable pulled under a running op on one plane of a 2D fabric: the op's
// wait finds it, the control plane's new tables go into the routers (on a
// mesh only the cable's two, as detour tables), the cable's routers settle
// what crossed and route everything else round it;
// the op completes right, both routers report rerouted. On a mesh a second
// cable goes at the same moment: its move's check walks the first's
// detours, and its routers take detours of their own. With the cables back,
// the next ops are right too.
void test_a_pulled_cable_is_routed_round_live(void**) {
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    const uint32_t south = static_cast<uint32_t>(port_named(g_cluster->board(), "S"));
    // Row 1, column 1. On a mesh its detour runs down, across and up, on the
    // escape VC: on VC 0, with the old routes still in use, it could close a
    // cycle of turns and the move was refused. On a torus (row 2) the next
    // cable of its row goes too: either's new routes mixed with the old on
    // the datelines' VCs could close a cycle, and the second move was
    // refused, but for the escape VC, VC 2.
    const Mesh mesh = g_cluster->topology().meshes()[0];  // a copy: topology() is a snapshot
    const uint32_t chip = (mesh.wraps() ? 2 : 1) * mesh.width + 1;
    const uint32_t escape = mesh.wraps() ? 2 : 1;
    std::vector<std::pair<uint32_t, uint32_t>> pulled = {{chip, east}};
    // Chip 0 keeps its east cable: nothing is cut off.
    pulled.push_back(mesh.wraps() ? std::pair{chip + 1, east} : std::pair{0u, south});
    const size_t before = events_at("rerouted", chip, "E").size();
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        warm_up(run);
        ccl::OpRequest r = ring_all_reduce(4 << 20);
        for (const auto& [c, port] : pulled) slow_to_a_crawl(c, port);
        ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 3, [&] {
            for (const auto& [c, port] : pulled) g_cluster->set_link(c, port, false);
        });
        for (const auto& [c, port] : pulled)
            g_cluster->set_fault(c, port, {{"bandwidth_gbps", 0}, {"latency_us", 0}});  // still pulled
        if (res.check.wrong) fail_msg("ring with the cable pulled under it: %zu wrong", size_t(res.check.wrong));
        size_t rerouted = 0;
        uint64_t on_escape = 0;  // packets sent on the escape VC (it has no other use)
        for (const transport::RouterView& v : transport::read_routers(*g_cluster)) {
            rerouted += v.status.state == abi::kFabricRouterRerouted;
            on_escape += v.status.vc_packets_sent[escape];
        }
        assert_int_equal(rerouted, 2 * pulled.size());  // both ends of each cable
        assert_true(on_escape > 0);
        r.algo = "2d";  // the next op: a fabric planned without the cables
        res = ccl::run_case(run, *g_cluster, r, 4);
        if (res.check.wrong) fail_msg("2d after the cable died: %zu wrong", size_t(res.check.wrong));
        for (const transport::RouterView& v : transport::read_routers(*g_cluster))
            for (const auto& [c, port] : pulled)
                if (v.chip == c && v.port == port)
                    fail_msg("a router runs on a dead cable (chip %u %s)", v.chip, v.way.c_str());
        for (const auto& [c, port] : pulled) g_cluster->set_link(c, port, true);
        // The cables are back: the same runner's next op plans its fabric again, over them.
        ccl::OpRequest again;
        again.op = ccl::Collective::kAllReduce;
        again.bytes = 256 * 1024;
        assert_int_equal(ccl::run_case(run, *g_cluster, again, 5).check.wrong, 0);
        size_t on_cable = 0;
        for (const transport::RouterView& v : transport::read_routers(*g_cluster)) {
            assert_int_not_equal(v.status.state, abi::kFabricRouterRerouted);
            on_cable += v.chip == chip && v.way == "E";
        }
        assert_int_equal(on_cable, 1);
    }
    expect_more_events("rerouted", chip, "E", before);
    all_reduce_is_right("fabric");
}

// The collectives striped over both planes of a 2D fabric (mesh2x2-rv32, no
// relays: a fabric per plane): a cable of either plane pulled under a running
// op is routed round live by its own plane's control plane; the op completes
// right on both planes and both ends of the cable report rerouted, and the
// next op, the cable still out, runs right on both planes. (A plane-1
// cable failed the op once its packets had waited out their timeout, only
// plane 0 being tended; a plane-0 one too, its control plane choosing a
// fallback relay the striped fabric does not have.)
void test_a_cable_of_either_plane_pulled_under_an_op_is_routed_round_live(void**) {
    for (uint32_t plane = 0; plane < 2; ++plane) {
        g_fabric.reset();
        const uint32_t east = static_cast<uint32_t>(g_cluster->board().port_for(abi::kFabricEast, plane));
        const std::string way = plane ? "E1" : "E";
        const size_t before = events_at("rerouted", 0, way.c_str()).size();
        {
            ccl::CollectiveRunner run(*g_cluster, over_fabric());
            warm_up(run);
            slow_to_a_crawl(0, east);
            const ccl::CaseResult res = ccl::run_case(run, *g_cluster, ring_all_reduce(4 << 20), 31 + plane,
                                                      [&] { g_cluster->set_link(0, east, false); });
            if (res.check.wrong)
                fail_msg("plane %u's cable pulled under a ring: %zu wrong", plane, size_t(res.check.wrong));
            assert_int_equal(res.timing.planes, 2);
            size_t rerouted = 0;
            for (const transport::RouterView& v : transport::read_routers(*g_cluster))
                rerouted += v.status.state == abi::kFabricRouterRerouted;
            assert_int_equal(rerouted, 2);  // both ends of the cable
            // The next op, the cable still out: each plane's fabric planned
            // round its own dead cables, both planes carry it.
            const ccl::CaseResult next = ccl::run_case(run, *g_cluster, ring_all_reduce(1 << 20), 33 + plane);
            assert_int_equal(next.check.wrong, 0);
            assert_int_equal(next.timing.planes, 2);
        }
        expect_more_events("rerouted", 0, way.c_str(), before);
        g_cluster->set_fault(0, east, kUnfaulted);  // plugged back in, unshaped
    }
    // With both cables back, the cluster runs ops right on both transports.
    all_reduce_is_right("edm");
    all_reduce_is_right("fabric");
}

// A mesh cut in two under a running op (both of chip 0's cables): the op
// fails within seconds naming the chips cut off, and with the cables back
// the cluster runs ops right.
void test_a_cut_mesh_fails_the_op_naming_the_chips(void**) {
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    const uint32_t south = static_cast<uint32_t>(port_named(g_cluster->board(), "S"));
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        all_reduce_is_right("fabric");
        for (uint32_t port : {east, south}) slow_to_a_crawl(0, port);
        const auto [e, seconds] = failure_of(run, [&] {
            g_cluster->set_link(0, east, false);
            g_cluster->set_link(0, south, false);
        });
        for (uint32_t port : {east, south}) g_cluster->set_fault(0, port, kUnfaulted);
        fprintf(stderr, "failed in %.1f s: %s\n", seconds, e.substr(0, e.find('\n')).c_str());
        assert_true(contains(e, "cannot route round it: mesh 0 is cut: chip 0 cannot reach chips 1, 2"));
        assert_false(contains(e, "hang report"));  // the cause is known: no report of where everything stands
        assert_true(seconds < kLeastDeadlineSeconds);
        g_cluster->set_link(0, east, true);
        g_cluster->set_link(0, south, true);
    }
    all_reduce_is_right("fabric");
}

// A cable pulled under a ring all-reduce over all 36 chips of 4mesh3x3:
// its two routers send what they held, and every later packet for it, round
// by detours on VC 2 (the escape class between meshes), and the op is
// right; no other router is rerouted.
// Cables (chip, port), pulled one after the other under a ring all-reduce
// over all 36 chips of 4mesh3x3 (the first slowed to a crawl, so packets
// wait on it): the control plane routes round each live, the op is right,
// and only the cables' end routers are rerouted. `keeps`: whether each
// cable's detours keep the escape VC into the next meshes, as expected.
void pulled_under_an_op_are_routed_round_live(const std::vector<std::pair<uint32_t, const char*>>& cables,
                                              const std::vector<bool>& keeps = {}) {
    g_fabric.reset();
    const ClusterTopology t = g_cluster->topology();
    const auto [first, first_name] = cables.front();
    const uint32_t first_port = static_cast<uint32_t>(port_named(g_cluster->board(), first_name));
    const size_t before = events_at("rerouted", first, first_name).size();
    std::set<uint32_t> ends;
    for (const auto& [chip, name] : cables) {
        const uint32_t port = static_cast<uint32_t>(port_named(g_cluster->board(), name));
        ends.insert(chip);
        for (const LinkInfo& l : t.links())
            if (l.chip_a == chip && l.port_a == port) ends.insert(l.chip_b);
    }
    const auto set_all = [&](bool up) {
        for (const auto& [chip, name] : cables)
            g_cluster->set_link(chip, static_cast<uint32_t>(port_named(g_cluster->board(), name)), up);
    };
    {
        ccl::CollectiveRunner run(*g_cluster, over_fabric());
        warm_up(run);
        slow_to_a_crawl(first, first_port);
        const ccl::CaseResult res =
            ccl::run_case(run, *g_cluster, ring_all_reduce(256 << 10), 3, [&] { set_all(false); });
        g_cluster->set_fault(first, first_port, {{"bandwidth_gbps", 0}, {"latency_us", 0}});  // still pulled
        if (res.check.wrong) fail_msg("ring over 4 meshes with cables pulled: %zu wrong", size_t(res.check.wrong));
        size_t rerouted = 0;
        for (const transport::RouterView& v : transport::read_routers(*g_cluster)) {
            if (v.status.state != abi::kFabricRouterRerouted) continue;
            ++rerouted;
            if (!ends.count(v.chip)) fail_msg("chip %u's router was rerouted", v.chip);
            for (size_t k = 0; k < keeps.size(); ++k)
                if (v.chip == cables[k].first && v.way == cables[k].second &&
                    (v.status.detours_keep_vc != 0) != keeps[k])
                    fail_msg("chip %u's router %s: its detours %s VC 2 into the next meshes", v.chip, v.way.c_str(),
                             keeps[k] ? "should keep" : "should not keep");
        }
        assert_int_equal(rerouted, 2 * cables.size());  // both ends of each cable
    }
    set_all(true);
    expect_more_events("rerouted", first, first_name, before);
    all_reduce_is_right("fabric");
}
// Inside a mesh only the cable's routers take new tables, as detours.
void test_a_cable_inside_a_mesh_pulled_under_an_op_is_routed_round_live(void**) {
    pulled_under_an_op_are_routed_round_live({{g_cluster->topology().chip_at(2, 1, 1), "E"}});  // the middle of mesh 2
}
// Between meshes every chip also takes new exits, reached along the routes
// it holds inside its mesh: here after a cable inside that mesh died too
// (mesh 0's chip 3 east, then chip 8's cable south to mesh 2). Writing the
// control plane's routes round the first cable into every chip closed
// cycles on VC 0 (such second moves were refused), and so would the second
// cable's detours kept on VC 2 into mesh 0: they fall back to VC 1 there.
void test_a_cable_between_meshes_pulled_under_an_op_is_routed_round_live(void**) {
    const ClusterTopology& t = g_cluster->topology();
    pulled_under_an_op_are_routed_round_live({{t.chip_at(0, 0, 1), "E"}, {t.chip_at(0, 2, 2), "S"}}, {true, false});
}

// Mesh 0's one cable to mesh 1, pulled under an op: its detours go round
// by meshes 2 and 3 on VC 2, which they keep into the next mesh (they fell
// back to VC 1 there, beside the old exits still in use, and the control
// plane refused the move as one that could deadlock: the op failed).
void test_the_one_cable_between_two_meshes_pulled_under_an_op(void**) {
    pulled_under_an_op_are_routed_round_live({{g_cluster->topology().chip_at(0, 2, 1), "E"}}, {true});
}

// Every router publishes its state, counters and time in its own L1, where
// any process reads them (weft fabric too), and obeys pause and resume.
void test_routers_publish_their_state_and_obey_commands(void**) {
    auto* fabric = &start_fabric();
    prepare(3000);
    for (uint32_t c = 0; c < g_cluster->size(); ++c) g_cluster->chip(c).write32(dram(kSems), 0);
    Traffic traffic;
    auto j = job_to(*fabric, 0, 2, abi::kFabricWriteInc);
    j.src = dram(kSrc);
    j.dst = dram(kDst);
    j.bytes = 3000;
    j.sem = dram(kSems);
    j.inc = 1;
    traffic.add(0, j);
    traffic.run(*fabric);
    assert_true(word_reaches(2, dram(kSems), 1));
    auto routers = transport::read_routers(*g_cluster);
    assert_int_equal(routers.size(), fabric->builder().routers().size());
    uint64_t sent = 0, received = 0;
    for (const transport::RouterView& r : routers) {
        assert_string_equal(transport::router_state_name(r.status.state), "running");
        // What weft fabric prints of how it avoids deadlock: ring8's own (its config's flags).
        assert_string_equal(transport::deadlock_avoidance(r.flags).c_str(),
                            "datelines (VC 1 past each ring's dateline cable), VC 2 for packets sent back round a "
                            "dead cable");
        sent += r.status.bytes_sent, received += r.status.bytes_received;
    }
    assert_int_equal(sent, received);
    assert_int_equal(sent, 2 * (3000 + abi::kFabricHeaderBytes));  // one packet, two cables
    const auto all_in = [&](const char* state) {
        for (int tries = 0; tries < 200; ++tries) {
            size_t in = 0;
            for (const transport::RouterView& r : transport::read_routers(*g_cluster))
                in += std::string(transport::router_state_name(r.status.state)) == state;
            if (in == routers.size()) return true;
            std::this_thread::sleep_for(milliseconds(10));
        }
        return false;
    };
    assert_int_equal(transport::command_routers(*g_cluster, abi::kFabricPause), routers.size());
    assert_true(all_in("paused"));
    // An op that times out behind them says why: each router's line in the hang report.
    // A packet a paused router holds is held by command, not stuck waiting for room.
    transport::L1Allocator l1(g_cluster->board());
    const auto launched = g_cluster->launch_all(traffic.launches(*fabric, l1));
    std::string report;
    for (int tries = 0; tries < 200 && report.find("held: the router is paused") == std::string::npos; ++tries) {
        std::this_thread::sleep_for(milliseconds(10));
        report = g_cluster->hang_report({});
    }
    if (report.find(", paused: ") == std::string::npos ||
        report.find("held: the router is paused") == std::string::npos)
        fail_msg("the hang report does not say the routers are paused and hold the packet:\n%s", report.c_str());
    assert_int_equal(transport::command_routers(*g_cluster, abi::kFabricRun), routers.size());
    g_cluster->wait_all(launched, milliseconds(30000));
    assert_true(word_reaches(2, dram(kSems), 2));  // the held packet went on once they ran again
    assert_true(all_in("running"));
    fabric->stop();
}

// A socket between two far chips streams `kBytes` from DRAM to DRAM
// through a window of eight 16 KiB landing slots: the sender sends in pieces
// of one size, the receiver takes them in pieces of another, every byte
// arrives right (an overrun slot would have been overwritten).
void socket_streams(uint32_t far, uint64_t kBytes) {
    FabricSpec o;
    o.packet_bytes = 16384;  // a message per packet: four times fewer than at the default 4 KiB
    auto* fabric = &start_fabric(o);
    constexpr uint32_t kFrom = 0x1000000, kTo = 0x3000000;
    std::vector<uint8_t> data(kBytes);
    std::mt19937 gen(7);
    for (auto& b : data) b = static_cast<uint8_t>(gen());
    g_cluster->chip(0).write(dram(kFrom), data.data(), kBytes);
    g_cluster->clear(far, dram(kTo), kBytes);
    transport::L1Allocator l1(g_cluster->board());
    transport::SocketSpec spec;
    spec.sender_chip = 0;
    spec.sender_core = worker_core(0);
    spec.receiver_chip = far;
    spec.receiver_core = worker_core(1);
    spec.slots = 8;
    spec.message_bytes = 16384;
    const transport::StreamEnds ends =
        transport::open_socket(fabric->builder(), g_cluster->board(), *g_cluster, l1, spec);
    const test_abi::SocketStreamArgs tx{ends.sender, dram(kFrom), kBytes, (1 << 20) + 13, 1, 0};
    const test_abi::SocketStreamArgs rx{ends.receiver, dram(kTo), kBytes, (3 << 20) - 5, 0, 0};
    const auto t0 = steady_clock::now();
    g_cluster->run({{0, worker_core(0), &test_kernel(g_cluster->board(), "socket_stream"), KernelArgWords::of(tx)},
                    {far, worker_core(1), &test_kernel(g_cluster->board(), "socket_stream"), KernelArgWords::of(rx)}},
                   milliseconds(60000));
    const double seconds = duration<double>(steady_clock::now() - t0).count();
    fprintf(stderr, "%llu MiB over a socket, chip 0 -> chip %u: %.2f s, %.1f MB/s\n",
            static_cast<unsigned long long>(kBytes >> 20), far, seconds, kBytes / seconds / 1e6);
    std::vector<uint8_t> got(kBytes);
    g_cluster->chip(far).read(dram(kTo), got.data(), kBytes);
    size_t first_wrong = kBytes;
    for (size_t i = 0; i < kBytes && first_wrong == kBytes; ++i)
        if (got[i] != data[i]) first_wrong = i;
    if (first_wrong != kBytes) fail_msg("byte %zu of the stream differs", first_wrong);
    fabric->stop();
}

void test_a_socket_streams_between_the_farthest_chips(void**) {
    uint32_t far = 1;
    const transport::FabricBuilder b = transport::fabric_over(*g_cluster, g_ring);
    for (uint32_t c = 1; c < g_cluster->size(); ++c)
        if (b.route(0, c).hops > b.route(0, far).hops) far = c;
    socket_streams(far, 16ull << 20);
}

// Across meshes: 64 MiB (the issue asks for that much) from mesh 0's chip 0 to mesh 3's chip 8, the two
// farthest chips of 4mesh3x3 (ten cables, through mesh 1).
void test_a_socket_streams_across_meshes(void**) { socket_streams(g_cluster->size() - 1, 64ull << 20); }

// A routing loop forced through a debug hook (the host rewrites one L1 entry
// on four chips of mesh 1, so packets for mesh 3 that enter there circle
// N, E, S, W round chips 3, 0, 1, 4 of mesh 1): the TTL stops the packet, a
// router drops it and says so, and with the tables put back the same send
// arrives.
void test_a_routing_loop_is_stopped_by_ttl(void**) {
    auto* fabric = &start_fabric();
    const transport::FabricBuilder& b = fabric->builder();
    const std::pair<uint32_t, abi::FabricCompass> loop[] = {{12, abi::kFabricNorth},
                                                            {9, abi::kFabricEast},
                                                            {10, abi::kFabricSouth},
                                                            {13, abi::kFabricWest}};
    const uint32_t to = 31, mesh = b.node(to).mesh;  // mesh 3's chip 4
    auto set_entries = [&](bool looping) {
        for (const auto& [chip, way] : loop) {
            const abi::FabricRouteEntry e = looping ? abi::FabricRouteEntry{1, uint8_t(way), 0, 0}
                                                    : b.table(chip).to_mesh[mesh];
            for (const transport::FabricRouterPlan& p : b.routers())
                if (p.chip == chip)
                    g_cluster->write(chip,
                                     p.config.route_table + offsetof(abi::FabricRouteTable, to_mesh) + sizeof e * mesh,
                                     &e, sizeof e);
        }
    };
    auto send = [&] {
        g_cluster->chip(to).write32(dram(kSems), 0);
        Traffic traffic;
        auto j = job_to(*fabric, 0, to, abi::kFabricWriteInc);
        j.src = dram(kSrc);
        j.dst = dram(kDst);
        j.bytes = 1000;
        j.sem = dram(kSems);
        j.inc = 1;
        traffic.add(0, j);
        traffic.run(*fabric);
    };
    size_t before = 0;
    for (const auto& [chip, way] : loop) before += events_at("dropped_packet", chip).size();
    set_entries(true);
    send();
    size_t after = before;
    for (int i = 0; i < 300 && after == before; ++i) {
        std::this_thread::sleep_for(milliseconds(10));
        after = 0;
        for (const auto& [chip, way] : loop) after += events_at("dropped_packet", chip).size();
    }
    assert_int_equal(after, before + 1);  // dropped once, by one of the four
    assert_int_equal(g_cluster->chip(to).read32(dram(kSems)), 0);
    set_entries(false);
    send();
    assert_true(word_reaches(to, dram(kSems), 1));
    fabric->stop();
}

// The collectives over a fabric of several meshes: ring all-gather and
// all-reduce over every chip (each stream routed across meshes where its
// ring neighbours are in two), every element checked against the host.
void test_collectives_run_over_every_mesh(void**) {
    g_fabric.reset();
    ccl::RunnerOptions o;
    o.transport = "fabric";
    ccl::CollectiveRunner run(*g_cluster, o);
    for (ccl::Collective op : {ccl::Collective::kAllGather, ccl::Collective::kAllReduce}) {
        ccl::OpRequest r;
        r.op = op;
        r.algo = "ring";
        r.bytes = 36 * 1000 * 4;
        const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 23);
        if (res.check.wrong)
            fail_msg("%s over 4 meshes: %zu wrong", ccl::collective_name(op).c_str(), size_t(res.check.wrong));
    }
}

// Each mesh of 4mesh3x3 a communicator over the fabric, each with a fabric
// of its own on its own chips: all four all-reduce at once, each chip left
// with the sum over its own mesh; a mesh keeps its shape (2d runs in it);
// chips that are not one whole mesh are refused over the fabric by name.
void test_each_mesh_runs_its_own_op_at_once(void**) {
    g_fabric.reset();
    const ClusterTopology t = g_cluster->topology();
    ccl::RunnerOptions o;
    o.transport = "fabric";
    const uint32_t n = static_cast<uint32_t>(g_cluster->size());
    std::vector<int> colour(n);
    for (uint32_t c = 0; c < n; ++c) colour[c] = static_cast<int>(t.mesh_of(c).id);
    auto comms = ccl::CollectiveRunner::split(*g_cluster, colour, o);
    assert_int_equal(comms.size(), t.meshes().size());
    const uint64_t count = 9 * 1000 + 5, addr = g_cluster->board().dram.base + (3 << 20);
    auto value = [](uint32_t chip, uint64_t i) { return float((chip * 7 + i) % 13); };
    std::vector<float> v(count);
    for (uint32_t c = 0; c < n; ++c) {
        for (uint64_t i = 0; i < count; ++i) v[i] = value(c, i);
        g_cluster->chip(c).write(addr, v.data(), count * 4);
    }
    std::vector<ccl::PendingOp> ops;
    for (auto& [mesh, comm] : comms) ops.push_back(ccl::all_reduce(*comm, addr, addr, count, abi::kF32, abi::kMathSum));
    size_t k = 0;
    for (auto& [mesh, comm] : comms) {
        const ccl::OpTiming timing = comm->wait(ops[k++]);
        assert_string_equal(timing.transport.c_str(), "fabric");
    }
    for (uint32_t c = 0; c < n; ++c) {
        g_cluster->chip(c).read(addr, v.data(), count * 4);
        for (uint64_t i = 0; i < count; ++i) {
            float want = 0;
            for (uint32_t other : comms[colour[c]]->chips()) want += value(other, i);
            if (v[i] != want)
                fail_msg("chip %u element %llu: %g, not its mesh's sum %g", c, (unsigned long long)i, v[i], want);
        }
    }
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.algo = "2d";
    r.bytes = 9 * 3001 * 4;
    const ccl::CaseResult res = ccl::run_case(*comms[1], *g_cluster, r, 5);
    if (res.check.wrong) fail_msg("2d over mesh 1's fabric: %zu wrong", size_t(res.check.wrong));
    comms.clear();
    try {
        ccl::CollectiveRunner part(*g_cluster, {0, 1, 2}, o);
        fail_msg("a communicator over part of a mesh got a fabric");
    } catch (const Error& e) {
        if (!contains(e.what(), "one whole mesh")) fail_msg("got: %s", e.what());
    }
}

// A mesh's own fabric is rerouted live like the whole cluster's: mesh 1's
// centre chip loses its east cable under a ring all-reduce over mesh 1's
// fabric; its control plane, in the mesh's numbers, routes round it, the op
// is right, and the two routers of the cable say they were rerouted.
void test_a_meshs_own_fabric_is_rerouted_live(void**) {
    g_fabric.reset();
    const ClusterTopology t = g_cluster->topology();
    const Mesh& mesh = t.mesh(1);
    std::vector<uint32_t> chips;
    for (uint32_t i = 0; i < mesh.chips(); ++i) chips.push_back(mesh.first_chip + i);
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    // Row 0, column 1: a move off an inner cable of a mesh is refused (see
    // test_a_pulled_cable_is_routed_round_live).
    const uint32_t chip = t.chip_at(1, 1, 0);
    const size_t before = events_at("rerouted", chip, "E").size();
    {
        ccl::CollectiveRunner run(*g_cluster, chips, over_fabric());
        warm_up(run);
        const ccl::OpRequest r = ring_all_reduce(4 << 20);
        slow_to_a_crawl(chip, east);
        const ccl::CaseResult res =
            ccl::run_case(run, *g_cluster, r, 3, [&] { g_cluster->set_link(chip, east, false); });
        g_cluster->set_fault(chip, east, {{"bandwidth_gbps", 0}, {"latency_us", 0}});  // still pulled
        if (res.check.wrong) fail_msg("ring over mesh 1 with a cable pulled: %zu wrong", size_t(res.check.wrong));
        size_t rerouted = 0;
        for (const transport::RouterView& v : transport::read_routers(*g_cluster)) {
            rerouted += v.status.state == abi::kFabricRouterRerouted;
            if (v.status.state == abi::kFabricRouterRerouted && t.mesh_of(v.chip).id != 1)
                fail_msg("a router of mesh %u was rerouted", t.mesh_of(v.chip).id);
        }
        assert_int_equal(rerouted, 2);  // both ends of the cable
    }
    g_cluster->set_link(chip, east, true);
    expect_more_events("rerouted", chip, "E", before);
    all_reduce_is_right("fabric");
}

// 2D multicasts along torus4x4's row 1 under a cable pulled beneath them
// (chip 5 east, slowed to a crawl first so they wait on it): the control
// plane routes round it live, and the cable's routers send each multicast
// they hold for it round as a copy to each chip still ahead in its run, the
// cable at its start (from 5) or within it (from 4 east, from 7 west).
// Every chip of every run gets all of it, once; none beyond it gets any.
void test_2d_multicasts_go_round_a_pulled_cable_live(void**) {
    auto* fabric = &start_fabric();
    constexpr uint32_t kBytes = 256 * 1024, kBigSrc = 0x1000000, kBigDst = 0x2000000;
    struct Run {
        uint32_t from, first, chips;
        FabricDirection way;
    };
    const Run runs[] = {{4, 5, 3, FabricDirection::kEast},
                        {7, 6, 3, FabricDirection::kWest},
                        {5, 6, 2, FabricDirection::kEast}};
    const auto in_run = [](const Run& r, uint32_t chip) {
        for (uint32_t k = 0; k < r.chips; ++k)
            if (chip == 4 + (r.first - 4 + (r.way == FabricDirection::kEast ? k : 4 - k)) % 4) return true;
        return false;
    };
    std::vector<uint8_t> src(kBytes);
    Traffic traffic;
    for (const Run& r : runs) {
        for (uint32_t i = 0; i < kBytes; ++i) src[i] = pattern(r.from, 0, i);
        g_cluster->chip(r.from).write(dram(kBigSrc), src.data(), kBytes);
        test_abi::FabricTrafficJob j{};
        j.command = abi::kFabricWriteInc;
        j.hops = 1;
        j.count = static_cast<uint8_t>(r.chips);
        j.ttl = abi::kFabricDefaultTtl;
        j.direction = static_cast<uint8_t>(connection_of(r.way));
        j.src = dram(kBigSrc);
        j.dst = dram(kBigDst + r.from * kBytes);
        j.bytes = kBytes;
        j.sem = dram(kSems + 4 * r.from);
        j.inc = 1;
        traffic.add(r.from, j);
    }
    for (uint32_t c = 0; c < g_cluster->size(); ++c) {
        g_cluster->clear(c, dram(kBigDst), 8 * kBytes);
        g_cluster->clear(c, dram(kSems), 0x40);
    }
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    slow_to_a_crawl(5, east);
    const size_t before = events_at("rerouted", 5, "E").size();
    transport::L1Allocator l1(g_cluster->board());
    const auto running = g_cluster->launch_all(traffic.launches(*fabric, l1));
    std::this_thread::sleep_for(milliseconds(50));
    g_cluster->set_link(5, east, false);
    g_cluster->wait_all(running, milliseconds(60000), [&] { return fabric->tend(); });
    g_cluster->set_fault(5, east, kUnfaulted);  // still pulled
    for (const Run& r : runs)
        for (uint32_t c = 0; c < g_cluster->size(); ++c) {
            const bool in = in_run(r, c);
            if (in && !word_reaches(c, dram(kSems + 4 * r.from), 1))
                fail_msg("chip %u never got chip %u's run", c, r.from);
            if (g_cluster->chip(c).read32(dram(kSems + 4 * r.from)) != (in ? 1u : 0u))
                fail_msg("chip %u holds %u of chip %u's multicast", c,
                         g_cluster->chip(c).read32(dram(kSems + 4 * r.from)), r.from);
            if (!in) continue;
            std::vector<uint8_t> got(kBytes);
            g_cluster->chip(c).read(dram(kBigDst + r.from * kBytes), got.data(), kBytes);
            for (uint32_t i = 0; i < kBytes; ++i)
                if (got[i] != pattern(r.from, 0, i))
                    fail_msg("chip %u: byte %u of chip %u's run differs", c, i, r.from);
        }
    size_t rerouted = 0;
    for (const transport::RouterView& v : transport::read_routers(*g_cluster))
        rerouted += v.status.state == abi::kFabricRouterRerouted;
    assert_int_equal(rerouted, 2);  // both ends of the cable
    expect_more_events("rerouted", 5, "E", before);
    g_cluster->set_link(5, east, true);
    fabric->stop();
    g_fabric.reset();
}

// A cable routed round by tables comes back under the stream that crosses
// it (1 MiB from `from` to `to`, over from's east cable): the control plane
// pauses its two routers until what they sent round is delivered, then they
// take the cable again. Every byte arrives, the cable carried the stream
// again after its return, and both routers posted rejoined and run on it.
// Crawling, the cable holds the stream when it goes, and so does the
// detour's first cable (from's `detour` port) until the return: some of the
// stream is left for the cable however fast the host runs.
void cable_returns_under_a_stream(uint32_t from, uint32_t to, const char* detour) {
    auto* fabric = &start_fabric();
    constexpr uint32_t kBytes = 1 << 20, kBigSrc = 0x1000000, kBigDst = 0x2000000;
    std::vector<uint8_t> src(kBytes);
    for (uint32_t i = 0; i < kBytes; ++i) src[i] = pattern(from, to, i);
    g_cluster->chip(from).write(dram(kBigSrc), src.data(), kBytes);
    g_cluster->clear(to, dram(kBigDst), kBytes);
    g_cluster->clear(to, dram(kSems), 0x40);
    Traffic traffic;
    auto w = job_to(*fabric, from, to, abi::kFabricWriteInc);
    w.src = dram(kBigSrc);
    w.dst = dram(kBigDst);
    w.bytes = kBytes;
    w.sem = dram(kSems);
    w.inc = 1;
    traffic.add(from, w);
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    const CableEnds cable{from, to};
    const size_t rejoined_before = events_at("rejoined", from, "E").size();
    const uint32_t round = static_cast<uint32_t>(port_named(g_cluster->board(), detour));
    slow_to_a_crawl(from, east);
    slow_to_a_crawl(from, round);
    transport::L1Allocator l1(g_cluster->board());
    const auto running = g_cluster->launch_all(traffic.launches(*fabric, l1));
    std::this_thread::sleep_for(milliseconds(50));
    g_cluster->set_link(from, east, false);
    for (int i = 0; i < 1000 && !cable.both(abi::kFabricRouterRerouted); ++i) {
        assert_string_equal(fabric->tend().c_str(), "");
        std::this_thread::sleep_for(milliseconds(5));
    }
    assert_true(cable.both(abi::kFabricRouterRerouted));
    if (g_cluster->chip(to).read32(dram(kSems)) != 0) fail_msg("the stream ended before the cable came back");
    const uint64_t before_return = cable.bytes_sent();
    g_cluster->set_fault(from, east, kUnfaulted);
    g_cluster->set_link(from, east, true);
    for (int i = 0; i < 2000 && !cable.both(abi::kFabricRouterRunning); ++i) {
        assert_string_equal(fabric->tend().c_str(), "");
        std::this_thread::sleep_for(milliseconds(5));
    }
    assert_true(cable.both(abi::kFabricRouterRunning));  // paused, drained, back on the cable
    g_cluster->set_fault(from, round, kUnfaulted);
    g_cluster->wait_all(running, milliseconds(60000), [&] { return fabric->tend(); });
    assert_true(word_reaches(to, dram(kSems), 1));
    std::vector<uint8_t> got(kBytes);
    g_cluster->chip(to).read(dram(kBigDst), got.data(), kBytes);
    for (uint32_t i = 0; i < kBytes; ++i)
        if (got[i] != pattern(from, to, i)) fail_msg("byte %u differs", i);
    const uint64_t after = cable.bytes_sent() - before_return;
    fprintf(stderr, "back: %llu bytes over the cable after its return\n", static_cast<unsigned long long>(after));
    assert_true(after > 0);
    for (int i = 0; i < 100 && events_at("rejoined", to, "W").empty(); ++i)
        std::this_thread::sleep_for(milliseconds(20));
    assert_true(events_at("rejoined", from, "E").size() > rejoined_before);
    assert_true(events_at("rejoined", to, "W").size() > 0);
    fabric->stop();
    g_fabric.reset();
}

// torus4x4, chip 5 east to chip 6: its detour goes the other way round the row.
void test_a_cable_routed_round_returns_under_a_stream(void**) { cable_returns_under_a_stream(5, 6, "W"); }

// 4mesh3x3, mesh 2's chip 8 east to mesh 3's chip 6 (chips 26 and 33): its
// move gave every chip new exits, and its return gives them back, with every
// worker lane held until the fabric has settled. Its detour leaves north.
void test_a_cable_between_meshes_returns_under_a_stream(void**) { cable_returns_under_a_stream(26, 33, "N"); }

// A cable that stays down: the next fabric op plans its fabric around it
// (the control plane's tables), starts no router on it, and is right; with
// the cable back, a new runner's fabric uses every cable again.
void test_the_next_op_routes_around_a_dead_cable(void**) {
    g_fabric.reset();
    const uint32_t east = static_cast<uint32_t>(port_named(g_cluster->board(), "E"));
    const uint32_t chip = g_cluster->topology().meshes()[0].width + 1;  // row 1, column 1: inside the grid
    const uint32_t core = static_cast<uint32_t>(g_cluster->board().ports.at(east).core);
    {
        ccl::RunnerOptions o;
        o.transport = "fabric";
        ccl::CollectiveRunner run(*g_cluster, o);  // planned over every cable
        g_cluster->set_link(chip, east, false);
        for (const char* algo : {"2d", "ring"}) {
            ccl::OpRequest r;
            r.op = ccl::Collective::kAllReduce;
            r.algo = algo;
            r.bytes = 256 * 1024;
            const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 17);
            if (res.check.wrong) fail_msg("%s around the dead cable: %zu wrong", algo, size_t(res.check.wrong));
            for (const resident::Running& x : resident::list(*g_cluster))
                if (x.chip == chip && x.core == core) fail_msg("a router runs on the dead cable");
        }
    }
    g_cluster->set_link(chip, east, true);
    size_t routers = 0;
    {
        ccl::RunnerOptions o;
        o.transport = "fabric";
        ccl::CollectiveRunner run(*g_cluster, o);
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllReduce;
        r.bytes = 64 * 1024;
        const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 19);
        assert_int_equal(res.check.wrong, 0);
        for (const resident::Running& x : resident::list(*g_cluster)) routers += x.chip == chip && x.core == core;
    }
    assert_int_equal(routers, 1);  // the cable is back in the fabric
}

// Two dead cables of one column ring of a torus: the control plane's tables
// round both (up*/down*: mixed dimension orders could wait in a circle)
// carry the next fabric's ops, every element right.
void test_the_next_op_routes_around_two_dead_cables_of_one_ring(void**) {
    g_fabric.reset();
    const uint32_t south = static_cast<uint32_t>(port_named(g_cluster->board(), "S"));
    const uint32_t width = g_cluster->topology().meshes()[0].width;
    const uint32_t chips[] = {width + 1, 2 * width + 1};  // column 1: rows 1 to 2, and 2 to 3
    for (uint32_t c : chips) g_cluster->set_link(c, south, false);
    {
        ccl::RunnerOptions o;
        o.transport = "fabric";
        ccl::CollectiveRunner run(*g_cluster, o);
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllReduce;
        r.algo = "ring";
        r.bytes = 256 * 1024;
        const ccl::CaseResult res = ccl::run_case(run, *g_cluster, r, 29);
        if (res.check.wrong) fail_msg("ring all-reduce round two dead cables: %zu wrong", size_t(res.check.wrong));
    }
    for (uint32_t c : chips) g_cluster->set_link(c, south, true);
}

// The default transport (auto) carries over the fabric what the EDM cannot
// without folding its workers (mesh3x3's 2d and ring all-reduce need more
// worker cores than the EDM's forwarding leaves) and over the EDM what it
// can; every element right.
void test_auto_transport_runs_what_the_edm_cannot(void**) {
    g_fabric.reset();
    ccl::RunnerOptions edm_only;
    edm_only.transport = "edm";
    ccl::CollectiveRunner edm(*g_cluster, edm_only);
    ccl::CollectiveRunner any(*g_cluster);  // the default: auto
    assert_string_equal(any.transport_name().c_str(), "auto");
    auto all_reduce = [](const char* algo) {
        ccl::OpRequest r;
        r.op = ccl::Collective::kAllReduce;
        r.algo = algo;
        r.bytes = 64 * 1024;
        return r;
    };
    // The EDM alone runs them all, a chip short of cores folding its ports
    // onto two workers (before auto starts the fabric, whose routers take
    // the ERISC cores the EDM needs).
    for (const char* algo : {"2d", "ring", "naive_ring"}) {
        const ccl::CaseResult alone = ccl::run_case(edm, *g_cluster, all_reduce(algo), 6);
        if (alone.check.wrong) fail_msg("%s over the EDM alone: %zu wrong", algo, size_t(alone.check.wrong));
    }
    size_t over_fabric = 0;
    for (const char* algo : {"2d", "ring", "naive_ring"}) {
        const ccl::OpRequest r = all_reduce(algo);
        bool edm_refuses = false;  // without folding its workers: auto's EDM
        try {
            any.lower_op(r, algo);
        } catch (const Error&) {
            edm_refuses = true;
        }
        const ccl::CaseResult res = ccl::run_case(any, *g_cluster, r, 5);
        if (res.check.wrong) fail_msg("%s under auto: %zu wrong", algo, size_t(res.check.wrong));
        assert_string_equal(res.timing.transport.c_str(), edm_refuses ? "fabric" : "edm");
        over_fabric += edm_refuses;
    }
    assert_true(over_fabric >= 1);  // 2d at least: its rows wrap back through their chips
}

// Routers left running by a client that went away without stopping them are
// stopped by the next client to claim the cluster, which says so; a chip
// reset frees its cores of them too.
void test_routers_a_gone_client_left_are_stopped_by_the_next(void**) {
    g_fabric.reset();
    g_cluster->release();
    {
        std::unique_ptr<Cluster> other = Cluster::attach(g_cluster->run_dir());
        auto builder = g_2d ? fabric_2d(*other, {}) : transport::fabric_over(*other, g_ring);
        // Never stopped, as by a client that died: kept where the leak checker sees it on purpose.
        static auto* abandoned = new std::vector<transport::Fabric*>;  // never destroyed, so still seen at exit
        abandoned->push_back(transport::Fabric::start(*other, builder, milliseconds(10000)).release());
    }
    const size_t left = resident::list(*g_cluster).size();
    assert_true(left > 2);
    g_cluster->reset_chip(0);
    for (const auto& r : resident::list(*g_cluster)) assert_int_not_equal(r.chip, 0);
    assert_true(resident::list(*g_cluster).size() < left);
    all_reduce_is_right("edm");  // claims the cluster: the rest are stopped
    assert_int_equal(resident::list(*g_cluster).size(), 0);
    all_reduce_is_right("fabric");
}

}  // namespace

// Every test heals the cables after itself (heal_cables).
#define healed_test(f) cmocka_unit_test_teardown(f, heal_cables)

int main(int argc, char** argv) {
    const struct CMUnitTest tests[] = {
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_multicast_reaches_exactly_its_range),
        healed_test(test_ttl_one_across_two_hops_is_dropped_and_reported),
        healed_test(test_routers_hold_their_cores_until_stopped),
        healed_test(test_hang_report_names_every_router),
        healed_test(test_a_stuck_packet_is_reported_where_it_stands),
        healed_test(test_a_pulled_line_cable_fails_the_op_naming_the_cut),
    };
    const struct CMUnitTest ring_tests[] = {
        healed_test(test_random_packets_arrive_exactly_once),
        healed_test(test_a_ring_full_both_ways_completes),
        healed_test(test_a_ring_full_both_ways_completes_under_bubble_flow_control),
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_multicast_reaches_exactly_its_range),
        healed_test(test_a_pulled_ring_cable_sends_its_packets_back_round_live),
        healed_test(test_a_multicast_for_a_dead_ring_cable_goes_back_round_live),
        healed_test(test_routers_a_gone_client_left_are_stopped_by_the_next),
        healed_test(test_routers_publish_their_state_and_obey_commands),
        healed_test(test_a_socket_streams_between_the_farthest_chips),
        healed_test(test_model_multicasts_replay_alike_on_qemu),
    };
    const struct CMUnitTest mesh_tests[] = {
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_the_specs_cyclic_pattern_completes),
        healed_test(test_2d_multicast_reaches_exactly_its_span),
        healed_test(test_auto_transport_runs_what_the_edm_cannot),
        healed_test(test_a_pulled_cable_is_routed_round_live),
        healed_test(test_a_cut_mesh_fails_the_op_naming_the_chips),
        healed_test(test_the_next_op_routes_around_a_dead_cable),
        healed_test(test_routers_a_gone_client_left_are_stopped_by_the_next),
    };
    const struct CMUnitTest torus_tests[] = {
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_a_torus_full_of_turns_completes_under_bubble_flow_control),
        healed_test(test_a_recorded_all_to_all_replays_alike_in_the_model),
        healed_test(test_traffic_from_the_model_replays_alike_on_qemu),
        healed_test(test_a_pulled_cable_is_routed_round_live),
        healed_test(test_2d_multicasts_go_round_a_pulled_cable_live),
        healed_test(test_a_cable_routed_round_returns_under_a_stream),
        healed_test(test_the_next_op_routes_around_a_dead_cable),
        healed_test(test_the_next_op_routes_around_two_dead_cables_of_one_ring),
    };
    const struct CMUnitTest plane_tests[] = {
        healed_test(test_planes_are_independent_fabrics),
        healed_test(test_collectives_stripe_over_both_planes),
        healed_test(test_a_plane_that_loses_a_cable_under_an_op_is_left_out),
        healed_test(test_a_pulled_cable_moves_onto_its_fallback_live),
    };
    const struct CMUnitTest galaxy_tests[] = {
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_galaxy_as_a_mesh),
        healed_test(test_galaxy_as_a_ring),
        healed_test(test_galaxy_as_row_and_column_rings),
        healed_test(test_galaxy_all_reduce_and_all_gather),
    };
    // Two planes of N, E, S, W ports (the 32-bit chip's board): the 2D fabric's fallback.
    const struct CMUnitTest two_plane_mesh_tests[] = {
        healed_test(test_a_pulled_cable_moves_onto_its_fallback_live),
        healed_test(test_a_cable_of_either_plane_pulled_under_an_op_is_routed_round_live),
    };
    const struct CMUnitTest meshes_tests[] = {
        healed_test(test_every_chip_to_every_other_with_each_command),
        healed_test(test_a_socket_streams_across_meshes),
        healed_test(test_a_routing_loop_is_stopped_by_ttl),
        healed_test(test_a_cable_inside_a_mesh_pulled_under_an_op_is_routed_round_live),
        healed_test(test_a_cable_between_meshes_pulled_under_an_op_is_routed_round_live),
        healed_test(test_a_cable_between_meshes_returns_under_a_stream),
        healed_test(test_the_one_cable_between_two_meshes_pulled_under_an_op),
        healed_test(test_collectives_run_over_every_mesh),
        healed_test(test_each_mesh_runs_its_own_op_at_once),
        healed_test(test_a_meshs_own_fabric_is_rerouted_live),
    };
    // One group per cluster; an argument runs only that cluster's (ctest runs them one by one, in parallel).
    const std::string only = argc > 1 ? argv[1] : "";
    auto wanted = [&](const char* cluster) { return only.empty() || only == cluster; };
    int failed = 0;
    if (wanted("line4")) failed += cmocka_run_group_tests_name("fabric on line4", tests, setup_line4, teardown);
    if (wanted("ring8")) failed += cmocka_run_group_tests_name("fabric on ring8", ring_tests, setup_ring8, teardown);
    if (wanted("mesh3x3"))
        failed += cmocka_run_group_tests_name("2D fabric on mesh3x3", mesh_tests, setup_mesh3x3, teardown);
    if (wanted("torus4x4"))
        failed += cmocka_run_group_tests_name("2D fabric on torus4x4", torus_tests, setup_torus4x4, teardown);
    if (wanted("ring8x2"))
        failed += cmocka_run_group_tests_name("fabric planes on ring8x2", plane_tests, setup_ring8x2, teardown);
    if (wanted("mesh2x2-rv32"))
        failed += cmocka_run_group_tests_name("2D fabric fallback on mesh2x2-rv32", two_plane_mesh_tests,
                                              setup_mesh2x2_rv32, teardown);
    if (wanted("4mesh3x3"))
        failed += cmocka_run_group_tests_name("fabric over 4mesh3x3's meshes", meshes_tests, setup_4mesh3x3, teardown);
    if (wanted("galaxy"))
        failed += cmocka_run_group_tests_name("fabric on galaxy (8x4 torus)", galaxy_tests, setup_galaxy, teardown);
    return failed;
}
