// The fabric model (host/fabric_model): the router firmware run by events in
// virtual time. Its times follow from its costs (a hop, a cable's rate, a
// router's packets per second), a run is the same every time, a collective's
// bytes arrive, and a fabric built to deadlock is caught with its cycle.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "deadlocked_ring.h"
#include "driver/topology.h"
#include "fabric_model/stuck_channels.h"
#include "fabric_model/traffic.h"
#include "model_helpers.h"

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

ModelOptions ring8() {
    ModelOptions o;
    o.cluster = "ring8";
    return o;
}

// Every hop costs the same, and a cable's latency counts once per hop.
void test_a_hop_costs_the_same_everywhere_and_follows_the_costs(void**) {
    ModelOptions o = ring8();
    uint64_t ns[5];
    for (uint32_t to = 1; to <= 4; ++to) ns[to] = packet_latency(o, 0, to, 0).ns;
    const uint64_t hop = ns[2] - ns[1];
    assert_int_equal(ns[3] - ns[2], hop);
    assert_int_equal(ns[4] - ns[3], hop);
    // Silicon's ~0.76 us a hop, which the defaults are calibrated to.
    assert_in_range(hop, 700, 820);
    o.costs.cable_latency_ns += 1000;
    assert_int_equal(packet_latency(o, 0, 4, 0).ns - packet_latency(o, 0, 3, 0).ns, hop + 1000);
}

// Large packets: the cable is the limit, and half its rate halves the stream's.
// Small packets: the router is, at 1 / router_packet_ns.
void test_a_stream_is_held_by_the_cable_or_by_the_router(void**) {
    ModelOptions o = ring8();
    o.costs.cable_gbps = 2.0;
    const Stream fast = stream(o, 0, 2, 4 << 20, 0);
    assert_true(fast.gbps() > 0.95 * 2.0 && fast.gbps() <= 2.0);
    o.costs.cable_gbps = 1.0;
    const Stream slow = stream(o, 0, 2, 4 << 20, 0);
    assert_true(slow.gbps() > 0.95 * 1.0 && slow.gbps() <= 1.0);
    const Stream small = stream(ring8(), 0, 1, 256 << 10, 64);
    const double router_mpps = 1e3 / double(Costs{}.router_packet_ns);
    assert_true(small.mpps() > 0.97 * router_mpps && small.mpps() <= 1.001 * router_mpps);
}

// One thread, events ordered by time then by when they were made: every run
// of the same traffic takes the same virtual time and the same events.
void test_a_run_is_the_same_every_time(void**) {
    const OpTime a = ring_collective(ring8(), "all_gather", 1 << 20);
    const OpTime b = ring_collective(ring8(), "all_gather", 1 << 20);
    assert_int_equal(a.ns, b.ns);
    assert_int_equal(a.events, b.events);
    assert_true(a.busbw() > 0 && a.busbw() <= Costs{}.cable_gbps);
}

// all_gather's output is checked inside (every chunk on every chip), on a
// 2D torus as on a ring; all_reduce moves twice all_gather's bytes.
void test_ring_collectives_on_a_torus(void**) {
    ModelOptions o;
    o.cluster = "torus4x4";
    const OpTime ag = ring_collective(o, "all_gather", 1 << 20);
    const OpTime ar = ring_collective(o, "all_reduce", 1 << 20);
    assert_int_equal(ag.chips, 16);
    assert_true(ar.ns > ag.ns * 3 / 2 && ar.ns < ag.ns * 5 / 2);
}

// A ring without its dateline (one VC) and every chip sending round the same
// way: the buffers fill in a circle and nothing moves. The model says so and
// names the circle of channels, in place of hanging.
void test_a_ring_without_dateline_deadlocks_and_the_cycle_is_named(void**) {
    Simulation sim(test::ring_without_dateline());
    test::queue_circle_of_writes(sim);
    try {
        sim.finish();
        fail_msg("the traffic finished");
    } catch (const Error& e) {
        const std::string what = e.what();
        fprintf(stderr, "%s", what.c_str());
        assert_true(what.find("deadlocked") != std::string::npos);
        assert_true(what.find("cycle of waits") != std::string::npos);
    }
    // Eight cables in a circle, each one's receiver waiting on the next.
    assert_int_equal(wait_cycle(sim.model()).size(), 8);
}

// All-to-all on torus4x4 (every chip writes two packets to every other),
// with one cable failing a third of the way through: the routers move onto
// the control plane's tables round it while traffic runs, and every write
// arrives once (its semaphore counts each source once, its bytes are right).
// Every cable of the torus in turn.
uint64_t all_to_all(Simulation& sim, uint32_t bytes) {
    model::FabricModel& m = sim.model();
    for (uint32_t from = 0; from < m.chips(); ++from) {
        uint8_t* src = m.bytes(from, m.dram(1 << 20), bytes);
        std::fill(src, src + bytes, uint8_t(from + 1));
        for (uint32_t to = 0; to < m.chips(); ++to)
            if (to != from) sim.write(from, to, m.dram((4 << 20) + from * bytes), m.dram(1 << 20), bytes, m.dram(0));
    }
    return bytes;
}

