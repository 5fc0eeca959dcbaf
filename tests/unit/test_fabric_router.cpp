// The 1D fabric on host-board chips (fabric_model.h): real routers and the
// real worker API over the devices library's engines, on line4 and ring8.
// Every byte and every count is checked; the credit invariant (no receiver
// channel ever holds more than its slots) is checked after every step.
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/error.h"
#include "devices/tt_link_cable.h"
#include "driver/paths.h"
#include "model/fabric_model.h"
#include "model_helpers.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/fabric_transport.h"
#include "transport/fabric/live_reroute.h"
#include "weft/abi/control_protocol.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using model::FabricModel;
using model::ModelPacket;
using test::small_options;
using transport::FabricDirection;

namespace {

constexpr int kMaxSteps = 200000;
// Regions of each chip's DRAM (offsets from its base).
constexpr uint32_t kSrc = 0x0, kDst = 0x100000, kSems = 0x200000, kIncs = 0x200100, kInline = 0x200200,
                   kScatter = 0x300000;
constexpr uint32_t kBlock = 16 * 1024;
constexpr uint32_t kOrdered = kInline + 0x100;  // ordered_inline_writes' words
constexpr uint32_t kOrderedWrites = 12;         // per pair of chips

// The host's side of live moves as it polls the model: a move started by
// reroute_live is stepped once a step after (settle_move), as Fabric::tend
// steps it on a cluster.
struct HostMoves {
    transport::PendingMove move;
    transport::RerouteDecision reroute(FabricModel& m, transport::ControlPlane& control, uint32_t chip, uint32_t port) {
        return transport::reroute_live(m.cluster(), m.fabric(), control, chip, port, move);
    }
    void poll(FabricModel& m) { transport::settle_move(m.cluster(), m.fabric(), move); }
    // Steps m until the move has settled, a look a step (after the traffic:
    // its on_step, which looks too, is done).
    void settle(FabricModel& m) {
        m.on_step = nullptr;
        for (int steps = 0; transport::settle_move(m.cluster(), m.fabric(), move); ++steps) {
            if (steps > 1000) fail_msg("the move did not settle in 1000 steps");
            m.step();
        }
        m.step();  // the routers see their lanes go again
    }
};

uint8_t pattern(uint32_t from, uint32_t to, uint32_t i) {
    return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + 1);
}

void fill_sources(FabricModel& m, uint32_t bytes) {
    for (uint32_t f = 0; f < m.chips(); ++f)
        for (uint32_t t = 0; t < m.chips(); ++t) {
            uint8_t* src = m.bytes(f, m.dram(kSrc + t * kBlock), bytes);
            for (uint32_t i = 0; i < bytes; ++i) src[i] = pattern(f, t, i);
        }
}

void run_to_completion(FabricModel& m) {
    try {
        const int steps = m.run(kMaxSteps);
        if (steps == kMaxSteps) fail_msg("not finished after %d steps: %u packets left", kMaxSteps, m.packets_left());
        // Routers sleep as on the cluster: none may have waited for its
        // fallback alarm to find work (a missed ring costs 100 ms there).
        if (m.late_wakes()) fail_msg("%u router wake-ups came from the alarm, not a ring", m.late_wakes());
    } catch (const host_board::Panic& e) {
        fail_msg("firmware panic %d, detail 0x%llx", e.code, static_cast<unsigned long long>(e.detail));
    } catch (const std::runtime_error& e) {
        fail_msg("%s", e.what());
    }
}

// Every chip sends every other chip a write of three packets' worth with a
// fused increment, an atomic increment, an inline write and a scatter write.
void every_chip_to_every_other(FabricModel& m) {
    constexpr uint32_t kBytes = 9000;  // 4032 + 4032 + 936: cut into three packets
    fill_sources(m, kBytes);
    const uint32_t n = m.chips();
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t t = 0; t < n; ++t) {
            if (f == t) continue;
            ModelPacket w;
            w.command = abi::kFabricWriteInc;
            w.src = m.dram(kSrc + t * kBlock);
            w.dst = m.dram(kDst + f * kBlock);
            w.bytes = kBytes;
            w.sem = m.dram(kSems + 4 * f);
            w.inc = 1;
            m.send(f, t, w, 0);
            ModelPacket inc;
            inc.command = abi::kFabricAtomicInc;
            inc.sem = m.dram(kIncs + 4 * f);
            inc.inc = f + 1;
            m.send(f, t, inc, 1);
            ModelPacket in;
            in.command = abi::kFabricInlineWrite;
            in.dst = m.dram(kInline + 4 * f);
            in.inc = 0xC0DE0000u | (f << 8) | t;
            m.send(f, t, in, 1);
            ModelPacket sc;
            sc.command = abi::kFabricScatterWrite;
            sc.src = m.dram(kSrc + t * kBlock);
            sc.dst = m.dram(kScatter + f * 1024);
            sc.scatter[0] = m.dram(kScatter + f * 1024 + 256);
            sc.scatter[1] = m.dram(kScatter + f * 1024 + 512);
            sc.bytes = 100;
            m.send(f, t, sc, 1);
        }
    run_to_completion(m);
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t f = 0; f < n; ++f) {
            if (f == t) continue;
            assert_int_equal(m.word(t, m.dram(kSems + 4 * f)), 1);
            assert_int_equal(m.word(t, m.dram(kIncs + 4 * f)), f + 1);
            assert_int_equal(m.word(t, m.dram(kInline + 4 * f)), 0xC0DE0000u | (f << 8) | t);
            const uint8_t* dst = m.bytes(t, m.dram(kDst + f * kBlock), kBytes + 1);
            for (uint32_t i = 0; i < kBytes; ++i)
                if (dst[i] != pattern(f, t, i)) fail_msg("chip %u -> %u: byte %u differs", f, t, i);
            assert_int_equal(dst[kBytes], 0);  // nothing past the write
            for (uint32_t part = 0; part < 3; ++part) {
                const uint8_t* s = m.bytes(t, m.dram(kScatter + f * 1024 + 256 * part), 101);
                for (uint32_t i = 0; i < 100; ++i)
                    if (s[i] != pattern(f, t, 100 * part + i)) fail_msg("scatter %u -> %u part %u differs", f, t, part);
                assert_int_equal(s[100], 0);
            }
        }
    for (uint32_t c = 0; c < n; ++c) assert_int_equal(m.events(c, abi::kEventDroppedPacket), 0);
}

void test_line4_every_chip_to_every_other(void**) {
    FabricModel m("line4", false, small_options());
    every_chip_to_every_other(m);
}
void test_ring8_every_chip_to_every_other(void**) {
    FabricModel m("ring8", true, small_options());
    every_chip_to_every_other(m);
}

// One write-with-increment from chip 0 to chip `to`, on its own lane (a
// model worker closes its lane once it sent everything).
void send_one(FabricModel& m, uint32_t to, uint32_t lane) {
    ModelPacket w;
    w.command = abi::kFabricWriteInc;
    w.src = m.dram(kSrc);
    w.dst = m.dram(kDst);
    w.bytes = 5000;  // two packets
    w.sem = m.dram(kSems);
    w.inc = 1;
    m.send(0, to, w, lane);
}

uint64_t total(FabricModel& m, bool sent) {
    uint64_t bytes = 0;
    for (uint32_t c = 0; c < m.chips(); ++c)
        for (FabricDirection d : {FabricDirection::kForward, FabricDirection::kBackward}) {
            const abi::FabricRouterStatus& s = m.status(c, d);
            bytes += sent ? s.bytes_sent : s.bytes_received;
        }
    return bytes;
}

// Paused routers send nothing over their cables, draining ones nothing from
// their workers; told to run again, every packet arrives exactly once. The
// routers' counters see every byte at both ends of a cable, and their time.
void test_paused_and_draining_routers_hold_traffic_until_told_to_run(void**) {
    FabricModel m("ring8", true, small_options());
    m.step();
    assert_int_equal(m.status(0, FabricDirection::kForward).state, abi::kFabricRouterRunning);
    for (uint32_t command : {abi::kFabricPause, abi::kFabricDrain}) {
        m.command_all(command);
        send_one(m, 3, command == abi::kFabricPause ? 0 : 1);
        for (int i = 0; i < 2000; ++i) m.step();
        assert_int_equal(m.status(0, FabricDirection::kForward).state,
                         command == abi::kFabricPause ? abi::kFabricRouterPaused : abi::kFabricRouterDraining);
        assert_int_equal(m.word(3, m.dram(kSems)), command == abi::kFabricPause ? 0 : 1);
        assert_int_equal(m.status(0, FabricDirection::kForward).bytes_sent,
                         command == abi::kFabricPause ? 0 : 5000 + 2 * 64);
        m.command_all(abi::kFabricRun);
        run_to_completion(m);
        assert_int_equal(m.word(3, m.dram(kSems)), command == abi::kFabricPause ? 1 : 2);
    }
    assert_int_equal(total(m, true), total(m, false));          // every byte sent was received
    assert_int_equal(total(m, true), 2 * 3 * (5000 + 2 * 64));  // two writes, three cables each
    const abi::FabricRouterStatus& s = m.status(0, FabricDirection::kForward);
    assert_true(s.heartbeat > 0 && s.busy_ticks > 0 && s.idle_ticks > 0);
}

