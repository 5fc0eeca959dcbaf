// The routers' packet logs (transport/fabric/packet_log.h) in the fabric
// model: what the firmware logs is what the model's engine saw cross each
// cable, a log replays packet for packet on a fresh model, and a replay over
// a different fabric (a cable failed) is told apart, naming the packet.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "fabric_model/replay.h"
#include "fabric_model/traffic.h"
#include "fabric_model/traffic_record.h"
#include "transport/fabric/packet_log.h"
#include "transport/fabric/replay_traffic.h"

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

constexpr uint32_t kBytes = 9000;  // three packets of 4 KiB
constexpr uint32_t kPacketsPerWrite = 3;

ModelOptions torus(uint32_t records = 1024) {
    ModelOptions o;
    o.cluster = "torus4x4";
    o.fabric.packet_bytes = 4096;
    o.fabric.record_packets = records;
    return o;
}

// Every chip writes kBytes to every other, each into its own block there.
void all_to_all(Simulation& sim) {
    model::FabricModel& m = sim.model();
    for (uint32_t f = 0; f < sim.chips(); ++f)
        for (uint32_t t = 0; t < sim.chips(); ++t)
            if (f != t) sim.write(f, t, m.dram((1u << 20) + f * 16384), m.dram(2u << 20), kBytes, m.dram(4 * f));
}

transport::PacketLog recorded_all_to_all() {
    Simulation sim(torus());
    all_to_all(sim);
    sim.finish();
    return transport::read_packet_log(sim.model().cluster(), sim.model().fabric());
}

uint32_t port_toward(Simulation& sim, abi::FabricCompass way) {
    for (const PortInfo& p : sim.model().cluster().board().ports)
        if (p.direction == way && p.plane == 0) return p.id;
    fail_msg("the board has no port %c", abi::fabric_letter(way));
    return 0;
}

void test_the_routers_log_every_cable_the_engine_saw(void**) {
    Simulation sim(torus());
    TrafficRecorder engine_saw(sim.engine());
    all_to_all(sim);
    sim.finish();
    const transport::PacketLog log = transport::read_packet_log(sim.model().cluster(), sim.model().fabric());
    assert_true(log.lost.empty());
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> logged, seen;  // (chip, port) -> packets
    for (const transport::LoggedHop& h : log.hops) ++logged[{h.chip, h.port}];
    size_t hops = 0;
    for (const RecordedPacket& p : engine_saw.packets()) {
        assert_true(p.arrived);
        for (const RecordedHop& h : p.hops) ++seen[{h.chip, h.port}], ++hops;
    }
    assert_int_equal(engine_saw.packets().size(), 16 * 15 * kPacketsPerWrite);
    assert_int_equal(log.hops.size(), hops);
    assert_true(logged == seen);
    for (const transport::LoggedHop& h : log.hops) {  // the log's fields are the packet's own
        assert_int_equal(h.record.payload_bytes + 0u, h.record.noc_command == abi::kFabricWriteInc ? kBytes - 8192 : 4096);
        assert_true(h.record.hops >= 1 && h.record.hops <= 4);  // a 4x4 torus: at most 2 + 2 cables
    }
}

void test_a_log_replays_on_a_fresh_model_packet_for_packet(void**) {
    const transport::PacketLog recorded = recorded_all_to_all();
    Simulation sim(torus());
    const Replay r = replay_log(sim, recorded);
    assert_int_equal(r.packets, 16 * 15 * kPacketsPerWrite);
    assert_int_equal(r.log.hops.size(), recorded.hops.size());
    assert_string_equal(r.differs.c_str(), "");
    assert_true(r.run.finished);
}

void test_a_replay_round_a_failed_cable_names_a_packet_that_went_another_way(void**) {
    const transport::PacketLog recorded = recorded_all_to_all();
    Simulation sim(torus());
    sim.fail_cable(5, port_toward(sim, abi::kFabricEast));
    const Replay r = replay_log(sim, recorded);
    assert_int_equal(r.packets, 16 * 15 * kPacketsPerWrite);  // every packet still arrives, round the cable
    assert_true(r.differs.find("crossed") != std::string::npos);
    assert_true(r.differs.find("in the record") != std::string::npos);
    assert_true(r.differs.find("in the model") != std::string::npos);
}

void test_a_log_that_wrapped_says_so_and_is_not_replayed(void**) {
    Simulation sim(torus(8));
    all_to_all(sim);
    sim.finish();
    const transport::PacketLog log = transport::read_packet_log(sim.model().cluster(), sim.model().fabric());
    assert_false(log.lost.empty());
    assert_true(log.lost.front().find("the last 8 kept") != std::string::npos);
    Simulation again(torus());
    try {
        replay_log(again, log);
        fail_msg("a log missing records was replayed");
    } catch (const Error& e) {
        assert_true(std::string(e.what()).find("lost records") != std::string::npos);
    }
}