void check_all_to_all(Simulation& sim, uint32_t bytes) {
    model::FabricModel& m = sim.model();
    std::vector<uint8_t> want(bytes);
    for (uint32_t to = 0; to < m.chips(); ++to) {
        assert_int_equal(m.word(to, m.dram(0)), m.chips() - 1);
        for (uint32_t from = 0; from < m.chips(); ++from) {
            if (from == to) continue;
            const uint8_t* got = m.bytes(to, m.dram((4 << 20) + from * bytes), bytes);
            std::fill(want.begin(), want.end(), uint8_t(from + 1));
            if (std::memcmp(got, want.data(), bytes) == 0) continue;
            const size_t i = size_t(std::mismatch(got, got + bytes, want.begin()).first - got);
            fail_msg("chip %u's bytes from chip %u: byte %zu is %u, not %u", to, from, i, got[i], from + 1);
        }
    }
}

// All-to-all of 2 KiB in packets of 1 KiB on `cluster`, and how long it
// takes with every cable working (checked).
constexpr uint32_t kAllToAllBytes = 2 * 1024;
// How long the all-to-all takes on `o`'s cluster with every cable working (checked).
uint64_t clean_all_to_all_ns(const ModelOptions& o) {
    Simulation sim(o);
    all_to_all(sim, kAllToAllBytes);
    const uint64_t ns = sim.finish().end_ns;
    check_all_to_all(sim, kAllToAllBytes);
    return ns;
}
ModelOptions all_to_all_on(const char* cluster, uint64_t* clean_ns) {
    ModelOptions o;
    o.cluster = cluster;
    o.fabric.packet_bytes = 1024;
    *clean_ns = clean_all_to_all_ns(o);
    return o;
}

// Every cable of `cluster` fails in turn, a third of the way through an
// all-to-all: where the control plane moves the fabric (kNewTables) every
// byte must arrive, once. `refused(cable, d)` says whether a move it did not
// make was expected; `after(sim)` looks at each finished run; `fabric` is
// FabricSpec::topology. Returns the moves made.
uint32_t fail_every_cable(const char* cluster,
                          const std::function<bool(const LinkInfo&, const transport::RerouteDecision&)>& refused,
                          const std::function<void(Simulation&)>& after = {}, const std::string& fabric = "auto") {
    uint64_t clean_ns;
    ModelOptions o = all_to_all_on(cluster, &clean_ns);
    o.fabric.topology = fabric;
    const ClusterTopology topology = Simulation(o).model().cluster().topology();
    uint32_t rerouted = 0;
    for (const LinkInfo& cable : topology.links()) {
        Simulation sim(o);
        all_to_all(sim, kAllToAllBytes);
        sim.engine().run(clean_ns / 3);
        const transport::RerouteDecision d = sim.fail_cable(cable.chip_a, cable.port_a);
        if (d.kind != transport::RerouteDecision::kNewTables) {
            if (!refused(cable, d)) fail_msg("%s", d.why.c_str());
            continue;
        }
        sim.finish();
        check_all_to_all(sim, kAllToAllBytes);
        if (after) after(sim);
        ++rerouted;
    }
    return rerouted;
}

bool none_refused(const LinkInfo&, const transport::RerouteDecision&) { return false; }

void test_every_cable_of_a_torus_fails_under_traffic_and_nothing_is_lost(void**) {
    assert_int_equal(fail_every_cable("torus4x4", none_refused), 32);  // 16 chips, a cable east and one south each
}

// A torus run as a mesh (topology: mesh, the spec's downshifted fabric):
// its control plane routes round a dead cable by the mesh's cables alone,
// and all 24 move (it routed over the wrap cables the fabric does not use,
// and refused every move); a wrap cable has no router to move.
void test_every_cable_of_a_torus_run_as_a_mesh_fails_under_traffic(void**) {
    const auto wrap = [](const LinkInfo&, const transport::RerouteDecision& d) {
        return d.why.find("the running fabric has no router") != std::string::npos;
    };
    assert_int_equal(fail_every_cable("torus4x4", wrap, {}, "mesh"), 24);
}

// A ring (1D) too: every cable of ring8 fails in turn under all-to-all
// traffic, and its two routers send what it held, and every later packet
// for it, back the other way round on VC 2, the ring's escape class.
// Nothing is lost, nothing arrives twice, and nothing deadlocks.
void test_every_cable_of_a_ring_fails_under_traffic_and_nothing_is_lost(void**) {
    uint64_t sent_back = 0;
    assert_int_equal(fail_every_cable("ring8", none_refused,
                                      [&](Simulation& sim) {
                                          for (size_t r = 0; r < sim.model().router_count(); ++r)
                                              sent_back += sim.model().router_status(r).vc_packets_sent[2];
                                      }),
                     8);
    assert_true(sent_back > 0);  // the escape VC carried the packets sent back
}