// 2D: the routes come from the L0 tables, X first, and turn over the NoC
// from one router of a chip to another (on the torus onto VC 0 of the new
// dimension); every route reaches its chip, exactly once.
void test_mesh3x3_every_chip_to_every_other(void**) {
    FabricModel m("mesh3x3", small_options());
    every_chip_to_every_other(m);
    // A north router's first pass-through channel (after the two lanes) is
    // the one its chip's east router fills: packets that turned from X to Y.
    uint32_t turned = 0;
    for (uint32_t c = 0; c < m.chips(); ++c)
        if (m.fabric().router_index(c, FabricDirection::kNorth) >= 0)
            turned += m.status(c, FabricDirection::kNorth).senders[2].done;
    assert_true(turned > 0);
}
// Packets sent through a router, every channel.
uint32_t sent_by(FabricModel& m, uint32_t chip, FabricDirection d) {
    const abi::FabricRouterStatus& s = m.status(chip, d);
    uint32_t n = 0;
    for (uint32_t i = 0; i < abi::kFabricMaxSenders; ++i) n += s.senders[i].done;
    return n;
}

// The routers follow the control plane's tables: with the centre's east
// cable declared dead, every packet still arrives and none takes that cable.
void test_mesh3x3_routes_by_the_control_planes_tables(void**) {
    const ClusterSpec spec = load_cluster(paths::cluster_file("mesh3x3"), paths::load_built_board);
    transport::ControlPlane control(spec.board, ClusterTopology::from_spec(spec));
    const auto east = static_cast<uint32_t>(spec.board.port_for(abi::kFabricEast, 0));
    assert_int_equal(control.cable_down(4, east).kind, transport::RerouteDecision::kNewTables);
    const Mesh& mesh = spec.meshes[0];
    FabricModel m("mesh3x3", small_options(), [&](uint32_t a, uint32_t b) { return control.l0_route(mesh, a, b); });
    every_chip_to_every_other(m);
    assert_int_equal(sent_by(m, 4, FabricDirection::kEast), 0);
    assert_int_equal(sent_by(m, 5, FabricDirection::kWest), 0);
    assert_true(sent_by(m, 4, FabricDirection::kSouth) > 0);  // the detours run somewhere
}

void test_torus4x4_every_chip_to_every_other(void**) {
    FabricModel m("torus4x4", small_options());
    every_chip_to_every_other(m);
    uint32_t vc1 = 0, vc1_sent = 0;  // packets that crossed a wrap cable went on in VC 1
    for (uint32_t c = 0; c < m.chips(); ++c)
        for (FabricDirection d :
             {FabricDirection::kNorth, FabricDirection::kEast, FabricDirection::kSouth, FabricDirection::kWest}) {
            const abi::FabricRouterStatus& s = m.status(c, d);
            vc1 += s.receivers[1].done;
            vc1_sent += s.vc_packets_sent[1];
            // The per-VC counters add up to the router's totals.
            assert_int_equal(s.vc_bytes_sent[0] + s.vc_bytes_sent[1], s.bytes_sent);
            assert_int_equal(s.vc_bytes_received[0] + s.vc_bytes_received[1], s.bytes_received);
        }
    assert_true(vc1 > 0);
    assert_int_equal(vc1_sent, vc1);  // what went on VC 1 is what came off it
}

// Ethernet fallback: ring8x2's plane-0 fabric, a relay on each plane-1
// cable. A plane-0 cable is pulled while every chip writes every other: its
// two routers agree over the fallback which of their packets arrived, send
// the rest again there, and go on over it; every byte and every count is
// right (an increment sent twice would show), and both routers say so. They
// stay on the fallback if it comes back (the next fabric built takes it).
void test_a_pulled_cable_moves_onto_its_fallback(void**) {
    uint32_t resent = 0;
    // Pulled at different moments: before, during and at the end of the traffic across it.
    for (int pull_at : {3, 10, 20, 30, 45, 60, 80}) {
        FabricSpec o = small_options();
        o.fallback = true;
        FabricModel m("ring8x2", true, o);
        assert_int_equal(m.fabric().routers().size(), 2 * 2 * m.chips());  // a relay beside each router
        const auto east0 = static_cast<uint32_t>(m.cluster().board().port_for(abi::kFabricEast, 0));
        Ethernet& eth = m.cluster().devices().ethernet();
        const int cable = eth.link_index(0, east0);
        assert_true(cable >= 0);
        int steps = 0;
        // Plugged back in half the runs: what the cable still held lands late, and is ignored.
        const bool replug = pull_at % 2 == 0;
        m.on_step = [&] {
            if (++steps == pull_at) eth.set_link_up(size_t(cable), false);
            if (replug && steps == pull_at + 15) eth.set_link_up(size_t(cable), true);
        };
        every_chip_to_every_other(m);
        assert_true(steps > pull_at);
        uint32_t relayed = 0;
        for (const transport::FabricRouterPlan& p : m.fabric().routers())
            if (p.relay_for >= 0 && p.chip <= 1)
                relayed += reinterpret_cast<const abi::FabricRouterStatus*>(
                               m.bytes(p.chip, p.config.status, sizeof(abi::FabricRouterStatus)))
                               ->forwarded;
        assert_true(relayed > 0);  // the rest of the traffic went round over plane 1
        for (auto [chip, way] : {std::pair{0u, FabricDirection::kForward}, std::pair{1u, FabricDirection::kBackward}}) {
            const abi::FabricRouterStatus& s = m.status(chip, way);
            assert_int_equal(s.state, abi::kFabricRouterRerouted);
            assert_int_equal(s.link_downs, 1);
            assert_int_equal(m.events(chip, abi::kEventRerouted), 1);
            resent += s.resent;
        }
    }
    assert_true(resent > 0);  // some pull caught packets on the wire, which went again
}

// In order per sender: every chip writes every other `count` words into one
// address, each packet on the same lane; the last must be what lands.
void ordered_inline_writes(FabricModel& m, uint32_t count) {
    const uint32_t n = m.chips();
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t t = 0; t < n; ++t) {
            if (f == t) continue;
            for (uint32_t k = 1; k <= count; ++k) {
                ModelPacket in;
                in.command = abi::kFabricInlineWrite;
                in.dst = m.dram(kOrdered + 4 * f);
                in.inc = (f << 24) | (t << 16) | k;
                m.send(f, t, in, 1);
            }
        }
}

// Every chip's last inline write from every other landed last: no packet
// overtook an earlier one of its lane.
void check_last_words_last(FabricModel& m, uint32_t count, int pull_at) {
    for (uint32_t t = 0; t < m.chips(); ++t)
        for (uint32_t f = 0; f < m.chips(); ++f)
            if (f != t && m.word(t, m.dram(kOrdered + 4 * f)) != ((f << 24) | (t << 16) | count))
                fail_msg("pulled at %d: chip %u's last word from %u is 0x%x", pull_at, t, f,
                         m.word(t, m.dram(kOrdered + 4 * f)));
}

// The cable comes back under traffic: the control plane tells both routers
// (kFabricRejoin), each sends a mark per VC over the fallback after what
// went there, and takes the cable again. Whatever the moment, every byte and
// count is right, every chip's last inline write from every other lands
// last (no packet overtook an earlier one of its lane), both routers run on
// their cable again and carried packets over it after the return, and each
// posted rerouted and rejoined once. Frames the cable still held when it
// died land on its return and are skipped. `a` and `b`: the directions of
// chip 0's and chip 1's routers on the cable between them (plane 0).
// Returns whether packets crossed the cable after its return (none may be
// left to, late in the traffic).
bool rejoin_under_traffic(FabricModel& m, int pull_at, FabricDirection a, FabricDirection b) {
    const auto east0 = static_cast<uint32_t>(m.cluster().board().port_for(abi::kFabricEast, 0));
    transport::ControlPlane control(m.cluster().board(), m.cluster().topology(), 0, true);
    Ethernet& eth = m.cluster().devices().ethernet();
    const size_t cable = size_t(eth.link_index(0, east0));
    int steps = 0;
    std::string rejoined = "never asked", early;
    uint64_t sent_at_return = 0;
    HostMoves moves;
    m.on_step = [&] {
        moves.poll(m);
        ++steps;
        if (steps == pull_at) eth.set_link_up(cable, false);
        if (steps == pull_at + 3) moves.reroute(m, control, 0, east0);
        if (steps == pull_at + 6) early = transport::rejoin_live(m.cluster(), m.fabric(), control, 0, east0);
        if (steps == pull_at + 12) eth.set_link_up(cable, true);
        if (steps == pull_at + 18) {
            rejoined = transport::rejoin_live(m.cluster(), m.fabric(), control, 0, east0);
            sent_at_return = m.status(0, a).bytes_sent + m.status(1, b).bytes_sent;
        }
    };
    ordered_inline_writes(m, kOrderedWrites);
    every_chip_to_every_other(m);
    if (steps <= pull_at + 18) fail_msg("all of it arrived in %d steps, before the return", steps);
    if (!rejoined.empty()) fail_msg("pulled at %d: not rejoined: %s", pull_at, rejoined.c_str());
    assert_string_equal(early.c_str(), "it is still down");  // asked before the cable was back
    check_last_words_last(m, kOrderedWrites, pull_at);
    for (auto [chip, way] : {std::pair{0u, a}, std::pair{1u, b}}) {
        const abi::FabricRouterStatus& s = m.status(chip, way);
        assert_int_equal(s.state, abi::kFabricRouterRunning);
        assert_int_equal(s.link_downs, 1);
        assert_int_equal(m.events(chip, abi::kEventRerouted), 1);
        assert_int_equal(m.events(chip, abi::kEventRejoined), 1);
    }
    return m.status(0, a).bytes_sent + m.status(1, b).bytes_sent > sent_at_return;
}