void test_a_fabric_without_a_log_says_so(void**) {
    Simulation sim(torus(0));
    try {
        transport::read_packet_log(sim.model().cluster(), sim.model().fabric());
        fail_msg("a fabric without a log was read");
    } catch (const Error& e) {
        assert_true(std::string(e.what()).find("keeps no packet log") != std::string::npos);
    }
}

// A log's file keeps its hops and its `about`; a file that is not a log is
// refused naming the file and what is wrong.
void test_a_log_file_round_trips_and_a_bad_one_is_named(void**) {
    const transport::PacketLog recorded = recorded_all_to_all();
    char path[] = "/tmp/weft-packet-log-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    transport::write_packet_log_file(path, recorded, {{"cluster", "torus4x4"}});
    nlohmann::json about;
    const transport::PacketLog back = transport::read_packet_log_file(path, &about);
    assert_int_equal(back.hops.size(), recorded.hops.size());
    assert_string_equal(about.value("cluster", "").c_str(), "torus4x4");
    assert_string_equal(transport::paths_differ(transport::paths_of(recorded), transport::paths_of(back)).c_str(), "");
    std::ofstream(path) << R"({"schema": "weft-trace/1"})";
    try {
        transport::read_packet_log_file(path);
        fail_msg("a file of another schema was read as a packet log");
    } catch (const Error& e) {
        const std::string what = e.what();
        assert_true(what.find(path) != std::string::npos && what.find("weft-packet-log/1") != std::string::npos);
    }
    std::remove(path);
    try {
        transport::read_packet_log_file(path);
        fail_msg("a missing file was read");
    } catch (const Error& e) {
        assert_true(std::string(e.what()).find("cannot read the packet log") != std::string::npos);
    }
}

// A hand-edited log's numbers are taken only where they fit: a chip of -1
// or 2^32 bytes would otherwise wrap into a chip or a size the replay trusts.
void test_a_log_field_out_of_range_is_named_with_its_hop(void**) {
    const nlohmann::json good = transport::packet_log_json(recorded_all_to_all(), {});
    const struct {
        const char* key;
        nlohmann::json value;
        const char* said;
    } cases[] = {{"chip", -1, "chip is -1, not a whole number from 0 to 4294967295"},
                 {"bytes", 4294967296ull, "bytes is 4294967296, not a whole number from 0 to 4294967295"},
                 {"vc", 256, "vc is 256, not a whole number from 0 to 255"},
                 {"seq", 1.5, "seq is 1.5, not a whole number"},
                 {"dst", nlohmann::json::array({0, 70000}), "dst chip is 70000, not a whole number from 0 to 65535"}};
    for (const auto& c : cases) {
        nlohmann::json bad = good;
        bad["hops"][3][c.key] = c.value;
        try {
            transport::packet_log_from_json(bad);
            fail_msg("a log with %s = %s was read", c.key, c.value.dump().c_str());
        } catch (const Error& e) {
            const std::string what = e.what();
            if (what.find("hop 3 of the packet log") == std::string::npos || what.find(c.said) == std::string::npos)
                fail_msg("%s = %s: %s", c.key, c.value.dump().c_str(), e.what());
        }
    }
}

// weft replay's plan: one job per packet where it left its source, each
// into the landing area at the end of DRAM; a write that had no semaphore
// gets none (else it would become a write-and-increment).
void test_a_replay_plan_sends_each_packet_once_from_its_source(void**) {
    const transport::PacketLog recorded = recorded_all_to_all();
    Simulation sim(torus());
    const BoardInfo& board = sim.model().cluster().board();
    const transport::ReplayPlan plan = transport::plan_replay(sim.model().fabric(), board, recorded);
    assert_int_equal(plan.packets, 16 * 15 * kPacketsPerWrite);
    assert_int_equal(plan.hops, recorded.hops.size());
    assert_int_equal(plan.multicast, 0);
    size_t jobs = 0;
    for (const auto& round : plan.rounds)
        for (const transport::ReplayKernel& k : round)
            for (uint32_t i = 0; i < k.args.job_count; ++i) {
                const abi::FabricTrafficJob& j = k.args.jobs[i];
                ++jobs;
                assert_true(j.dst >= board.dram.base && j.dst + j.bytes <= board.dram.end());
                if (j.command == abi::kFabricWrite) assert_int_equal(j.sem, 0);
                else assert_true(j.sem >= board.dram.base && j.sem + 4 <= board.dram.end());
            }
    assert_int_equal(jobs, plan.packets);
    const transport::PacketLog bare = transport::as_replayed(recorded);
    for (const transport::LoggedHop& h : bare.hops) assert_true(h.record.dst_address == 0 && h.record.sem_address == 0);
}