// Between meshes the detours travel on VC 2, the escape class above both
// meshes' classes, and keep it into the next mesh: every cable of 4mesh3x3
// fails in turn under all-to-all traffic, and the control plane routes round
// each one (48 inside meshes, 5 between), losing nothing. Mesh 0's one cable
// to mesh 1 was refused while the detours fell back to VC 1 on leaving their
// mesh: there, beside the old exits still in use, they closed a cycle.
void test_every_cable_of_four_meshes_fails_under_traffic(void**) {
    assert_int_equal(fail_every_cable("4mesh3x3", none_refused), 53);
}

// A move between meshes rewrites every chip's tables, so a later move is
// checked against the tables the chips hold then. On a 2x2 grid of 3x3
// meshes, mesh 1's two cables to mesh 3 die, then a cable inside mesh 3: the
// check walked the tables the fabric was built with, which still send mesh
// 3's traffic through mesh 1, found a loop no router holds, and refused the
// third move. Now all three move and every byte arrives once.
void test_a_move_after_moves_between_meshes_is_checked_against_the_tables_held(void**) {
    ModelOptions o;
    o.cluster = "grid4x3x3";
    o.grid = GridCluster{4, 3, 3, 2};
    o.fabric.packet_bytes = 1024;
    const uint64_t clean_ns = clean_all_to_all_ns(o);
    Simulation sim(o);
    all_to_all(sim, kAllToAllBytes);
    sim.engine().run(clean_ns / 4);
    // Mesh 1's chips 6 and 8 (15, 17) south to mesh 3; mesh 3's chip 0 (27) east.
    const std::pair<uint32_t, uint32_t> cables[] = {{17, abi::kFabricSouth},
                                                    {15, abi::kFabricSouth},
                                                    {27, abi::kFabricEast}};
    for (const auto& [chip, port] : cables) {
        const transport::RerouteDecision d = sim.fail_cable(chip, port);
        if (d.kind != transport::RerouteDecision::kNewTables)
            fail_msg("chip %u port %u: %s", chip, port, d.why.c_str());
        sim.engine().run(clean_ns / 8);
    }
    sim.finish();
    check_all_to_all(sim, kAllToAllBytes);
}

// The second rank of four, for what a rank builds: it runs nothing, so it
// never meets the others.
class SecondOfFour final : public Ranks {
public:
    uint32_t rank() const override { return 1; }
    uint32_t size() const override { return 4; }
    uint64_t min(uint64_t) override { throw std::logic_error("SecondOfFour runs nothing"); }
    uint64_t max(uint64_t) override { throw std::logic_error("SecondOfFour runs nothing"); }
    uint64_t sum(uint64_t) override { throw std::logic_error("SecondOfFour runs nothing"); }
    std::vector<uint8_t> exchange(const std::vector<std::vector<uint8_t>>&) override {
        throw std::logic_error("SecondOfFour runs nothing");
    }
};

// A rank holds only its own chips' routers (4mesh3x3 on four ranks: mesh 1's):
// the others' are planned alike, but neither written into their chips'
// memory nor started, so a rank's memory grows with its share of the chips.
void test_a_rank_holds_only_its_own_chips_routers(void**) {
    SecondOfFour ranks;
    ModelOptions o;
    o.cluster = "4mesh3x3";
    o.ranks = &ranks;
    Simulation sim(o);
    model::FabricModel& m = sim.model();
    size_t held = 0;
    for (size_t r = 0; r < m.router_count(); ++r) {
        const transport::FabricRouterPlan& p = m.fabric().routers()[r];
        const bool mine = sim.engine().owns(p.chip);
        assert_int_equal(mine, m.fabric().node(p.chip).mesh == 1);
        assert_int_equal(m.holds_router(r), mine);
        uint32_t magic = 0;
        std::memcpy(&magic, m.bytes(p.chip, p.config_address, sizeof magic), sizeof magic);
        assert_int_equal(magic, mine ? abi::kFabricRouterMagic : 0);
        assert_int_equal(m.router_config(r).port, p.port);  // its plan's, where it is not held
        held += mine;
    }
    assert_true(held > 0 && held < m.router_count());
}

// A two-plane ring whose plane-0 cable is out plans as weft run plans it:
// plane 0 has no ring, so the fabric runs on plane 1 (the model failed,
// "no working cable of plane 0"), and all-to-all over it arrives whole.
void test_a_plane_that_lost_a_cable_leaves_the_fabric_to_the_next(void**) {
    ModelOptions o;
    o.cluster = "ring8x2";
    o.fabric.packet_bytes = 1024;
    o.unplugged = {"1.E"};
    Simulation sim(o);
    assert_int_equal(transport::routing_plane(sim.model().cluster().board(), sim.model().fabric()), 1);
    all_to_all(sim, kAllToAllBytes);
    sim.finish();
    check_all_to_all(sim, kAllToAllBytes);
}