void test_a_returned_ring_cable_takes_its_traffic_back_live(void**) {
    int crossed = 0;
    for (int pull_at : {3, 10, 25, 40, 60, 90}) {
        FabricSpec o = small_options();
        o.fallback = true;
        FabricModel m("ring8x2", true, o);
        crossed += rejoin_under_traffic(m, pull_at, FabricDirection::kForward, FabricDirection::kBackward);
    }
    assert_true(crossed >= 3);
}

void test_a_returned_mesh_cable_takes_its_traffic_back_live(void**) {
    int crossed = 0;
    for (int pull_at : {2, 6, 12, 20}) {
        FabricSpec o = small_options();
        o.fallback = true;
        FabricModel m("mesh2x2-rv32", o);
        crossed += rejoin_under_traffic(m, pull_at, FabricDirection::kEast, FabricDirection::kWest);
    }
    assert_true(crossed >= 2);
}

// The cable comes back after the control plane routed round it by tables,
// under every-pair traffic and ordered inline writes: the move round it
// settles first (the host steps it each step), then the cable returns; from a
// few steps after, the host asks each step, as it polls, and the return goes
// a step at a time (both routers paused, the detours drained, both back on
// the cable). Every byte and count is right, every chip's last word from
// every other lands last (across both moves), both routers run on the
// cable, and each posted rejoined once. Returns whether packets crossed the
// cable after.
bool return_from_tables_under_traffic(FabricModel& m, uint32_t chip, FabricDirection a, FabricDirection b,
                                      int pull_at) {
    const BoardInfo& board = m.cluster().board();
    const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
    transport::ControlPlane control(board, m.cluster().topology());
    Ethernet& eth = m.cluster().devices().ethernet();
    const size_t cable = size_t(eth.link_index(chip, east));
    const uint32_t peer = m.cluster().control(chip).port[east].peer_chip;
    int steps = 0, rejoined_at = 0;
    transport::RerouteDecision d;
    uint64_t sent_at_return = 0;
    transport::PendingReturn back;
    std::vector<transport::ReturnStep> went;
    HostMoves moves;
    int back_at = 0;
    m.on_step = [&] {
        moves.poll(m);
        ++steps;
        if (steps == pull_at) eth.set_link_up(cable, false);
        if (steps == pull_at + 3) d = moves.reroute(m, control, chip, east);
        if (!back_at && steps >= pull_at + 12 && moves.move.phase == transport::PendingMove::kNone) {
            eth.set_link_up(cable, true);  // once the move round it has settled
            back_at = steps;
        }
        if (back_at && steps >= back_at + 3 && !rejoined_at) {
            went.push_back(transport::return_from_detours(m.cluster(), m.fabric(), control, chip, east, back));
            if (went.back() == transport::ReturnStep::kRejoined) {
                rejoined_at = steps;
                sent_at_return = m.status(chip, a).bytes_sent + m.status(peer, b).bytes_sent;
            }
        }
    };
    ordered_inline_writes(m, kOrderedWrites);
    every_chip_to_every_other(m);
    if (d.kind != transport::RerouteDecision::kNewTables) fail_msg("pulled at %d: %s", pull_at, d.why.c_str());
    if (!rejoined_at) fail_msg("pulled at %d: not back on the cable when the traffic ended (%d steps)", pull_at, steps);
    check_last_words_last(m, kOrderedWrites, pull_at);
    assert_int_equal(went.front(), transport::ReturnStep::kPaused);
    for (auto [at, way] : {std::pair{chip, a}, std::pair{peer, b}}) {
        assert_int_equal(m.status(at, way).state, abi::kFabricRouterRunning);
        assert_int_equal(m.events(at, abi::kEventRejoined), 1);
    }
    return m.status(chip, a).bytes_sent + m.status(peer, b).bytes_sent > sent_at_return;
}

void test_a_returned_cable_leaves_its_detours_live(void**) {
    int crossed = 0, runs = 0;
    for (int pull_at : {3, 10, 20}) {
        FabricModel mesh("mesh3x3", small_options());
        crossed += return_from_tables_under_traffic(mesh, 4, FabricDirection::kEast, FabricDirection::kWest, pull_at);
        FabricModel torus("torus4x4", small_options());
        crossed += return_from_tables_under_traffic(torus, 5, FabricDirection::kEast, FabricDirection::kWest, pull_at);
        FabricModel ring("ring8", true, small_options());
        crossed +=
            return_from_tables_under_traffic(ring, 2, FabricDirection::kForward, FabricDirection::kBackward, pull_at);
        runs += 3;
    }
    if (crossed < runs / 2) fail_msg("packets crossed the returned cable in %d of %d runs", crossed, runs);
}

// A cable between meshes comes back too (mesh 2's chip 8 east to mesh 3's
// chip 6): its move gave every chip new exits, and its return holds every
// worker lane until the fabric has settled, gives every chip back the tables
// the fabric was built with and takes the cable again, live. Every lane
// keeps its order through both moves.
void test_a_returned_cable_between_meshes_takes_its_exits_back_live(void**) {
    int crossed = 0;
    for (int pull_at : {3, 10, 20}) {
        FabricModel m("4mesh3x3", small_options());
        crossed += return_from_tables_under_traffic(m, 26, FabricDirection::kEast, FabricDirection::kWest, pull_at);
        for (const transport::FabricRouterPlan& r : m.fabric().routers())
            if (r.config.route_table)
                assert_memory_equal(m.bytes(r.chip, r.config.route_table, sizeof(abi::FabricRouteTable)),
                                    &m.fabric().table(r.chip), sizeof(abi::FabricRouteTable));
    }
    if (crossed < 2) fail_msg("packets crossed the returned cable in %d of 3 runs", crossed);
}

// A cable whose fallback relay's cable died before it: the router sees its
// relay's cable down and does not move onto it, and the control plane's
// tables (a few steps later, as a host polls) take its traffic round both;
// everything arrives once. (It moved onto the dead relay and waited there
// for good.)
void test_a_cable_whose_relays_cable_is_dead_is_routed_round(void**) {
    for (int pull_at : {4, 8, 12}) {
        FabricSpec o = small_options();
        o.fallback = true;
        FabricModel m("mesh2x2-rv32", o);
        const BoardInfo& board = m.cluster().board();
        const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
        const auto east1 = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 1));
        transport::ControlPlane control(board, m.cluster().topology(), 0, true);
        Ethernet& eth = m.cluster().devices().ethernet();
        int steps = 0;
        transport::RerouteDecision relay, cable;
        HostMoves moves;
        m.on_step = [&] {
            moves.poll(m);
            ++steps;
            if (steps == 2) {
                eth.set_link_up(size_t(eth.link_index(0, east1)), false);
                relay = moves.reroute(m, control, 0, east1);
            }
            if (steps == pull_at) eth.set_link_up(size_t(eth.link_index(0, east)), false);
            if (steps == pull_at + 3) cable = moves.reroute(m, control, 0, east);
        };
        every_chip_to_every_other(m);
        moves.settle(m);
        if (steps <= pull_at + 3) fail_msg("all of it arrived in %d steps, before the pull", steps);
        assert_int_equal(relay.kind, transport::RerouteDecision::kNone);
        if (cable.kind != transport::RerouteDecision::kNewTables)
            fail_msg("pulled at %d: %s", pull_at, cable.why.c_str());
        assert_int_equal(m.status(0, FabricDirection::kEast).state, abi::kFabricRouterRerouted);
    }
}

// Live rerouting where no other plane's cable exists: chip `chip`'s east
// cable pulled under all-pairs traffic, at several points of it; the control
// plane's new tables go into the routers, the cable's two routers settle
// which packets crossed (counts read at both ends) and send the rest, and
// every later packet for the cable, round by the new routes. Everything
// arrives exactly once. Returns the packets the routers sent on VC 1.
uint64_t pull_under_all_pairs(const char* cluster, uint32_t chip, std::initializer_list<int> pulls_at,
                              const FabricSpec& options = small_options()) {
    uint32_t resent = 0;
    uint64_t on_vc1 = 0;
    for (int pull_at : pulls_at) {
        FabricModel m(cluster, options);
        const BoardInfo& board = m.cluster().board();
        const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
        transport::ControlPlane control(board, m.cluster().topology());
        Ethernet& eth = m.cluster().devices().ethernet();
        const int cable = eth.link_index(chip, east);
        int steps = 0;
        transport::RerouteDecision d;
        HostMoves moves;
        m.on_step = [&] {
            moves.poll(m);
            ++steps;
            if (steps == pull_at) eth.set_link_up(size_t(cable), false);
            if (steps == pull_at + 3) d = moves.reroute(m, control, chip, east);
        };
        ordered_inline_writes(m, kOrderedWrites);
        every_chip_to_every_other(m);
        moves.settle(m);
        if (steps <= pull_at + 3) fail_msg("%s: all of it arrived in %d steps, before the pull", cluster, steps);
        if (d.kind != transport::RerouteDecision::kNewTables) fail_msg("%s: %s", cluster, d.why.c_str());
        check_last_words_last(m, kOrderedWrites, pull_at);
        for (auto [at, way] : {std::pair{chip, FabricDirection::kEast}, std::pair{chip + 1, FabricDirection::kWest}}) {
            const abi::FabricRouterStatus& s = m.status(at, way);
            assert_int_equal(s.state, abi::kFabricRouterRerouted);
            assert_int_equal(m.events(at, abi::kEventRerouted), 1);
            resent += s.resent;
        }
        for (const transport::FabricRouterPlan& r : m.fabric().routers())
            on_vc1 += m.status(r.chip, r.direction).vc_packets_sent[1];
    }
    fprintf(stderr, "%s: packets sent again round the dead cable, over %zu pulls: %u\n", cluster, pulls_at.size(),
            resent);
    return on_vc1;
}