ModelOptions ring8() {
    ModelOptions o;
    o.cluster = "ring8";
    o.fabric.record_packets = 1024;
    return o;
}

// On ring8's 1D fabric every chip multicasts a write each way, to its
// neighbour and 1 + chip % 3 chips on; its own block on each chip reached.
transport::PacketLog recorded_multicasts() {
    Simulation sim(ring8());
    model::FabricModel& m = sim.model();
    const uint32_t n = sim.chips();
    for (uint32_t f = 0; f < n; ++f)
        for (uint32_t next : {(f + 1) % n, (f + n - 1) % n})
            sim.multicast(f, next, uint8_t(2 + f % 3), m.dram((1u << 20) + f * 4096), m.dram(2u << 20), 1000,
                          m.dram(4 * f));
    sim.finish();
    return transport::read_packet_log(m.cluster(), m.fabric());
}

// A multicast's record does not keep how many chips it reached: the replay
// counts them from its crossings, so a fresh model sends every multicast to
// the same chips over the same cables.
void test_multicasts_replay_to_the_chips_they_reached(void**) {
    const transport::PacketLog recorded = recorded_multicasts();
    size_t crossings = 0;
    for (uint32_t f = 0; f < 8; ++f) crossings += 2 * (2 + f % 3);  // a cable for each chip reached, both ways
    assert_int_equal(recorded.hops.size(), crossings);
    Simulation sim(ring8());
    const transport::MulticastCounts reach = transport::multicast_counts(recorded, sim.model().fabric());
    assert_int_equal(reach.size(), 16);
    for (const auto& [packet, count] : reach) assert_int_equal(count, 2 + packet.first.src.chip % 3);
    const Replay r = replay_log(sim, recorded);
    assert_int_equal(r.packets, 16);
    assert_string_equal(r.differs.c_str(), "");
    assert_int_equal(r.log.hops.size(), recorded.hops.size());
    const transport::ReplayPlan plan =
        transport::plan_replay(sim.model().fabric(), sim.model().cluster().board(), recorded);
    assert_int_equal(plan.packets, 16);
    assert_int_equal(plan.multicast, 16);
    for (const auto& round : plan.rounds)
        for (const transport::ReplayKernel& k : round)
            for (uint32_t i = 0; i < k.args.job_count; ++i)
                assert_int_equal(k.args.jobs[i].count, 2 + k.chip % 3);
}

// A log whose multicast says it crossed more cables to its first
// destination than it crossed in all (a log edited or garbled) does not say
// how many chips it reached: the replay names the packet instead of guessing.
void test_a_multicast_the_log_cannot_count_is_refused_by_name(void**) {
    transport::PacketLog recorded = recorded_multicasts();
    Simulation sim(ring8());
    const auto first = std::find_if(recorded.hops.begin(), recorded.hops.end(), [&](const transport::LoggedHop& h) {
        return transport::is_injection(h, sim.model().fabric()) && h.record.src.chip == 2;
    });
    assert_true(first != recorded.hops.end());
    first->record.hops = 9;  // it crossed 3 or 4 cables in all
    for (int model = 0; model < 2; ++model)
        try {
            if (model) replay_log(sim, recorded);
            else transport::plan_replay(sim.model().fabric(), sim.model().cluster().board(), recorded);
            fail_msg("a multicast the log cannot count was replayed");
        } catch (const Error& e) {
            if (!std::string(e.what()).starts_with("the multicast packet ") ||
                std::string(e.what()).find("from mesh 0 chip 2: the log does not say how many chips") == std::string::npos)
                fail_msg("got: %s", e.what());
        }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_routers_log_every_cable_the_engine_saw),
        cmocka_unit_test(test_a_log_replays_on_a_fresh_model_packet_for_packet),
        cmocka_unit_test(test_a_replay_round_a_failed_cable_names_a_packet_that_went_another_way),
        cmocka_unit_test(test_a_log_that_wrapped_says_so_and_is_not_replayed),
        cmocka_unit_test(test_a_fabric_without_a_log_says_so),
        cmocka_unit_test(test_a_log_file_round_trips_and_a_bad_one_is_named),
        cmocka_unit_test(test_a_log_field_out_of_range_is_named_with_its_hop),
        cmocka_unit_test(test_a_replay_plan_sends_each_packet_once_from_its_source),
        cmocka_unit_test(test_multicasts_replay_to_the_chips_they_reached),
        cmocka_unit_test(test_a_multicast_the_log_cannot_count_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