// A second cable fails under the same traffic as a first: each move's check
// covers the detours the earlier ones gave (packets moved twice), so every
// move it passes loses nothing; one it refuses names the cycle its detours
// would close. Every ordered pair of `cluster`'s cables that `pair` takes.
// Returns the pairs moved twice and the second moves refused.
// `then(sim, second)`, if given, acts on each run moved twice before it ends.
std::pair<uint32_t, uint32_t> fail_pairs(const char* cluster,
                                         const std::function<bool(const LinkInfo&, const LinkInfo&)>& pair,
                                         const std::function<void(Simulation&, const LinkInfo&)>& then = {}) {
    uint64_t clean_ns;
    const ModelOptions o = all_to_all_on(cluster, &clean_ns);
    const uint32_t bytes = kAllToAllBytes;
    const std::vector<LinkInfo> cables = Simulation(o).model().cluster().topology().links();
    uint32_t twice = 0, refused = 0;
    for (const LinkInfo& first : cables) {
        for (const LinkInfo& second : cables) {
            if (&first == &second || !pair(first, second)) continue;
            Simulation sim(o);
            all_to_all(sim, bytes);
            sim.engine().run(clean_ns / 4);
            if (sim.fail_cable(first.chip_a, first.port_a).kind != transport::RerouteDecision::kNewTables)
                fail_msg("the first cable was not routed round");
            sim.engine().run(clean_ns / 2);
            const transport::RerouteDecision d = sim.fail_cable(second.chip_a, second.port_a);
            if (d.kind == transport::RerouteDecision::kCutOff) continue;  // a corner chip's two cables
            if (d.kind == transport::RerouteDecision::kRefused) {
                if (d.why.find("could deadlock: chip") == std::string::npos) fail_msg("%s", d.why.c_str());
                ++refused;
                continue;
            }
            assert_int_equal(d.kind, transport::RerouteDecision::kNewTables);
            if (then) then(sim, second);
            sim.finish();
            check_all_to_all(sim, bytes);
            ++twice;
        }
    }
    print_message("%s: %u pairs of cables moved twice, %u second moves refused\n", cluster, twice, refused);
    return {twice, refused};
}

// A cable inside a mesh dies, then one between meshes: the second move
// gives every chip new exits, and keeps its routes inside its mesh as it
// holds them (the first cable's routers detour what crosses it). The
// control plane's own tables route round the first cable the other
// dimension first: written into every chip beside the routes still held,
// those turns closed cycles on VC 0 and the move was refused (28 of the 60
// pairs of a cable of mesh 0 and then one between meshes). Every pair of a cable
// inside mesh 0 of the spec's 4mesh3x3 and one of its two cables to mesh
// 2, under all-to-all traffic: all 24 move. The control plane lets a move's
// detours keep VC 2 into the next meshes where that is safe, or else fall
// back to VC 1 there: after chip 3's or 4's cable east, chip 8's south is
// safe only the second way (the detours from mesh 2 would keep VC 2 into
// mesh 0, where the first cable's turn the other way round on it), and
// mesh 0's one cable to mesh 1 only the first. Of all 240 pairs of a cable
// inside a mesh and then one between meshes, 226 moved this way (185 with
// every detour falling back, 221 with every detour keeping VC 2; 233 now
// that earlier detours may take new exits too).
void test_a_cable_between_meshes_after_one_inside_a_mesh(void**) {
    const auto mesh_of = [](uint32_t chip) { return chip / 9; };
    const auto [twice, refused] = fail_pairs("4mesh3x3", [&](const LinkInfo& first, const LinkInfo& second) {
        return mesh_of(first.chip_a) == 0 && mesh_of(first.chip_b) == 0 && mesh_of(second.chip_a) == 0 &&
               mesh_of(second.chip_b) == 2;
    });
    assert_int_equal(twice, 24);
    assert_int_equal(refused, 0);
}

// An earlier detour takes the new exits of a later move between meshes.
// Chip 20's cable south dies (inside mesh 2, on its way from mesh 0 to mesh
// 3), then mesh 0's one cable to mesh 1: mesh 0's new exit for mesh 1 is
// through mesh 2, where chip 20's detour still held its own move's exit
// for mesh 1, back through mesh 0, and the check refused the loop. Now the
// detour takes the new exits too (the check walks its old and new tables),
// and every byte arrives once. Of the 240 pairs of a cable inside a mesh and
// then one between meshes, 233 move (7 refused: 5 cycles, 2 loops either
// way; 226 before).
void test_an_earlier_detour_takes_the_new_exits(void**) {
    const auto [twice, refused] = fail_pairs("4mesh3x3", [](const LinkInfo& first, const LinkInfo& second) {
        return first.chip_a == 20 && first.port_a == 2 && second.chip_a == 5 && second.port_a == 1;
    });
    assert_int_equal(twice, 1);
    assert_int_equal(refused, 0);
}