void test_a_pulled_torus_cable_is_routed_round_live(void**) { pull_under_all_pairs("torus4x4", 5, {5, 20, 40, 70}); }

// Under bubble flow control too: the packets the cable's routers turn back
// the other way round its row join that row's other direction, one loop the
// bubble keeps moving, so the move's check (ring by ring) passes; every
// packet stays on VC 0.
void test_a_pulled_cable_of_a_bubble_torus_is_routed_round_live(void**) {
    FabricSpec bubble = small_options();
    bubble.bubble = true;
    assert_int_equal(pull_under_all_pairs("torus4x4", 5, {5, 15, 25, 40}, bubble), 0);  // deeper buffers: done sooner
}

// On a mesh the detours round the centre chip's east cable travel on the
// escape VC (a mesh's routes use VC 0 only), by detour tables the cable's
// two routers alone hold: every chip's own tables stay as they were. A
// second cable under the same fabric moves too (its check walks the first's
// detours, which may meet it), again by its own routers' detour tables.
void test_a_pulled_mesh_cable_is_routed_round_on_the_escape_vc(void**) {
    assert_true(pull_under_all_pairs("mesh3x3", 4, {3, 10, 20, 40}) > 0);
    FabricModel m("mesh3x3", small_options());
    const BoardInfo& board = m.cluster().board();
    transport::ControlPlane control(board, m.cluster().topology());
    Ethernet& eth = m.cluster().devices().ethernet();
    const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
    const auto south = static_cast<uint32_t>(board.port_for(abi::kFabricSouth, 0));
    eth.set_link_up(size_t(eth.link_index(4, east)), false);
    HostMoves moves;
    assert_int_equal(moves.reroute(m, control, 4, east).kind, transport::RerouteDecision::kNewTables);
    moves.settle(m);
    const auto chip_tables_stay = [&] {
        for (const transport::FabricRouterPlan& r : m.fabric().routers()) {
            const auto* held = reinterpret_cast<const abi::FabricRouteTable*>(
                m.bytes(r.chip, r.config.route_table, sizeof(abi::FabricRouteTable)));
            assert_memory_equal(held, &m.fabric().table(r.chip), sizeof(abi::FabricRouteTable));
        }
    };
    chip_tables_stay();
    eth.set_link_up(size_t(eth.link_index(0, south)), false);
    const transport::RerouteDecision second = moves.reroute(m, control, 0, south);
    moves.settle(m);
    assert_int_equal(second.kind, transport::RerouteDecision::kNewTables);
    chip_tables_stay();
    // The detour tables: the second cable's routers route round both cables;
    // the first's keep the detours they were given.
    const auto detour_to = [&](uint32_t chip, uint32_t port, uint32_t to) {
        for (const transport::FabricRouterPlan& r : m.fabric().routers())
            if (r.chip == chip && r.port == port)
                return reinterpret_cast<const abi::FabricRouteTable*>(
                           m.bytes(r.chip, r.config.detour_table, abi::kFabricDetourTableBytes))
                    ->to[to];
        fail_msg("no router on chip %u port %u", chip, port);
        return abi::FabricRouteEntry{};
    };
    assert_int_equal(detour_to(0, south, 3).first, abi::kFabricEast);  // 0 to 3 (south) goes east, round it
    assert_int_equal(detour_to(4, east, 5).first, abi::kFabricNorth);  // 4 to 5 (east) as the first move gave
}

// A fabric planned narrower than its cluster (torus4x4 run as a mesh, its
// wrap cables unused) cannot take the control plane's tables round a dead
// cable (they go the other way round the ring): the move is refused, naming
// why, and the tables stay as they were.
void test_a_move_onto_cables_the_fabric_lacks_is_refused(void**) {
    const ClusterSpec spec = load_cluster(paths::cluster_file("torus4x4"), paths::load_built_board);
    model::HostCluster cluster(spec);
    const transport::FabricBuilder fabric =
        transport::mesh_fabric(spec.board, cluster.topology(), small_options(), /*wrap=*/false);
    transport::ControlPlane control(spec.board, cluster.topology());
    const auto east = static_cast<uint32_t>(spec.board.port_for(abi::kFabricEast, 0));
    transport::PendingMove unused;
    const transport::RerouteDecision d = transport::reroute_live(cluster, fabric, control, 5, east, unused);
    assert_int_equal(d.kind, transport::RerouteDecision::kRefused);
    assert_true(d.why.find("cables the running fabric does not use") != std::string::npos);
}

// Between meshes the move itself is checked. Mesh 2's chip 4 (chip 22)
// loses its cable east (its routers detour round it on VC 2), then chip 8
// (26) its cable east to mesh 3: the new exits send mesh 2's traffic for
// mesh 3 the long way, and whether the detours keep VC 2 into the next
// meshes or fall back to VC 1 there, with the first cable's detours they
// could close a cycle. So the control plane refuses to move the running
// fabric, naming the cycle, and writes no table and no detour (the op
// fails; the next fabric is planned without the cables, whose own tables
// cannot deadlock).
void test_an_inter_mesh_move_that_could_deadlock_is_refused(void**) {
    FabricModel m("4mesh3x3", small_options());
    const BoardInfo& board = m.cluster().board();
    const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
    transport::ControlPlane control(board, m.cluster().topology());
    Ethernet& eth = m.cluster().devices().ethernet();
    HostMoves moves;
    eth.set_link_up(size_t(eth.link_index(22, east)), false);
    assert_int_equal(moves.reroute(m, control, 22, east).kind, transport::RerouteDecision::kNewTables);
    moves.settle(m);
    eth.set_link_up(size_t(eth.link_index(26, east)), false);
    const abi::FabricRouteTable before = m.fabric().table(0);
    const transport::RerouteDecision d = moves.reroute(m, control, 26, east);
    assert_int_equal(d.kind, transport::RerouteDecision::kRefused);
    assert_true(d.why.find("could deadlock: chip") != std::string::npos);
    const auto& route_table = m.fabric().routers()[size_t(m.fabric().router_index(0, FabricDirection::kEast))];
    const auto* written = reinterpret_cast<const abi::FabricRouteTable*>(
        m.bytes(0, route_table.config.route_table, sizeof(abi::FabricRouteTable)));
    assert_memory_equal(written, &before, sizeof before);
    const auto& dead = m.fabric().routers()[size_t(m.fabric().router_index(26, FabricDirection::kEast))];
    assert_int_equal(reinterpret_cast<const abi::FabricRouteTable*>(
                         m.bytes(26, dead.config.detour_table, sizeof(abi::FabricRouteTable)))
                         ->meshes,
                     0);
    // The fabric the next op plans, without the cables, passes the check on its own.
    ClusterTopology t = m.cluster().topology();
    std::vector<LinkInfo> links = t.links();
    for (LinkInfo& l : links)
        l.up = l.up && !(l.chip_a == 22 && l.port_a == east) && !(l.chip_a == 26 && l.port_a == east);
    assert_int_equal(transport::multi_mesh_fabric(board, t.with_links(links), small_options()).routers().size(),
                     m.fabric().routers().size() - 4);
}

// Many meshes: every packet of another mesh goes to an exit node by its L0
// route, crosses, and is routed on where it enters (L0 in its destination
// mesh, L1 again in a mesh it only crosses); all of it arrives, exactly once.
void test_4mesh3x3_every_chip_to_every_other(void**) {
    FabricModel m("4mesh3x3", small_options());
    every_chip_to_every_other(m);
    // Packets enter another mesh on the inter-mesh VC: mesh 1 at its chip 3
    // (cluster chip 12) from the west, mesh 3 at its chip 2 (29) from the north.
    assert_true(m.status(12, FabricDirection::kWest).receivers[1].done > 0);
    assert_true(m.status(29, FabricDirection::kNorth).receivers[1].done > 0);
    assert_int_equal(m.status(12, FabricDirection::kWest).receivers[0].done, 0);
}

// The route decisions of a packet from mesh 0's chip 0 to mesh 3's chip 4,
// hop by hop through the builder's tables, as each router takes them: its
// source route ends at each mesh's entry, where that chip's tables write the
// next one.
void test_4mesh3x3_routes_are_rewritten_at_each_mesh_entry(void**) {
    FabricModel m("4mesh3x3", small_options());
    const transport::FabricBuilder& f = m.fabric();
    const uint32_t from = 0, to = 31;  // mesh 3 chip 4
    const transport::FabricRoute first = f.route(from, to);
    assert_int_equal(first.hops, 4);  // E E S to the exit node, chip 5, then its E cable
    abi::FabricPacketHeader h = abi::fabric_unicast_write(f.node(from), f.node(to), first.hops, 0, 0, 0);
    h.route = first.route;
    std::vector<uint32_t> path{from}, rewritten;
    uint32_t chip = from, dir = static_cast<uint32_t>(first.direction);
    for (int guard = 0; guard < 32; ++guard) {
        const int r = f.router_index(chip, transport::compass_direction(dir));
        assert_true(r >= 0);
        chip = f.routers()[r].peer_chip;
        path.push_back(chip);
        const uint8_t hops_before = h.hops;
        const fabric::Decision d = fabric::on_receive(h, fabric::Hop{2, dir ^ 2, f.node(chip), &f.table(chip)});
        assert_false(d.expired || d.lost);
        if (hops_before == 1 && d.forward) rewritten.push_back(chip);
        if (!d.forward) break;
        dir = d.next;
    }
    assert_int_equal(path.back(), to);
    // Mesh 0 -> 1 -> 3 (weft's L1: the lowest next mesh on a tie): rewritten
    // at mesh 1's entry (its chip 3, cluster 12) and mesh 3's (its chip 2, 29).
    assert_int_equal(rewritten.size(), 2);
    assert_int_equal(rewritten[0], 12);
    assert_int_equal(rewritten[1], 29);
    for (uint32_t exit : {5u, 17u}) assert_true(std::find(path.begin(), path.end(), exit) != path.end());
}

