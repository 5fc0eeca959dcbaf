// What the fabric model shows a person (host/fabric_model): its state as
// JSON, the record of every packet's hops, the heat map of its buffers over
// time and its pictures as Graphviz DOT. Drawing runs only where gnuplot or
// Graphviz is installed; the text they draw from is checked everywhere.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "common/graphviz.h"
#include "common/heat_map.h"
#include "deadlocked_ring.h"
#include "fabric_model/cluster_dot.h"
#include "fabric_model/occupancy.h"
#include "fabric_model/state_json.h"
#include "fabric_model/stuck_channels.h"
#include "fabric_model/traffic.h"
#include "fabric_model/traffic_record.h"

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

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

bool installed(const char* program) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    for (size_t start = 0; start <= dirs.size();) {
        const size_t end = std::min(dirs.find(':', start), dirs.size());
        if (access((dirs.substr(start, end - start) + "/" + program).c_str(), X_OK) == 0) return true;
        start = end + 1;
    }
    return false;
}

// A unique directory under /tmp, removed with its contents by the test.
struct TempDir {
    std::string path;
    TempDir() {
        char name[] = "/tmp/weft_views_XXXXXX";
        assert_non_null(mkdtemp(name));
        path = name;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
};

uint32_t port_toward(Simulation& sim, abi::FabricCompass way) {
    for (const PortInfo& p : sim.model().cluster().board().ports)
        if (p.direction == way && p.plane == 0) return p.id;
    fail_msg("the board has no port %c", abi::fabric_letter(way));
    return 0;
}

// torus4x4: 16 chips, a cable east and one south of each; every cable up
// until one fails, then that one (and only it) shows as failed.
void test_the_state_of_a_torus_has_its_chips_cables_and_routers(void**) {
    Simulation sim(cluster("torus4x4"));
    nlohmann::json s = state_json(sim);
    assert_string_equal(s["schema"].get<std::string>().c_str(), kStateSchema);
    assert_int_equal(s["chips"].size(), 16);
    assert_int_equal(s["cables"].size(), 32);
    assert_int_equal(s["routers"].size(), 64);  // a router on each of the 4 ports of 16 chips
    for (const auto& c : s["cables"]) assert_string_equal(c["state"].get<std::string>().c_str(), "up");
    assert_int_equal(s["chips"][5]["x"], 1);
    assert_int_equal(s["chips"][5]["y"], 1);
    assert_false(s.contains("tables"));

    const uint32_t east = port_toward(sim, abi::kFabricEast);
    sim.fail_cable(5, east);
    s = state_json(sim, {.tables = true});
    size_t failed = 0;
    for (const auto& c : s["cables"])
        if (c["state"] == "failed") {
            ++failed;
            assert_int_equal(c["a"]["chip"], 5);
            assert_int_equal(c["a"]["port"], east);
            assert_int_equal(c["b"]["chip"], 6);
        }
    assert_int_equal(failed, 1);
    // Every chip's L0 table routes to all 16, itself by no hops. The chips
    // keep their tables; chip 5's east router routes what reaches it for the
    // dead cable by its detour table, which no longer leaves east.
    assert_int_equal(s["tables"].size(), 16);
    const auto& l0 = s["tables"][5]["l0"];
    assert_int_equal(l0.size(), 16);
    assert_string_equal(l0[5].get<std::string>().c_str(), "");
    assert_string_equal(l0[6].get<std::string>().c_str(), "E");
    assert_int_equal(s["tables"][5]["detours"].size(), 1);
    const auto& detour = s["tables"][5]["detours"][0];
    assert_int_equal(detour["port"], east);
    assert_string_equal(detour["l0"][5].get<std::string>().c_str(), "");
    for (const auto& route : detour["l0"]) assert_true(route.get<std::string>().rfind('E', 0) != 0);
    assert_true(detour["l0"][6].get<std::string>().size() >= 2);  // round the failed cable
    assert_false(s["tables"][4].contains("detours"));
}

// A deadlocked ring: each held receiver says where its head packet waits.
void test_the_state_of_a_deadlock_shows_what_each_channel_waits_for(void**) {
    Simulation sim(test::ring_without_dateline());
    try {
        ring_shift(sim, 3, 8 * 64 * sim.max_payload());
        fail_msg("the traffic finished");
    } catch (const Error&) {
    }
    const nlohmann::json s = state_json(sim);
    size_t waiting = 0;
    for (const auto& r : s["routers"])
        for (const auto& rx : r["receivers"])
            if (rx.contains("waits_for")) {
                ++waiting;
                assert_true(rx["held"].get<uint32_t>() > 0);
                assert_int_equal(rx["waits_for"]["receiver"]["chip"], (r["chip"].get<uint32_t>() + 1) % 8);
            }
    assert_int_equal(waiting, 8);
}

// Every hop a packet makes starts on the chip its last one ended on, the
// first on the chip that sent it, the last on its destination.
void check_hops(const RecordedPacket& p) {
    assert_true(p.arrived);
    assert_int_equal(p.hops.front().chip, p.src.chip);
    for (size_t i = 1; i < p.hops.size(); ++i) {
        assert_int_equal(p.hops[i].chip, p.hops[i - 1].to_chip);
        assert_true(p.hops[i].left_ns >= p.hops[i - 1].landed_ns);
    }
    assert_int_equal(p.hops.back().to_chip, p.dst.chip);
    assert_true(p.injected_ns() < p.delivered_ns());
}

uint32_t packets_for(uint64_t bytes, uint32_t most) { return uint32_t((bytes + most - 1) / most); }

void test_a_recorded_all_gather_has_every_packet_hop_by_hop(void**) {
    Simulation sim(cluster("ring8"));
    TrafficRecorder recorder(sim.engine());
    const uint64_t bytes = 64 << 10;
    ring_collective(sim, "all_gather", bytes);
    // Each of 8 chips sends its 7 chunks on, each in packets of at most max_payload.
    assert_int_equal(recorder.packets().size(), 8 * 7 * packets_for(bytes / 8, sim.max_payload()));
    for (const RecordedPacket& p : recorder.packets()) check_hops(p);
    assert_false(recorder.truncated());
    const nlohmann::json j = recorder.as_json({{"op", "all_gather"}});
    assert_string_equal(j["schema"].get<std::string>().c_str(), kTraceSchema);
    assert_int_equal(j["packets"].size(), recorder.packets().size());
    assert_string_equal(j["op"].get<std::string>().c_str(), "all_gather");
}

// Three hops each, and the same write twice: two packets, not one of six
// hops. (A simulation's traffic is all queued before it runs.)
void test_a_record_keeps_packets_of_several_hops_and_repeats_apart(void**) {
    Simulation sim(cluster("ring8"));
    TrafficRecorder recorder(sim.engine());
    model::FabricModel& m = sim.model();
    for (uint32_t c = 0; c < 8; ++c)
        sim.write(c, (c + 3) % 8, m.dram(8 << 20), m.dram(4 << 20), 2 * sim.max_payload(), m.dram(0));
    for (int twice = 0; twice < 2; ++twice) sim.write(1, 3, m.dram(9 << 20), m.dram(1 << 20), 64, m.dram(4));
    sim.finish();
    assert_int_equal(recorder.packets().size(), 8 * 2 + 2);
    size_t repeats = 0;
    for (const RecordedPacket& p : recorder.packets()) {
        assert_int_equal(p.hops.size(), p.payload_bytes == 64 ? 2 : 3);
        check_hops(p);
        repeats += p.payload_bytes == 64;
    }
    assert_int_equal(repeats, 2);
}

// Past its cap a record counts hops instead of keeping them, and says so.
void test_a_full_record_says_so(void**) {
    Simulation sim(cluster("ring8"));
    TrafficRecorder recorder(sim.engine(), 5);
    model::FabricModel& m = sim.model();
    for (int n = 0; n < 8; ++n) sim.write(0, 1, m.dram(8 << 20), m.dram(1 << 20), 64, m.dram(0));
    sim.finish();
    assert_int_equal(recorder.packets().size(), 5);
    assert_int_equal(recorder.unrecorded_hops(), 3);
    const nlohmann::json j = recorder.as_json();
    assert_true(j["truncated"].get<bool>());
    assert_true(j.contains("note"));
}

// 4mesh3x3: four meshes in boxes, five cables between them drawn bold.
void test_the_picture_of_four_meshes_has_their_boxes_and_exit_cables(void**) {
    Simulation sim(cluster("4mesh3x3"));
    std::string dot = cluster_dot(sim);
    assert_int_equal(count_of(dot, "subgraph cluster_mesh"), 4);
    assert_int_equal(count_of(dot, "style=\"bold\""), 5);
    assert_int_equal(count_of(dot, "dashed"), 0);
    assert_int_equal(count_of(dot, " -- "), 4 * 12 + 5);  // a 3x3 mesh has 12 cables
    // A failed cable inside mesh 0: red and dashed.
    sim.fail_cable(0, port_toward(sim, abi::kFabricEast));
    dot = cluster_dot(sim);
    assert_int_equal(count_of(dot, "style=\"solid,dashed\" color=\"red\""), 1);

    // Chip 0's routes reach every other chip: each of the 35 routes leaves it.
    PictureOptions o;
    o.routes_of = 0;
    dot = cluster_dot(sim, o);
    assert_true(count_of(dot, "color=\"#1f77b4\"") > 8);
    size_t leaving = 0;
    for (uint32_t to = 1; to < sim.chips(); ++to) {
        const auto hops = route_hops(sim.model(), 0, to);
        assert_false(hops.empty());
        assert_int_equal(hops.front().first, 0);
        assert_int_equal(hops.back().second, to);
        leaving += hops.size() > 0;
    }
    assert_int_equal(leaving, 35);
}

// The deadlock test's ring: its cycle of waits, eight cables round, in red.
void test_a_deadlocks_cycle_is_drawn_in_red(void**) {
    Simulation sim(test::ring_without_dateline());
    test::queue_circle_of_writes(sim);
    model::FabricModel& m = sim.model();
    try {
        sim.finish();
        fail_msg("the traffic finished");
    } catch (const Error&) {
    }
    const std::vector<ChannelWait> cycle = wait_cycle_waits(m);
    assert_int_equal(cycle.size(), 8);
    const std::string dot = cluster_dot(sim);
    assert_int_equal(count_of(dot, "color=\"red\" penwidth=3 dir="), 8);  // the wrap cable 7 -> 0 points back
    for (const ChannelWait& w : cycle) {
        const std::string edge = "c" + std::to_string(std::min(w.from.chip, w.to_chip)) + " -- c" +
                                 std::to_string(std::max(w.from.chip, w.to_chip));
        assert_true(dot.find(edge + " [style=\"solid\" color=\"red\"") != std::string::npos);
    }
    PictureOptions without;
    without.cycle = false;
    assert_int_equal(count_of(cluster_dot(sim, without), "color=\"red\""), 0);
}

// Samples of a run: some router holds packets at some time, none at the
// end; the heat map has a row per router and a column per sample.
void test_occupancy_is_sampled_and_drawn_as_a_heat_map(void**) {
    Simulation sim(cluster("ring8"));
    OccupancySampler sampler(sim.engine(), 500);
    ring_collective(sim, "all_gather", 1 << 20);
    sampler.sample_end();
    const OccupancySamples& s = sampler.samples();
    assert_int_equal(s.routers.size(), sim.model().router_count());
    assert_true(s.held.size() > 10);
    uint32_t most = 0;
    for (const auto& column : s.held) most = std::max(most, *std::max_element(column.begin(), column.end()));
    assert_true(most > 1);
    for (uint32_t in_use : s.held.back()) assert_int_equal(in_use, 0);
    const HeatMapSpec spec = occupancy_heat_map(s);
    assert_int_equal(spec.rows.size(), s.routers.size());
    assert_int_equal(spec.cells[0].size(), s.held.size());
    assert_string_equal(spec.rows[0].c_str(), "chip 0 port 1");
    const std::string script = heat_map_script(spec, "/tmp/x.png");
    assert_true(script.find("with image") != std::string::npos);
    assert_true(script.find("'chip 7 port 3'") != std::string::npos);
    if (!installed("gnuplot")) return;
    const TempDir dir;
    occupancy_heatmap(s, dir.path + "/occupancy.png");
    assert_true(std::filesystem::file_size(dir.path + "/occupancy.png") > 1000);
}

// A long run keeps its columns bounded: pairs merge, the spacing doubles.
void test_a_long_run_merges_its_samples(void**) {
    Simulation sim(cluster("ring8"));
    OccupancySampler sampler(sim.engine(), 10, 64);
    ring_collective(sim, "all_gather", 1 << 20);
    const OccupancySamples& s = sampler.samples();
    assert_true(s.held.size() <= 64 && s.held.size() >= 32);
    assert_true(s.every_ns > 10 && s.every_ns % 10 == 0);
    assert_true(s.every_ns * s.held.size() >= sim.engine().now_ns() - s.every_ns);
}

void test_pictures_are_drawn_when_graphviz_is_installed(void**) {
    if (!installed("dot")) skip();
    const TempDir dir;
    Simulation sim(cluster("torus4x4"));
    sim.fail_cable(0, port_toward(sim, abi::kFabricEast));
    PictureOptions o;
    o.routes_of = 0;
    draw_picture(cluster_dot(sim, o), dir.path + "/routes.svg");
    std::ifstream in(dir.path + "/routes.svg");
    const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    assert_true(svg.find("<svg") != std::string::npos);
    assert_int_equal(count_of(svg, "class=\"cluster\""), 1);
    assert_true(std::filesystem::exists(dir.path + "/routes.dot"));
}

void test_missing_graphviz_names_its_package(void**) {
    const TempDir dir, empty;
    const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", empty.path.c_str(), 1);
    std::string what;
    try {
        draw_picture("graph g { a -- b }\n", dir.path + "/g.svg");
    } catch (const Error& e) {
        what = e.what();
    }
    setenv("PATH", old_path.c_str(), 1);
    assert_true(what.find("dot is not installed") != std::string::npos);
    assert_true(what.find(kGraphvizPackage) != std::string::npos);
    assert_false(std::filesystem::exists(dir.path + "/g.svg"));
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_state_of_a_torus_has_its_chips_cables_and_routers),
        cmocka_unit_test(test_the_state_of_a_deadlock_shows_what_each_channel_waits_for),
        cmocka_unit_test(test_a_recorded_all_gather_has_every_packet_hop_by_hop),
        cmocka_unit_test(test_a_record_keeps_packets_of_several_hops_and_repeats_apart),
        cmocka_unit_test(test_a_full_record_says_so),
        cmocka_unit_test(test_the_picture_of_four_meshes_has_their_boxes_and_exit_cables),
        cmocka_unit_test(test_a_deadlocks_cycle_is_drawn_in_red),
        cmocka_unit_test(test_occupancy_is_sampled_and_drawn_as_a_heat_map),
        cmocka_unit_test(test_a_long_run_merges_its_samples),
        cmocka_unit_test(test_pictures_are_drawn_when_graphviz_is_installed),
        cmocka_unit_test(test_missing_graphviz_names_its_package),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