// Packets the routers at both ends of the cable on (chip, port) have sent
// on it so far, and whether both run on it (neither routes round it).
std::pair<uint64_t, bool> over_the_cable(Simulation& sim, uint32_t chip, uint32_t port) {
    const abi::PortState& end = sim.model().cluster().memory(chip).control().port[port];
    uint64_t sent = 0;
    bool on_it = true;
    for (size_t r = 0; r < sim.model().router_count(); ++r) {
        const transport::FabricRouterPlan& p = sim.model().fabric().routers()[r];
        if (p.relay_for >= 0 ||
            !((p.chip == chip && p.port == port) || (p.chip == end.peer_chip && p.port == end.peer_port)))
            continue;
        const abi::FabricRouterStatus& st = sim.model().router_status(r);
        for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) sent += st.vc_packets_sent[v];
        on_it &= st.state == abi::kFabricRouterRunning && st.command != abi::kFabricReroute;
    }
    return {sent, on_it};
}

// A cable pulled under all-to-all traffic and plugged back in once the move
// round it has settled (a move between meshes holds the lanes a while): its
// routers take it again as on a QEMU cluster (off their relays, or back
// from their detours once those drained), traffic crosses it again and
// every byte arrives once. The model's routers kept their way round it
// until the next fabric. `how`: what the return says became of it.
void a_cable_returns_under_traffic(ModelOptions o, uint32_t chip, uint32_t port, const char* how) {
    const uint64_t clean_ns = clean_all_to_all_ns(o);
    Simulation sim(o);
    all_to_all(sim, kAllToAllBytes);
    sim.engine().run(clean_ns / 10);
    const transport::RerouteDecision d = sim.fail_cable(chip, port);
    if (d.kind != transport::RerouteDecision::kNewTables && d.kind != transport::RerouteDecision::kFallback)
        fail_msg("chip %u port %u: %s", chip, port, d.why.c_str());
    const std::string back = sim.restore_cable(chip, port);
    if (back.find(how) == std::string::npos) fail_msg("chip %u port %u back: %s", chip, port, back.c_str());
    const uint64_t at_return = over_the_cable(sim, chip, port).first;
    sim.finish();
    check_all_to_all(sim, kAllToAllBytes);
    const auto [at_end, on_it] = over_the_cable(sim, chip, port);
    assert_true(on_it);
    assert_true(at_end > at_return);
}

void test_a_cable_that_returns_under_traffic_is_taken_again(void**) {
    ModelOptions torus;
    torus.cluster = "torus4x4";
    torus.fabric.packet_bytes = 1024;
    a_cable_returns_under_traffic(torus, 5, abi::kFabricEast, "leave their detours");
    ModelOptions meshes = torus;
    meshes.cluster = "4mesh3x3";
    a_cable_returns_under_traffic(meshes, 5, abi::kFabricEast, "leave their detours");  // mesh 0's one to mesh 1
    ModelOptions planes = torus;
    planes.cluster = "mesh2x2-rv32";
    planes.fabric.fallback = true;
    a_cable_returns_under_traffic(planes, 1, abi::kFabricSouth, "leave their fallback relays");
}

// A cable between meshes that returns while another is still routed round:
// the tables the fabric was built with count on every cable, so its
// detours stayed until the next fabric. Now every chip takes the exits the
// control plane picks with it back and the other still dead, along the
// routes it holds, the other's detours take them too, and the cable carries
// again, where the deadlock check passes that state: each of the 24 pairs
// of a cable inside mesh 0 and then one of its two to mesh 2, the second
// plugged back in under all-to-all traffic, is taken again, and every byte
// arrives once. (Its routers paused at the return held what the first
// cable's detours sent their way, and those never drained: now they go on
// sending round, every lane held, until the fabric settles.)
void test_a_cable_between_meshes_back_while_another_is_round(void**) {
    const auto mesh_of = [](uint32_t chip) { return chip / 9; };
    uint32_t taken = 0;
    const auto [twice, refused] = fail_pairs(
        "4mesh3x3",
        [&](const LinkInfo& first, const LinkInfo& second) {
            return mesh_of(first.chip_a) == 0 && mesh_of(first.chip_b) == 0 && mesh_of(second.chip_a) == 0 &&
                   mesh_of(second.chip_b) == 2;
        },
        [&](Simulation& sim, const LinkInfo& second) {
            sim.engine().run(sim.engine().now_ns() + 4000);
            const std::string back = sim.restore_cable(second.chip_a, second.port_a);
            if (back.find("leave their detours") == std::string::npos)
                fail_msg("chip %u port %u back: %s", second.chip_a, second.port_a, back.c_str());
            ++taken;
        });
    assert_int_equal(twice, 24);
    assert_int_equal(refused, 0);
    assert_int_equal(taken, 24);
}