// A packet that enters a mesh whose tables have no way on toward its
// destination (a table entry of 0 hops) is lost, not forwarded or executed:
// the router drops it and reports a routing error.
void test_a_packet_with_no_way_on_is_dropped_not_executed(void**) {
    abi::FabricRouteTable table{};
    table.chips = 9;
    table.meshes = 4;
    const abi::FabricNodeId self{1, 3};
    abi::FabricPacketHeader h = abi::fabric_unicast_write({0, 0}, {3, 4}, 1, 0, 0x1000, 64);
    fabric::Decision d = fabric::on_receive(h, fabric::Hop{2, abi::kFabricWest, self, &table});
    assert_true(d.lost);
    assert_false(d.deliver || d.forward);
    table.to_mesh[3] = {2, abi::kFabricSouth, 0, abi::kFabricSouth};  // now: S, S
    h = abi::fabric_unicast_write({0, 0}, {3, 4}, 1, 0, 0x1000, 64);
    d = fabric::on_receive(h, fabric::Hop{2, abi::kFabricWest, self, &table});
    assert_true(d.forward && !d.deliver && !d.lost);
    assert_int_equal(d.next, abi::kFabricSouth);
    assert_int_equal(h.hops, 2);
    // A destination beyond the table (mesh 7 of 4) is lost too.
    h = abi::fabric_unicast_write({0, 0}, {7, 0}, 1, 0, 0x1000, 64);
    assert_true(fabric::on_receive(h, fabric::Hop{2, abi::kFabricWest, self, &table}).lost);
}

// A worker finds every route in its chip's L0 table, as the builder made it:
// the first direction, the later ones and the hop count (the seed's DOR).
void test_workers_look_routes_up_in_the_l0_table(void**) {
    FabricModel m("mesh3x3", small_options());
    for (uint32_t f = 0; f < m.chips(); ++f)
        for (uint32_t t = 0; t < m.chips(); ++t) {
            uint8_t first = 0xff;
            const fabric::Route r = m.look_up(f, t, &first);
            const transport::FabricRoute want = m.fabric().route(f, t);
            assert_int_equal(r.hops, want.hops);
            assert_int_equal(r.dst.chip, t);
            if (f == t) continue;
            assert_int_equal(transport::compass_direction(first), want.direction);
            assert_int_equal(r.route, want.route);
        }
    // The seed's example: chip 0 to chip 5 is E E S; chip 8 to chip 0 is W W N N.
    const auto letters = [](const transport::FabricRoute& r) {
        std::string s(1, abi::fabric_letter(static_cast<uint32_t>(r.direction)));
        for (uint32_t h = 1, bits = r.route; h < r.hops; ++h, bits >>= 2) s += abi::fabric_letter(bits);
        return s;
    };
    assert_string_equal(letters(m.fabric().route(0, 5)).c_str(), "EES");
    assert_string_equal(letters(m.fabric().route(8, 0)).c_str(), "WWNN");
}

// A multicast along a row: from chip 3 of mesh3x3 (0, 1) east, delivered by
// chips 4 and 5 and nobody else.
void test_2d_multicast_along_a_row_reaches_its_span_only(void**) {
    FabricModel m("mesh3x3", small_options());
    fill_sources(m, 512);
    ModelPacket p;
    p.command = abi::kFabricWriteInc;
    p.src = m.dram(kSrc);
    p.dst = m.dram(kDst);
    p.bytes = 512;
    p.sem = m.dram(kSems);
    p.inc = 1;
    p.route.count = 2;
    m.send(3, 4, p, 0);
    run_to_completion(m);
    for (uint32_t c = 0; c < m.chips(); ++c) assert_int_equal(m.word(c, m.dram(kSems)), c == 4 || c == 5 ? 1 : 0);
    const uint8_t* got = m.bytes(5, m.dram(kDst), 512);
    for (uint32_t i = 0; i < 512; ++i)
        if (got[i] != pattern(3, 0, i)) fail_msg("byte %u differs", i);
}

// 2D traffic that saturates its channels (two slots deep, one lane): `pairs`
// (from, to) each send 40 packets of 4000 bytes.
struct Saturated2D {
    FabricModel m;
    uint32_t expected = 0;
    Saturated2D(const char* cluster, const std::vector<std::pair<uint32_t, uint32_t>>& pairs, uint32_t flags)
        : m(cluster, options(flags)) {
        fill_sources(m, 4000);
        for (int round = 0; round < 40; ++round)
            for (auto [f, t] : pairs) {
                ModelPacket p;
                p.command = abi::kFabricWriteInc;
                p.src = m.dram(kSrc + t * kBlock);
                p.dst = m.dram(kDst + f * kBlock);
                p.bytes = 4000;
                p.sem = m.dram(kSems + 4 * f);
                p.inc = 1;
                m.send(f, t, p, 0);
                ++expected;
            }
    }
    static FabricSpec options(uint32_t flags) {
        FabricSpec o;
        o.slots = 2;
        o.lanes = 1;
        o.flags = flags;
        o.router_timeout_ms = 5;
        return o;
    }
    uint32_t delivered() {
        uint32_t n = 0;
        for (uint32_t c = 0; c < m.chips(); ++c)
            for (uint32_t f = 0; f < m.chips(); ++f) n += m.word(c, m.dram(kSems + 4 * f));
        return n;
    }
};

// The TT-Fabric spec's cyclic pattern (6.1) on a 2x2 mesh: D1 -> D4, D2 -> D3,
// D3 -> D2, D4 -> D1, each saturating. X first, then Y: it completes.
void test_the_specs_cyclic_pattern_completes_with_dor(void**) {
    Saturated2D s("mesh2x2", {{0, 3}, {1, 2}, {2, 1}, {3, 0}}, 0);
    run_to_completion(s.m);
    assert_int_equal(s.delivered(), s.expected);
}

// Every chip of the 4x4 torus sends two chips ahead along its row and its
// column: every ring of both dimensions is full and wraps. The dateline of
// each dimension keeps it moving; without datelines it deadlocks.
std::vector<std::pair<uint32_t, uint32_t>> two_ahead_on_torus4x4() {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    for (uint32_t c = 0; c < 16; ++c) {
        const uint32_t x = c % 4, y = c / 4;
        pairs.push_back({c, y * 4 + (x + 2) % 4});
        pairs.push_back({c, ((y + 2) % 4) * 4 + x});
        pairs.push_back({c, ((y + 3) % 4) * 4 + (x + 3) % 4});  // both dimensions, wrapping: a turn
    }
    return pairs;
}

// Packets received on VC 1 by every router of `m`.
uint32_t on_vc1(FabricModel& m) {
    uint32_t n = 0;
    for (const transport::FabricRouterPlan& r : m.fabric().routers())
        n += m.status(r.chip, r.direction).receivers[1].done;
    return n;
}

void test_torus_datelines_keep_saturated_rings_moving(void**) {
    Saturated2D s("torus4x4", two_ahead_on_torus4x4(), 0);
    run_to_completion(s.m);
    assert_int_equal(s.delivered(), s.expected);
    assert_true(on_vc1(s.m) > 0);  // past each ring's dateline
}

// Bubble flow control on a torus: a packet enters a row's or a column's
// ring (from a worker, or turning in from the other dimension) only while
// the next receiver has two slots free, so the rings keep moving without
// the datelines' VC: the same saturating traffic completes with every
// packet on VC 0. The builder's check accepts it ring by ring (the turns
// from rows to columns have no cycle).
void test_bubble_flow_control_keeps_a_saturated_torus_moving(void**) {
    Saturated2D s("torus4x4", two_ahead_on_torus4x4(), abi::kFabricBubble);
    run_to_completion(s.m);
    assert_int_equal(s.delivered(), s.expected);
    assert_int_equal(on_vc1(s.m), 0);
}

// Without datelines a torus's rings can close a cycle of full buffers: the
// builder's dependency check refuses such a fabric and names the cycle.
void test_torus_without_datelines_is_refused(void**) {
    try {
        FabricModel m("torus4x4", Saturated2D::options(abi::kFabricNoDateline));
        fail_msg("a torus without datelines was built");
    } catch (const Error& e) {
        const std::string what = e.what();
        if (what.find("can deadlock") == std::string::npos || what.find(" -> ") == std::string::npos)
            fail_msg("unexpected error: %s", what.c_str());
    }
}

// The chips whose destination region holds the multicast's bytes.
std::vector<uint32_t> reached(FabricModel& m, uint32_t bytes, uint32_t from) {
    std::vector<uint32_t> out;
    for (uint32_t c = 0; c < m.chips(); ++c) {
        const uint8_t* dst = m.bytes(c, m.dram(kDst), bytes);
        bool all = true, any = false;
        for (uint32_t i = 0; i < bytes; ++i) {
            const bool same = dst[i] == pattern(from, 0, i);
            all &= same;
            any |= dst[i] != 0;
        }
        if (all) out.push_back(c);
        else if (any)
            fail_msg("chip %u holds part of the multicast", c);
    }
    return out;
}

void multicast(const char* cluster, bool ring, uint32_t from, FabricDirection dir, uint8_t hops, uint8_t count,
               const std::vector<uint32_t>& expect) {
    FabricModel m(cluster, ring, small_options());
    constexpr uint32_t kBytes = 5000;  // two packets
    fill_sources(m, kBytes);
    ModelPacket p;
    p.command = abi::kFabricWriteInc;
    p.route.hops = hops;
    p.route.count = count;
    p.src = m.dram(kSrc);
    p.dst = m.dram(kDst);
    p.bytes = kBytes;
    p.sem = m.dram(kSems);
    p.inc = 1;
    m.add_worker(from, 4, dir, 0, {p});
    run_to_completion(m);
    const std::vector<uint32_t> got = reached(m, kBytes, from);
    assert_int_equal(got.size(), expect.size());
    for (size_t i = 0; i < expect.size(); ++i) assert_int_equal(got[i], expect[i]);
    for (uint32_t c = 0; c < m.chips(); ++c) {
        const bool in = std::find(expect.begin(), expect.end(), c) != expect.end();
        assert_int_equal(m.word(c, m.dram(kSems)), in ? 1 : 0);
    }
}

void test_multicast_from_the_end_of_a_line(void**) {
    multicast("line4", false, 0, FabricDirection::kForward, 1, 3, {1, 2, 3});
}
void test_multicast_from_the_middle_reaches_its_range_only(void**) {
    multicast("line4", false, 1, FabricDirection::kForward, 1, 2, {2, 3});
    multicast("line4", false, 2, FabricDirection::kBackward, 2, 1, {0});
    multicast("ring8", true, 2, FabricDirection::kForward, 2, 3, {4, 5, 6});
    multicast("ring8", true, 1, FabricDirection::kBackward, 1, 4, {0, 5, 6, 7});  // across the dateline
}

// TTL 1 over two hops: the second router drops it and posts the event; TTL 2 arrives.
void test_ttl_expires_and_is_reported(void**) {
    FabricModel m("line4", false, small_options());
    fill_sources(m, 64);
    ModelPacket p;
    p.command = abi::kFabricWriteInc;
    p.route.hops = 2;
    p.route.ttl = 1;
    p.src = m.dram(kSrc);
    p.dst = m.dram(kDst);
    p.bytes = 64;
    p.sem = m.dram(kSems);
    p.inc = 1;
    ModelPacket ok = p;
    ok.route.ttl = 2;
    ok.sem = m.dram(kSems + 4);
    m.add_worker(0, 4, FabricDirection::kForward, 0, {p, ok});
    run_to_completion(m);
    assert_int_equal(m.word(2, m.dram(kSems)), 0);
    assert_int_equal(m.word(2, m.dram(kSems + 4)), 1);
    assert_int_equal(m.status(2, FabricDirection::kBackward).dropped, 1);
    assert_int_equal(m.events(2, abi::kEventDroppedPacket), 1);
    assert_int_equal(m.status(1, FabricDirection::kBackward).dropped, 0);
}

// A packet routed past a line's end is dropped where the line ends, with a routing error.
void test_past_the_end_of_a_line_is_a_routing_error(void**) {
    FabricModel m("line4", false, small_options());
    ModelPacket p;
    p.command = abi::kFabricAtomicInc;
    p.route.hops = 4;
    p.sem = m.dram(kSems);
    p.inc = 1;
    m.add_worker(0, 4, FabricDirection::kForward, 0, {p});
    run_to_completion(m);
    assert_int_equal(m.events(3, abi::kEventRoutingError), 1);
    for (uint32_t c = 0; c < 4; ++c) assert_int_equal(m.word(c, m.dram(kSems)), 0);
}

// 1000 packets of random sizes between random chips of ring8, each to its
// own place: every one arrives exactly once, every byte right.
void test_random_packets_arrive_exactly_once(void**) {
    FabricModel m("ring8", true, small_options());
    std::mt19937 random(2026);
    constexpr uint32_t kPackets = 1000, kMax = 3000;
    fill_sources(m, kMax);
    struct Sent {
        uint32_t from, to, bytes;
    };
    std::vector<Sent> sent;
    for (uint32_t i = 0; i < kPackets; ++i) {
        const uint32_t from = random() % 8, to = (from + 1 + random() % 7) % 8, bytes = 1 + random() % kMax;
        ModelPacket p;
        p.command = abi::kFabricWriteInc;
        p.src = m.dram(kSrc + to * kBlock);
        p.dst = m.dram(0x1000000 + i * 4096);
        p.bytes = bytes;
        p.sem = m.dram(0x800000 + 4 * i);
        p.inc = 1;
        m.send(from, to, p, random() % 2);
        sent.push_back({from, to, bytes});
    }
    run_to_completion(m);
    for (uint32_t i = 0; i < kPackets; ++i) {
        const Sent& s = sent[i];
        for (uint32_t c = 0; c < 8; ++c)
            if (m.word(c, m.dram(0x800000 + 4 * i)) != (c == s.to ? 1u : 0u))
                fail_msg("packet %u (%u -> %u) counted %u times on chip %u", i, s.from, s.to,
                         m.word(c, m.dram(0x800000 + 4 * i)), c);
        const uint8_t* dst = m.bytes(s.to, m.dram(0x1000000 + i * 4096), s.bytes);
        for (uint32_t b = 0; b < s.bytes; ++b)
            if (dst[b] != pattern(s.from, s.to, b)) fail_msg("packet %u byte %u differs", i, b);
    }
}

// Ring8 full of traffic wrapping both ways: every chip sends many packets to
// the chips three hops away on either side, through channels two slots deep.
struct Saturated {
    FabricModel m;
    uint32_t expected = 0;
    // latency_us: on every cable, so that a packet's send completes well
    // before its peer's credit comes back, as on the cluster.
    explicit Saturated(uint32_t flags, double latency_us = 0) : m("ring8", true, options(flags)) {
        CableFaults slow;
        slow.latency_us = latency_us;
        for (auto& link : m.cluster().devices().ethernet().links()) link->cable->set_faults(slow);
        fill_sources(m, 4000);
        for (int round = 0; round < 30; ++round)
            for (uint32_t f = 0; f < 8; ++f)
                for (uint32_t t : {(f + 3) % 8, (f + 5) % 8}) {
                    ModelPacket p;
                    p.command = abi::kFabricWriteInc;
                    p.src = m.dram(kSrc + t * kBlock);
                    p.dst = m.dram(kDst + f * kBlock);
                    p.bytes = 4000;
                    p.sem = m.dram(kSems + 4 * f);
                    p.inc = 1;
                    m.send(f, t, p, 0);
                    ++expected;
                }
    }
    static FabricSpec options(uint32_t flags) {
        FabricSpec o;
        o.slots = 2;
        o.lanes = 1;
        o.flags = flags;
        o.router_timeout_ms = 5;
        return o;
    }
    uint32_t delivered() {
        uint32_t n = 0;
        for (uint32_t c = 0; c < 8; ++c)
            for (uint32_t f = 0; f < 8; ++f) n += m.word(c, m.dram(kSems + 4 * f));
        return n;
    }
};

void test_dateline_vc_keeps_a_saturated_ring_moving(void**) {
    for (double latency_us : {0.0, 50.0}) {
        Saturated s(0, latency_us);
        run_to_completion(s.m);
        assert_int_equal(s.delivered(), s.expected);
        uint32_t vc1 = 0;  // the packets that crossed the dateline took VC 1
        for (uint32_t c = 0; c < 8; ++c)
            for (FabricDirection d : {FabricDirection::kForward, FabricDirection::kBackward})
                vc1 += s.m.status(c, d).receivers[1].done;
        assert_true(vc1 > 0);
    }
}

// The same traffic, and a cable pulled under it at several points: its two
// routers send what it held, and every later packet for it, back the other
// way round on VC 2. Both ways of the ring are lines then, a packet sent back
// never turns again, and the traffic completes: every packet exactly once.
void test_a_saturated_ring_loses_a_cable_and_completes(void**) {
    for (int pull_at : {20, 200, 800}) {
        Saturated s(0, 50.0);
        const BoardInfo& board = s.m.cluster().board();
        const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
        transport::ControlPlane control(board, s.m.cluster().topology());
        Ethernet& eth = s.m.cluster().devices().ethernet();
        int steps = 0;
        transport::RerouteDecision d;
        HostMoves moves;
        s.m.on_step = [&] {
            moves.poll(s.m);
            if (++steps == pull_at) eth.set_link_up(size_t(eth.link_index(5, east)), false);
            if (steps == pull_at + 3) d = moves.reroute(s.m, control, 5, east);
        };
        run_to_completion(s.m);
        moves.settle(s.m);
        if (d.kind != transport::RerouteDecision::kNewTables) fail_msg("pulled at step %d: %s", pull_at, d.why.c_str());
        assert_int_equal(s.delivered(), s.expected);
        uint32_t sent_back = 0;
        for (uint32_t c = 0; c < 8; ++c)
            for (FabricDirection dir : {FabricDirection::kForward, FabricDirection::kBackward})
                sent_back += s.m.status(c, dir).receivers[2].done;
        assert_true(sent_back > 0);
        assert_int_equal(s.m.status(5, FabricDirection::kForward).state, abi::kFabricRouterRerouted);
    }
}