// On a mesh (one escape class, VC 1): every ordered pair of mesh3x3's cables.
void test_cables_of_a_mesh_fail_one_after_another_under_traffic(void**) {
    const auto [twice, refused] = fail_pairs("mesh3x3", [](const LinkInfo&, const LinkInfo&) { return true; });
    assert_true(twice > 2 * refused);  // most pairs: one move per fabric refused them all
}

// On a torus the detours ride VC 2, above the datelines' two: two cables of
// one ring (the pairs whose new routes mixed with the old on VC 0 and VC 1
// could wait in a circle) move one after the other. 95 of the 96 pairs do
// (without VC 2, 24 did); the last one's detours would close a cycle on VC 2
// with the first's.
void test_two_cables_of_a_torus_ring_fail_one_after_another_under_traffic(void**) {
    const auto same_ring = [](const LinkInfo& a, const LinkInfo& b) {
        const uint32_t width = 4;  // torus4x4: chip = 4 * y + x
        const bool a_row = a.port_a == 1 || a.port_a == 3, b_row = b.port_a == 1 || b.port_a == 3;  // E or W
        return a_row == b_row && (a_row ? a.chip_a / width == b.chip_a / width : a.chip_a % width == b.chip_a % width);
    };
    const auto [twice, refused] = fail_pairs("torus4x4", same_ring);
    assert_int_equal(twice + refused, 96);  // each of 32 cables, with the 3 others of its ring
    assert_true(refused <= 1);
}

// Random writes with a random cable failing under them, from a seed: every
// write arrives once, and the same seed gives the same run event for event.
void test_random_traffic_with_a_failure_is_reproducible(void**) {
    ModelOptions o;
    o.cluster = "torus4x4";
    o.fabric.packet_bytes = 1024;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
        const RandomRun a = random_traffic(o, seed, 300, 1);
        const RandomRun b = random_traffic(o, seed, 300, 1);
        assert_int_equal(a.failed.size(), 1);
        assert_int_equal(a.ns, b.ns);
        assert_int_equal(a.events, b.events);
    }
    // Two failures, one after the other: the second reroute moves traffic
    // that the first already moved. (A cable command that completed before
    // it was acknowledged once lost a packet here: seed 3.)
    assert_int_equal(random_traffic(o, 3, 1000, 2).failed.size(), 2);
}

// Random writes on mesh2x2-rv32 (a board of two planes, the fabric on plane
// 0) with a cable failing under them: seeds 1, 2, 4 and 7 fail a plane-0
// cable, whose way round each decision names (`how`).
void one_failure_on_a_two_plane_mesh(bool relays, const char* how) {
    ModelOptions o;
    o.cluster = "mesh2x2-rv32";
    o.fabric.fallback = relays;
    for (uint64_t seed : {1, 2, 4, 7}) {
        const RandomRun r = random_traffic(o, seed, 300, 1);
        assert_int_equal(r.failed.size(), 1);
        if (r.failed[0].find(how) == std::string::npos) fail_msg("seed %d: %s", int(seed), r.failed[0].c_str());
    }
}
// Without relays (no fallback: true) a dead cable gets new tables round it
// on plane 0. The model's control plane once offered plane 1's cable, which
// no relay stood on, and the traffic waited on the dead cable for good.
void test_a_two_plane_mesh_without_relays_routes_round_a_dead_cable(void**) {
    one_failure_on_a_two_plane_mesh(false, "new tables");
}
// With relays the same cables move onto plane 1's, through relays on ports
// 4 to 7. The model's firmware HAL once knew qemu-virt's four ports only,
// and a relay's first send panicked.
void test_a_two_plane_mesh_falls_back_onto_its_relays_under_traffic(void**) {
    one_failure_on_a_two_plane_mesh(true, "plane 1's cable");
}