// Runs m's traffic to its end with chip `chip`'s east cable pulled at step
// `pull_at` and routed round by the control plane three steps later, as a
// host polling it would; fails unless the traffic outlived the move and the
// control plane gave the routers new tables.
void pull_east_cable_under(FabricModel& m, uint32_t chip, int pull_at) {
    const BoardInfo& board = m.cluster().board();
    const auto east = static_cast<uint32_t>(board.port_for(abi::kFabricEast, 0));
    transport::ControlPlane control(board, m.cluster().topology());
    Ethernet& eth = m.cluster().devices().ethernet();
    int steps = 0;
    transport::RerouteDecision d;
    HostMoves moves;
    m.on_step = [&] {
        moves.poll(m);
        if (++steps == pull_at) eth.set_link_up(size_t(eth.link_index(chip, east)), false);
        if (steps == pull_at + 3) d = moves.reroute(m, control, chip, east);
    };
    run_to_completion(m);
    moves.settle(m);
    if (steps <= pull_at + 3) fail_msg("pulled at step %d: all of it arrived before", pull_at);
    if (d.kind != transport::RerouteDecision::kNewTables) fail_msg("pulled at step %d: %s", pull_at, d.why.c_str());
}

// Multicasts each way round ring8 from every chip (each run five chips
// long, two slots a channel), and a cable pulled under them at several
// points: the cable's routers send the multicasts they hold for it back
// round, from the far end of their runs, and every chip of every run gets
// each one exactly once; none is dropped.
void test_multicasts_go_back_round_a_dead_ring_cable(void**) {
    constexpr uint32_t kRun = 5, kRounds = 12, kBytes = 3000;
    for (int pull_at : {20, 150, 300}) {  // of ~600 steps
        FabricModel m("ring8", true, Saturated::options(0));
        CableFaults slow;
        slow.latency_us = 50;
        for (auto& link : m.cluster().devices().ethernet().links()) link->cable->set_faults(slow);
        fill_sources(m, kBytes);
        for (uint32_t f = 0; f < 8; ++f)
            for (FabricDirection dir : {FabricDirection::kForward, FabricDirection::kBackward}) {
                std::deque<ModelPacket> packets;
                for (uint32_t round = 0; round < kRounds; ++round) {
                    ModelPacket p;
                    p.command = abi::kFabricWriteInc;
                    p.route.hops = 1;
                    p.route.count = kRun;
                    p.src = m.dram(kSrc);
                    p.dst = m.dram(kDst + f * kBlock);
                    p.bytes = kBytes;
                    p.sem = m.dram(kSems + 4 * f);
                    p.inc = 1;
                    packets.push_back(p);
                }
                m.add_worker(f, 4, dir, 0, std::move(packets));
            }
        pull_east_cable_under(m, 5, pull_at);
        uint32_t sent_back = 0;
        for (uint32_t c = 0; c < 8; ++c) {
            assert_int_equal(m.events(c, abi::kEventRoutingError), 0);
            for (FabricDirection dir : {FabricDirection::kForward, FabricDirection::kBackward})
                sent_back += m.status(c, dir).receivers[2].done;
            for (uint32_t f = 0; f < 8; ++f) {
                const uint32_t ahead = (c + 8 - f) % 8, behind = (f + 8 - c) % 8;
                const uint32_t runs = (ahead >= 1 && ahead <= kRun) + (behind >= 1 && behind <= kRun);
                if (m.word(c, m.dram(kSems + 4 * f)) != runs * kRounds)
                    fail_msg("pulled at step %d: chip %u has %u of chip %u's multicasts, not %u", pull_at, c,
                             m.word(c, m.dram(kSems + 4 * f)), f, runs * kRounds);
                const uint8_t* got = m.bytes(c, m.dram(kDst + f * kBlock), kBytes);
                for (uint32_t i = 0; runs && i < kBytes; ++i)
                    if (got[i] != pattern(f, 0, i))
                        fail_msg("chip %u: byte %u of chip %u's multicast differs", c, i, f);
            }
        }
        if (sent_back == 0) fail_msg("pulled at step %d: nothing went back round", pull_at);
    }
}

// 2D multicasts along torus4x4's rows (runs of three chips, or two from the
// chip the cable leaves), and the cable from chip 5 east pulled under them
// at several points: the cable's routers send each multicast they hold for
// it round as a copy to each chip still ahead in its run (whether the cable
// starts the run or lies within it), and every chip of every run gets each
// one exactly once; none is dropped.
void test_2d_multicasts_go_round_a_dead_cable_to_every_chip_of_their_run(void**) {
    constexpr uint32_t kRounds = 12, kBytes = 3000;
    struct Run {
        uint32_t from, first, chips;
    };
    // Row 1 crosses the cable at its start (5), inside (4 east, 7 west);
    // rows 0 and 2 do not cross it.
    const Run runs[] = {{4, 5, 3}, {7, 6, 3}, {5, 6, 2}, {0, 1, 3}, {11, 10, 3}};
    for (int pull_at : {2, 6, 12, 20}) {
        FabricModel m("torus4x4", small_options());
        fill_sources(m, kBytes);
        for (const Run& r : runs)
            for (uint32_t round = 0; round < kRounds; ++round) {
                ModelPacket p;
                p.command = abi::kFabricWriteInc;
                p.src = m.dram(kSrc);
                p.dst = m.dram(kDst + r.from * kBlock);
                p.bytes = kBytes;
                p.sem = m.dram(kSems + 4 * r.from);
                p.inc = 1;
                p.route.count = static_cast<uint8_t>(r.chips);
                m.send(r.from, r.first, p, 0);
            }
        pull_east_cable_under(m, 5, pull_at);
        for (uint32_t c = 0; c < m.chips(); ++c) {
            assert_int_equal(m.events(c, abi::kEventRoutingError), 0);
            for (const Run& r : runs) {
                const uint32_t row = r.first / 4, x = r.first % 4, step = r.first == (r.from + 1) % 4 + row * 4 ? 1 : 3;
                bool in_run = false;
                for (uint32_t k = 0; k < r.chips; ++k) in_run |= c == row * 4 + (x + k * step) % 4;
                if (m.word(c, m.dram(kSems + 4 * r.from)) != (in_run ? kRounds : 0))
                    fail_msg("pulled at step %d: chip %u has %u of chip %u's multicasts, not %u", pull_at, c,
                             m.word(c, m.dram(kSems + 4 * r.from)), r.from, in_run ? kRounds : 0);
                const uint8_t* got = m.bytes(c, m.dram(kDst + r.from * kBlock), kBytes);
                for (uint32_t i = 0; in_run && i < kBytes; ++i)
                    if (got[i] != pattern(r.from, 0, i))
                        fail_msg("chip %u: byte %u of chip %u's multicast differs", c, i, r.from);
            }
        }
    }
}

// The same traffic with the dateline switch off deadlocks: no step moves
// anything, with packets still to deliver, and the routers report their
// stuck heads once the timeout passes (at their fallback alarm: nothing
// rings a deadlocked router).
void test_without_the_dateline_the_ring_deadlocks(void**) {
    Saturated s(abi::kFabricNoDateline);
    constexpr int kPastAlarm = 12000;  // steps of 10 µs: the routers' 100 ms alarm, and more
    for (int i = 0; i < kMaxSteps && s.m.stalled_steps() < kPastAlarm && !s.m.idle(); ++i) s.m.step();
    assert_true(s.m.stalled_steps() >= kPastAlarm);
    assert_true(s.delivered() < s.expected);
    uint32_t timeouts = 0;
    for (uint32_t c = 0; c < 8; ++c) timeouts += s.m.events(c, abi::kEventTimeout);
    assert_true(timeouts > 0);
}

// Bubble flow control instead of the dateline: the same saturating traffic
// completes with every packet on VC 0, a worker's packet entering the ring
// only while the next receiver has two slots free.
void test_bubble_flow_control_keeps_a_saturated_ring_moving(void**) {
    for (double latency_us : {0.0, 50.0}) {
        Saturated s(abi::kFabricBubble, latency_us);
        run_to_completion(s.m);
        assert_int_equal(s.delivered(), s.expected);
        for (uint32_t c = 0; c < 8; ++c)
            for (FabricDirection d : {FabricDirection::kForward, FabricDirection::kBackward})
                assert_int_equal(s.m.status(c, d).receivers[1].done, 0);
    }
}

// Every packet rides VC 0 under bubble flow control, so VC 0's channels take
// the slots VC 1's would have had: a ring's routers get one VC of twice the
// slots (the worker lanes keep theirs), in no more L1 than the dateline's
// (whose VC 2 is the escape class of a dead cable's packets).
void test_bubble_flow_control_gives_vc0_the_buffers_of_vc1(void**) {
    FabricSpec dateline = small_options(), bubble = small_options();
    bubble.bubble = true;
    FabricModel a("ring8", true, dateline), b("ring8", true, bubble);
    const abi::FabricRouterConfig &ca = a.router_config(0), &cb = b.router_config(0);
    assert_int_equal(ca.num_vcs, 3);
    assert_int_equal(cb.num_vcs, 1);
    assert_int_equal(cb.receivers[0].slots, 2 * ca.receivers[0].slots);
    assert_int_equal(cb.senders[cb.num_senders - 1].slots, 2 * ca.senders[ca.num_senders - 1].slots);
    assert_int_equal(cb.senders[0].slots, ca.senders[0].slots);  // a worker lane: VC 0's already
    assert_true(b.fabric().l1_bytes() <= a.fabric().l1_bytes());
}

std::string builder_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

#define EXPECT_REFUSED(what, text)                                                                       \
    do {                                                                                                 \
        const std::string msg = builder_error([&] { what; });                                            \
        if (msg.find(text) == std::string::npos) fail_msg("expected '%s', got '%s'", text, msg.c_str()); \
    } while (0)

// Bad fabrics and bad connections are refused, each naming the problem.
void test_the_builder_refuses_bad_fabrics(void**) {
    FabricModel m("line4", false, small_options());
    const BoardInfo& board = m.cluster().spec().board;
    const std::vector<uint32_t> order = {0, 1, 2, 3};
    const std::vector<transport::Hop> cables = {{0, 1, 1, 3}, {1, 1, 2, 3}, {2, 1, 3, 3}};
    using transport::FabricBuilder;
    FabricSpec o = small_options();
    o.slots = 0;
    EXPECT_REFUSED(FabricBuilder(board, order, cables, false, o), "fabric slots must be 1-64, not 0");
    o = small_options();
    o.packet_bytes = 100;
    EXPECT_REFUSED(FabricBuilder(board, order, cables, false, o), "packet_bytes must be a multiple of 64");
    o = small_options();
    o.lanes = 5;
    EXPECT_REFUSED(FabricBuilder(board, order, cables, false, o), "fabric worker lanes must be 1-4, not 5");
    o = small_options();
    o.bubble = true;
    o.slots = 1;
    EXPECT_REFUSED(FabricBuilder(board, order, cables, false, o), "bubble flow control needs at least 2 slots");
    o.slots = 2;
    FabricModel mesh("mesh3x3", small_options());
    EXPECT_REFUSED(transport::mesh_fabric(mesh.cluster().board(), mesh.cluster().topology(), o),
                   "bubble flow control keeps a free slot in each ring of a ring or torus; a mesh has no rings");
    EXPECT_REFUSED(FabricBuilder(board, {0, 1}, {{0, 1, 1, 3}, {1, 1, 0, 3}}, true, small_options()),
                   "a fabric ring needs at least three chips");
    EXPECT_REFUSED(FabricBuilder(board, {0, 1, 0}, {cables[0], {1, 1, 0, 3}}, false, small_options()),
                   "chip 0 appears twice");
    EXPECT_REFUSED(FabricBuilder(board, order, {cables[0], cables[1]}, false, small_options()),
                   "needs 3 cables, not 2");
    EXPECT_REFUSED(FabricBuilder(board, order, {{0, 1, 2, 3}, cables[1], cables[2]}, false, small_options()),
                   "fabric cable 0 joins chip 0 to chip 2, not chip 0 to chip 1");
    const FabricBuilder& f = m.fabric();
    transport::L1Allocator l1(board);
    EXPECT_REFUSED(f.connect(m.cluster(), l1, 3, FabricDirection::kForward, 0, 4),
                   "chip 3 ends the fabric's line: it has no router forward");
    EXPECT_REFUSED(f.connect(m.cluster(), l1, 0, FabricDirection::kForward, 2, 4), "fabric lane 2 does not exist");
    EXPECT_REFUSED(f.connect(m.cluster(), l1, 0, FabricDirection::kForward, 0, 1),
                   "chip 0 core 1 is not a worker core");
    EXPECT_REFUSED(f.route(0, 9), "chip 9 is not in the fabric");
}

// ring8x2's two planes, a fabric each, as the collectives' routing: every
// pair is one hop apart on each plane, the hops' virtual ports say which,
// and each plane's routers get workers of their own.
void test_two_planes_are_two_hops_between_every_pair(void**) {
    FabricModel m("ring8x2", true, small_options());
    const ClusterTopology topology = m.cluster().topology();
    const FabricSpec spec = small_options();
    const transport::FabricBuilder plane0 = transport::cluster_fabric(m.cluster().board(), topology, spec, "", 0);
    const transport::FabricBuilder plane1 = transport::cluster_fabric(m.cluster().board(), topology, spec, "", 1);
    for (const transport::FabricRouterPlan& r : plane1.routers())
        assert_int_equal(m.cluster().board().ports.at(r.port).plane, 1);
    const transport::FabricRouting routing({&plane0, &plane1});
    assert_int_equal(routing.max_parallel(), 2);
    const std::vector<Hop>& both = routing.parallel(2, 5);
    assert_int_equal(both.size(), 2);
    assert_int_equal(routing.worker_hops(2, 5).size(), 1);  // one worker hop: the lowering stripes it
    for (uint32_t p = 0; p < 2; ++p) {
        assert_int_equal(both[p].to_chip, 5);
        assert_int_equal(routing.plane_of(both[p].from_port), p);
        assert_ptr_equal(&routing.fabric_of(both[p].from_port), p ? &plane1 : &plane0);
        assert_int_equal(routing.hop_at(2, both[p].from_port).to_port, both[p].to_port);
    }
    assert_int_not_equal(routing.worker_port(2, both[0].from_port), routing.worker_port(2, both[1].from_port));
    try {
        routing.hop_at(2, transport::kFabricPortBase + 2 * routing.chips() + 5);  // a third plane
        fail_msg("a port past the planes was taken");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "no fabric port"));
    }
    // One plane's cable down: that plane has no fabric, the other still does.
    std::vector<LinkInfo> links = topology.links();
    for (LinkInfo& l : links)
        if (l.chip_a == 3 && m.cluster().board().ports.at(l.port_a).plane == 1) l.up = false;
    const ClusterTopology cut = topology.with_links(links);
    assert_int_equal(transport::cluster_fabric(m.cluster().board(), cut, spec, "", 0).routers().size(),
                     plane0.routers().size());
    try {
        (void)transport::cluster_fabric(m.cluster().board(), cut, spec, "", 1);
        fail_msg("a fabric was planned over a plane with a cable down");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "plane 1"));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line4_every_chip_to_every_other),
        cmocka_unit_test(test_ring8_every_chip_to_every_other),
        cmocka_unit_test(test_mesh3x3_every_chip_to_every_other),
        cmocka_unit_test(test_mesh3x3_routes_by_the_control_planes_tables),
        cmocka_unit_test(test_paused_and_draining_routers_hold_traffic_until_told_to_run),
        cmocka_unit_test(test_torus4x4_every_chip_to_every_other),
        cmocka_unit_test(test_4mesh3x3_every_chip_to_every_other),
        cmocka_unit_test(test_a_pulled_cable_moves_onto_its_fallback),
        cmocka_unit_test(test_a_returned_ring_cable_takes_its_traffic_back_live),
        cmocka_unit_test(test_a_returned_mesh_cable_takes_its_traffic_back_live),
        cmocka_unit_test(test_a_returned_cable_leaves_its_detours_live),
        cmocka_unit_test(test_a_returned_cable_between_meshes_takes_its_exits_back_live),
        cmocka_unit_test(test_a_cable_whose_relays_cable_is_dead_is_routed_round),
        cmocka_unit_test(test_two_planes_are_two_hops_between_every_pair),
        cmocka_unit_test(test_a_pulled_torus_cable_is_routed_round_live),
        cmocka_unit_test(test_a_pulled_cable_of_a_bubble_torus_is_routed_round_live),
        cmocka_unit_test(test_a_pulled_mesh_cable_is_routed_round_on_the_escape_vc),
        cmocka_unit_test(test_an_inter_mesh_move_that_could_deadlock_is_refused),
        cmocka_unit_test(test_a_move_onto_cables_the_fabric_lacks_is_refused),
        cmocka_unit_test(test_4mesh3x3_routes_are_rewritten_at_each_mesh_entry),
        cmocka_unit_test(test_a_packet_with_no_way_on_is_dropped_not_executed),
        cmocka_unit_test(test_the_specs_cyclic_pattern_completes_with_dor),
        cmocka_unit_test(test_workers_look_routes_up_in_the_l0_table),
        cmocka_unit_test(test_2d_multicast_along_a_row_reaches_its_span_only),
        cmocka_unit_test(test_torus_datelines_keep_saturated_rings_moving),
        cmocka_unit_test(test_torus_without_datelines_is_refused),
        cmocka_unit_test(test_multicast_from_the_end_of_a_line),
        cmocka_unit_test(test_multicast_from_the_middle_reaches_its_range_only),
        cmocka_unit_test(test_ttl_expires_and_is_reported),
        cmocka_unit_test(test_past_the_end_of_a_line_is_a_routing_error),
        cmocka_unit_test(test_random_packets_arrive_exactly_once),
        cmocka_unit_test(test_dateline_vc_keeps_a_saturated_ring_moving),
        cmocka_unit_test(test_without_the_dateline_the_ring_deadlocks),
        cmocka_unit_test(test_a_saturated_ring_loses_a_cable_and_completes),
        cmocka_unit_test(test_multicasts_go_back_round_a_dead_ring_cable),
        cmocka_unit_test(test_2d_multicasts_go_round_a_dead_cable_to_every_chip_of_their_run),
        cmocka_unit_test(test_bubble_flow_control_keeps_a_saturated_ring_moving),
        cmocka_unit_test(test_bubble_flow_control_gives_vc0_the_buffers_of_vc1),
        cmocka_unit_test(test_bubble_flow_control_keeps_a_saturated_torus_moving),
        cmocka_unit_test(test_the_builder_refuses_bad_fabrics),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