// A cable and its fallback relay's cable both die under all-to-all traffic.
// Relay's first: the router, finding its relay's cable down, waits for the
// control plane, whose tables take it round the cable, and nothing is lost.
// The router's own first: it moves onto the relay, whose loss then leaves
// its traffic no cable, and the control plane says so, naming both.
void test_a_cable_and_its_fallback_relays_cable_both_die(void**) {
    uint64_t clean_ns;
    ModelOptions o = all_to_all_on("mesh2x2-rv32", &clean_ns);
    o.fabric.fallback = true;
    const uint32_t south = 2, south1 = 6;  // qemu-virt32: N E S W, then N1 E1 S1 W1
    for (bool relay_first : {true, false}) {
        Simulation sim(o);
        all_to_all(sim, kAllToAllBytes);
        sim.engine().run(clean_ns / 4);
        const transport::RerouteDecision first = sim.fail_cable(1, relay_first ? south1 : south);
        sim.engine().run(clean_ns / 4);
        const transport::RerouteDecision second = sim.fail_cable(1, relay_first ? south : south1);
        if (relay_first) {
            assert_int_equal(first.kind, transport::RerouteDecision::kNone);
            if (second.kind != transport::RerouteDecision::kNewTables) fail_msg("%s", second.why.c_str());
            sim.finish();
            check_all_to_all(sim, kAllToAllBytes);
            uint64_t on_escape = 0, over_relays = 0;  // detours ride VC 1 (a mesh's escape VC)
            for (size_t r = 0; r < sim.model().router_count(); ++r) {
                const abi::FabricRouterStatus& st = sim.model().router_status(r);
                (sim.model().fabric().routers()[r].relay_for >= 0 ? over_relays : on_escape) += st.vc_packets_sent[1];
            }
            assert_true(on_escape > 0);
        } else {
            assert_int_equal(first.kind, transport::RerouteDecision::kFallback);
            assert_int_equal(second.kind, transport::RerouteDecision::kRefused);
            if (second.why.find("fallback relay's cable for chip 1 port 2 died too") == std::string::npos)
                fail_msg("%s", second.why.c_str());
        }
    }
}

// A cable the control plane will not route round (a ring under bubble flow
// control has no VC to send packets back round on) leaves packets waiting
// on it. That is said so, with the refusal, and not called a deadlock of
// the tables.
void test_packets_stuck_on_an_unrouted_cable_are_told_from_a_deadlock(void**) {
    ModelOptions o;
    o.cluster = "ring8";
    o.fabric.bubble = true;
    try {
        random_traffic(o, 11, 500, 1);
        fail_msg("the writes over a refused cable arrived");
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("packets wait on cables that died and were not routed round") == std::string::npos ||
            what.find("a ring under bubble flow control has no VC to send packets back round on") ==
                std::string::npos ||
            what.find("the fabric deadlocked") != std::string::npos)
            fail_msg("%s", what.c_str());
    }
}

// A 16x16 mesh (256 chips: the TT-Fabric spec's meshes): a route from
// corner to corner takes 30 cables, more than a header holds (17), so its
// table entry holds the first 17 and the chip they reach routes the packet
// on by its own table (abi::kFabricLongRoutes). Every chip writes to its
// mirror image (x, y to 15 - x, 15 - y) and to the chip half the mesh away
// each way: every byte lands once, and the builder's deadlock check, which
// walks the routes as the routers cut them, passed.
void test_a_16x16_mesh_routes_past_a_headers_hops(void**) {
    ModelOptions o;
    o.cluster = "grid1x16x16";
    o.grid = GridCluster{1, 16, 16, 2};
    o.fabric.packet_bytes = 1024;
    Simulation sim(o);
    model::FabricModel& m = sim.model();
    assert_int_equal(m.chips(), 256);
    assert_true(m.fabric().spec().flags & abi::kFabricLongRoutes);
    const uint32_t bytes = 64;
    const auto mirror = [](uint32_t c) { return (15 - c % 16) + (15 - c / 16) * 16; };
    const auto half_away = [](uint32_t c) { return (c % 16 + 8) % 16 + (c / 16 + 8) % 16 * 16; };
    for (uint32_t from = 0; from < 256; ++from) {
        uint8_t* src = m.bytes(from, m.dram(1 << 20), bytes);
        std::fill(src, src + bytes, uint8_t(from + 1));
        for (const auto& to : {mirror(from), half_away(from)})
            sim.write(from, to, m.dram((4 << 20) + from * bytes), m.dram(1 << 20), bytes, m.dram(0));
    }
    sim.finish();
    for (uint32_t to = 0; to < 256; ++to) {
        assert_int_equal(m.word(to, m.dram(0)), 2);
        for (uint32_t from : {mirror(to), half_away(to)}) {  // both are their own inverses
            const uint8_t* got = m.bytes(to, m.dram((4 << 20) + from * bytes), bytes);
            for (uint32_t i = 0; i < bytes; ++i) assert_int_equal(got[i], uint8_t(from + 1));
        }
    }
}

void test_bad_input_is_named(void**) {
    bool refused = false;
    try {
        ring_collective(ring8(), "gather", 1 << 20);
    } catch (const Error& e) {
        refused = std::string(e.what()).find("'gather'") != std::string::npos;
    }
    assert_true(refused);
}

// Past a cluster file's 1024 chips and the 32 meshes the routers' table
// held: 64 meshes of 8x8 (4,096 chips) made in memory, each chip shifting
// 64 bytes to the next in the ring order (some pairs 14 meshes apart), every
// byte landing where it should. The chips share one arena and keep the start
// of the board's RAM: past it an address is refused by name. Bounds generous
// for a slow machine (here: about 1.5 s and 800 MB).
void test_4096_chips_in_64_meshes_deliver_every_byte(void**) {
    ModelOptions o;
    o.cluster = "grid64x8x8";
    o.grid = GridCluster{64, 8, 8, 2};
    o.fabric.packet_bytes = 1024;
    const double before = test::resident_mb();
    const auto t0 = std::chrono::steady_clock::now();
    Simulation sim(o);
    model::FabricModel& m = sim.model();
    const uint32_t n = m.chips(), chunk = 64;
    auto expected = [](uint32_t chip, uint32_t i) { return uint8_t(chip * 131 + i * 7 + 1); };
    for (uint32_t c = 0; c < n; ++c) {
        uint8_t* source = m.bytes(c, m.dram(1u << 20), chunk);  // traffic.cpp's kSource
        for (uint32_t i = 0; i < chunk; ++i) source[i] = expected(c, i);
    }
    const OpTime t = ring_shift(sim, 1, uint64_t(chunk) * n);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double grown = test::resident_mb() - before;
    fprintf(stderr, "4096 chips: shift of %u bytes each in %.2f s, %.0f MB resident more, %llu events\n", chunk,
            seconds, grown, (unsigned long long)t.events);
    assert_int_equal(n, 4096);
    const std::vector<uint32_t> order = Topology(m.cluster().topology()).ring_order();
    for (uint32_t p = 0; p < n; ++p) {
        const uint32_t from = order[p], to = order[(p + 1) % n];
        const uint8_t* got = m.bytes(to, m.dram(4u << 20), chunk);  // traffic.cpp's kOutput
        for (uint32_t i = 0; i < chunk; ++i)
            if (got[i] != expected(from, i))
                fail_msg("chip %u's byte %u from chip %u is %u, not %u", to, i, from, got[i], expected(from, i));
    }
    try {
        m.bytes(0, m.dram(0) + (400u << 20), 4);
        fail_msg("an address past what the model's chips keep was given");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "all that this model's chips keep"));
    }
#ifdef __SANITIZE_ADDRESS__
    const double slower = 4;  // make sanitize: 18 s here beside a build, 9 s alone
#else
    const double slower = 1;
#endif
    assert_true(seconds < 15 * slower);
    assert_true(grown < 2000);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hop_costs_the_same_everywhere_and_follows_the_costs),
        cmocka_unit_test(test_a_stream_is_held_by_the_cable_or_by_the_router),
        cmocka_unit_test(test_a_run_is_the_same_every_time),
        cmocka_unit_test(test_ring_collectives_on_a_torus),
        cmocka_unit_test(test_a_ring_without_dateline_deadlocks_and_the_cycle_is_named),
        cmocka_unit_test(test_every_cable_of_a_torus_fails_under_traffic_and_nothing_is_lost),
        cmocka_unit_test(test_every_cable_of_a_torus_run_as_a_mesh_fails_under_traffic),
        cmocka_unit_test(test_every_cable_of_a_ring_fails_under_traffic_and_nothing_is_lost),
        cmocka_unit_test(test_every_cable_of_four_meshes_fails_under_traffic),
        cmocka_unit_test(test_a_move_after_moves_between_meshes_is_checked_against_the_tables_held),
        cmocka_unit_test(test_a_rank_holds_only_its_own_chips_routers),
        cmocka_unit_test(test_a_plane_that_lost_a_cable_leaves_the_fabric_to_the_next),
        cmocka_unit_test(test_a_cable_between_meshes_after_one_inside_a_mesh),
        cmocka_unit_test(test_an_earlier_detour_takes_the_new_exits),
        cmocka_unit_test(test_a_cable_that_returns_under_traffic_is_taken_again),
        cmocka_unit_test(test_a_cable_between_meshes_back_while_another_is_round),
        cmocka_unit_test(test_cables_of_a_mesh_fail_one_after_another_under_traffic),
        cmocka_unit_test(test_two_cables_of_a_torus_ring_fail_one_after_another_under_traffic),
        cmocka_unit_test(test_random_traffic_with_a_failure_is_reproducible),
        cmocka_unit_test(test_a_two_plane_mesh_without_relays_routes_round_a_dead_cable),
        cmocka_unit_test(test_a_two_plane_mesh_falls_back_onto_its_relays_under_traffic),
        cmocka_unit_test(test_a_cable_and_its_fallback_relays_cable_both_die),
        cmocka_unit_test(test_packets_stuck_on_an_unrouted_cable_are_told_from_a_deadlock),
        cmocka_unit_test(test_a_16x16_mesh_routes_past_a_headers_hops),
        cmocka_unit_test(test_bad_input_is_named),
        cmocka_unit_test(test_4096_chips_in_64_meshes_deliver_every_byte),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
