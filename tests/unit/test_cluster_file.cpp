// Unit tests of the cluster-file parser: the shipped clusters, link generation
// for every topology, explicit links, planes, and one test per error with the
// line it must name. The real qemu-virt board comes from the built DTB; the
// multi-plane cases use boards made up here, since no shipped board has them.

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/knobs.h"
#include "driver/board.h"
#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using weft::BoardInfo;
using weft::ChipCoord;
using weft::ClusterSpec;
using weft::ClusterTopology;
using weft::ExitNode;
using weft::LinkInfo;
using Boards = std::map<std::string, BoardInfo>;

namespace {

Boards g_boards;

// Board with a full second plane: N E S W on plane 0 (ports 0-3), then on plane 1 (4-7).
BoardInfo two_plane_board() {
    BoardInfo b;
    b.name = "two-plane";
    for (uint32_t i = 0; i < 8; ++i) b.ports.push_back({i, static_cast<weft::abi::FabricCompass>(i % 4), i / 4, i});
    return b;
}

// Board whose plane 1 only runs east-west (ports 4 = E1, 5 = W1), so a column
// of chips cannot use it.
BoardInfo east_west_board() {
    BoardInfo b = two_plane_board();
    b.name = "east-west";
    b.ports.resize(4);
    b.ports.push_back({4, weft::abi::kFabricEast, 1, 4});
    b.ports.push_back({5, weft::abi::kFabricWest, 1, 5});
    return b;
}

int load_boards(void**) {
    using weft::knobs::knob;
    if (!weft::knobs::is_set(knob("WEFT_BUILD_DIR")) || !weft::knobs::is_set(knob("WEFT_SOURCE_DIR"))) {
        print_error("WEFT_BUILD_DIR and WEFT_SOURCE_DIR must be set\n");
        return -1;
    }
    try {
        g_boards["qemu-virt"] = weft::load_board(weft::paths::build_root() + "/boards/qemu-virt/board.dtb");
    } catch (const weft::Error& e) {
        print_error("%s\n", e.what());
        return -1;
    }
    g_boards["two-plane"] = two_plane_board();
    g_boards["east-west"] = east_west_board();
    return 0;
}

std::string shipped(const char* name) {
    return weft::knobs::text(weft::knobs::knob("WEFT_SOURCE_DIR")) + "/clusters/" + name;
}

// The first three lines of most test files; meshes start at line 4.
std::string head(const char* board = "qemu-virt") { return std::string("name: t\nboard: ") + board + "\nmeshes:\n"; }

// A mesh entry: three lines (id, shape, topology).
std::string mesh(uint32_t id, uint32_t w, uint32_t h, const char* topology) {
    return "  - id: " + std::to_string(id) + "\n    shape: [" + std::to_string(w) + ", " + std::to_string(h) +
           "]\n    topology: " + topology + "\n";
}

ClusterSpec parse_ok(const std::string& yaml, const char* file, int line) {
    try {
        return weft::parse_cluster(yaml, "test.yaml", g_boards);
    } catch (const weft::Error& e) {
        print_error("unexpected error: %s\n--- yaml ---\n%s", e.what(), yaml.c_str());
        _fail(file, line);
    }
    return {};
}
#define PARSE(yaml) parse_ok((yaml), __FILE__, __LINE__)

std::string error_of(const Boards& boards, const std::string& yaml) {
    try {
        weft::parse_cluster(yaml, "test.yaml", boards);
    } catch (const weft::Error& e) {
        return e.what();
    }
    return "(no error)";
}

void expect_error(const Boards& boards, const std::string& yaml, int line, std::initializer_list<const char*> phrases,
                  const char* file, int at) {
    const std::string msg = error_of(boards, yaml);
    bool ok = msg.rfind("test.yaml:" + std::to_string(line) + ": ", 0) == 0;
    for (const char* p : phrases) ok = ok && msg.find(p) != std::string::npos;
    if (ok) return;
    print_error("expected an error at test.yaml:%d containing:", line);
    for (const char* p : phrases) print_error(" '%s'", p);
    print_error("\ngot: %s\n--- yaml ---\n%s", msg.c_str(), yaml.c_str());
    _fail(file, at);
}
#define EXPECT_ERROR(yaml, line, ...) expect_error(g_boards, (yaml), (line), {__VA_ARGS__}, __FILE__, __LINE__)

std::string link_text(const ClusterSpec& s, const weft::LinkSpec& l) {
    return std::to_string(l.a.chip) + "." + weft::port_name(s.board, l.a.port) + "-" + std::to_string(l.b.chip) + "." +
           weft::port_name(s.board, l.b.port);
}

// Links as sorted "chip.PORT-chip.PORT" words, so a mismatch prints both sets.
std::string links_of(const ClusterSpec& s) {
    std::vector<std::string> words;
    for (const auto& l : s.links) words.push_back(link_text(s, l));
    std::sort(words.begin(), words.end());
    std::string out;
    for (const auto& w : words) out += w + " ";
    return out;
}

std::string sorted(std::vector<std::string> words) {
    std::sort(words.begin(), words.end());
    std::string out;
    for (const auto& w : words) out += w + " ";
    return out;
}

#define EXPECT_LINKS(spec, ...) assert_string_equal(links_of(spec).c_str(), sorted({__VA_ARGS__}).c_str())

// ---- shipped cluster files ----

ClusterSpec load_shipped(const char* name) {
    ClusterSpec s = weft::load_cluster(shipped(name), g_boards);
    assert_string_equal(s.board_name.c_str(), "qemu-virt");
    assert_string_equal(s.board.name.c_str(), "qemu-virt");
    assert_string_equal(s.path.c_str(), shipped(name).c_str());
    assert_int_equal(s.link_model.mtu, 16384);
    return s;
}

// One device architecture per cluster: a mesh may name its board, only the cluster's.
void test_boards_do_not_mix(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "    board: two-plane\n", 7,
                 "mesh 0 is on board two-plane but the cluster is on qemu-virt",
                 "cannot mix chips of different architectures");
    ClusterSpec s = PARSE(head() + mesh(0, 2, 1, "line") + "    board: qemu-virt\n");
    assert_int_equal(s.num_chips, 2);
}

void test_shipped_pair(void**) {
    ClusterSpec s = load_shipped("pair.yaml");
    assert_string_equal(s.name.c_str(), "pair");
    assert_int_equal(s.num_chips, 2);
    EXPECT_LINKS(s, "0.E-1.W");
}

void test_shipped_ring8(void**) {
    ClusterSpec s = load_shipped("ring8.yaml");
    assert_string_equal(s.name.c_str(), "ring8");
    assert_int_equal(s.num_chips, 8);
    assert_int_equal(s.links.size(), 8);
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W", "2.E-3.W", "3.E-4.W", "4.E-5.W", "5.E-6.W", "6.E-7.W", "7.E-0.W");
}

void test_shipped_line4(void**) {
    ClusterSpec s = load_shipped("line4.yaml");
    assert_string_equal(s.name.c_str(), "line4");
    assert_int_equal(s.num_chips, 4);
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W", "2.E-3.W");
}

void test_shipped_mesh2x2(void**) {
    ClusterSpec s = load_shipped("mesh2x2.yaml");
    assert_string_equal(s.name.c_str(), "mesh2x2");
    assert_int_equal(s.num_chips, 4);
    EXPECT_LINKS(s, "0.E-1.W", "2.E-3.W", "0.S-2.N", "1.S-3.N");
}

// ---- generated links ----

void test_line_horizontal(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 3, 1, "line"));
    assert_int_equal(s.num_chips, 3);
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W");
    for (const auto& l : s.links) assert_int_equal(l.line, 4);
}

void test_line_vertical(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 1, 3, "line"));
    EXPECT_LINKS(s, "0.S-1.N", "1.S-2.N");
}

void test_ring_horizontal(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 4, 1, "ring"));
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W", "2.E-3.W", "3.E-0.W");
}

void test_ring_vertical(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 1, 3, "ring"));
    EXPECT_LINKS(s, "0.S-1.N", "1.S-2.N", "2.S-0.N");
}

void test_mesh_grid(void**) {
    // 0 1 2
    // 3 4 5
    ClusterSpec s = PARSE(head() + mesh(0, 3, 2, "mesh"));
    assert_int_equal(s.num_chips, 6);
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W", "3.E-4.W", "4.E-5.W", "0.S-3.N", "1.S-4.N", "2.S-5.N");
}

void test_torus_3x3(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 3, 3, "torus"));
    assert_int_equal(s.num_chips, 9);
    EXPECT_LINKS(s, "0.E-1.W", "1.E-2.W", "2.E-0.W", "3.E-4.W", "4.E-5.W", "5.E-3.W", "6.E-7.W", "7.E-8.W", "8.E-6.W",
                 "0.S-3.N", "3.S-6.N", "6.S-0.N", "1.S-4.N", "4.S-7.N", "7.S-1.N", "2.S-5.N", "5.S-8.N", "8.S-2.N");
}

void test_torus_skips_size_2_wraps(void**) {
    // 0 1 / 2 3 / 4 5: rows are 2 wide, so only the columns wrap.
    ClusterSpec s = PARSE(head() + mesh(0, 2, 3, "torus"));
    EXPECT_LINKS(s, "0.E-1.W", "2.E-3.W", "4.E-5.W", "0.S-2.N", "2.S-4.N", "4.S-0.N", "1.S-3.N", "3.S-5.N", "5.S-1.N");
}

void test_single_chip_has_no_links(void**) {
    for (const char* topology : {"line", "mesh", "torus"}) {
        ClusterSpec s = PARSE(head() + mesh(0, 1, 1, topology));
        assert_int_equal(s.num_chips, 1);
        assert_int_equal(s.links.size(), 0);
    }
}

void test_meshes_number_chips_in_order(void**) {
    // Mesh 5 (chips 0-1) is listed before mesh 3 (chips 2-7), so it comes first.
    ClusterSpec s = PARSE(head() + mesh(5, 2, 1, "line") + mesh(3, 3, 2, "mesh"));
    assert_int_equal(s.num_chips, 8);
    assert_int_equal(s.meshes.size(), 2);
    assert_int_equal(s.meshes[0].id, 5);
    assert_int_equal(s.meshes[0].first_chip, 0);
    assert_int_equal(s.meshes[0].line, 4);
    assert_int_equal(s.meshes[1].id, 3);
    assert_int_equal(s.meshes[1].first_chip, 2);
    assert_int_equal(s.meshes[1].width, 3);
    assert_int_equal(s.meshes[1].height, 2);
    assert_string_equal(s.meshes[1].topology.c_str(), "mesh");
    assert_int_equal(s.meshes[1].line, 7);
    EXPECT_LINKS(s, "0.E-1.W", "2.E-3.W", "3.E-4.W", "5.E-6.W", "6.E-7.W", "2.S-5.N", "3.S-6.N", "4.S-7.N");
    for (const auto& l : s.links) assert_int_equal(l.line, l.a.chip < 2 ? 4 : 7);
}

void test_chip_coord(void**) {
    ClusterSpec s = PARSE(head() + mesh(5, 2, 1, "line") + mesh(3, 3, 2, "mesh"));
    weft::ChipCoord c = s.chip_coord(1);
    assert_int_equal(c.mesh, 5);
    assert_int_equal(c.x, 1);
    assert_int_equal(c.y, 0);
    c = s.chip_coord(6);  // chip 4 of mesh 3
    assert_int_equal(c.mesh, 3);
    assert_int_equal(c.x, 1);
    assert_int_equal(c.y, 1);
    bool threw = false;
    try {
        s.chip_coord(8);
    } catch (const weft::Error& e) {
        threw = std::string(e.what()).find("chip 8") != std::string::npos;
    }
    assert_true(threw);
}

// ---- explicit links, planes, lookups ----

void test_explicit_links(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 8, 1, "ring") +
                          "links:\n"
                          "  - [0.N, 7.S]\n"  // line 8
                          "  - - 3.p0\n"      // line 9: block style, raw port numbers
                          "    - 4.p2\n");
    assert_int_equal(s.links.size(), 10);
    const weft::LinkSpec& a = s.links[8];
    assert_int_equal(a.a.chip, 0);
    assert_int_equal(a.a.port, 0);
    assert_int_equal(a.b.chip, 7);
    assert_int_equal(a.b.port, 2);
    assert_int_equal(a.line, 8);
    const weft::LinkSpec& b = s.links[9];
    assert_string_equal(link_text(s, b).c_str(), "3.N-4.S");
    assert_int_equal(b.line, 9);
}

void test_links_key_may_be_empty(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 2, 1, "line") + "links:\nlink:\n");
    EXPECT_LINKS(s, "0.E-1.W");
    assert_int_equal(s.link_model.mtu, 16384);
}

void test_explicit_links_between_meshes(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 2, 1, "line") + mesh(1, 2, 1, "line") + "links:\n  - [1.E, 2.W]\n");
    EXPECT_LINKS(s, "0.E-1.W", "2.E-3.W", "1.E-2.W");
    assert_int_equal(s.links.back().line, 11);
}

void test_planes_default_to_all(void**) {
    ClusterSpec s = PARSE(head("two-plane") + mesh(0, 2, 1, "line"));
    assert_int_equal(s.meshes[0].planes, 2);
    EXPECT_LINKS(s, "0.E-1.W", "0.E1-1.W1");
    const weft::LinkSpec* l = s.link_at(0, 5);
    assert_non_null(l);
    assert_int_equal(l->b.port, 7);
}

void test_planes_limited(void**) {
    ClusterSpec s = PARSE(head("two-plane") + mesh(0, 1, 3, "ring") + "    planes: 1\n");
    assert_int_equal(s.meshes[0].planes, 1);
    EXPECT_LINKS(s, "0.S-1.N", "1.S-2.N", "2.S-0.N");
}

void test_explicit_plane_ports(void**) {
    ClusterSpec s = PARSE(head("two-plane") + mesh(0, 2, 1, "line") +
                          "    planes: 1\nlinks:\n  - [0.E1, 1.W1]\n"
                          "  - [1.N0, 0.S1]\n");
    EXPECT_LINKS(s, "0.E-1.W", "0.E1-1.W1", "1.N-0.S1");
    assert_int_equal(s.links[2].b.port, 6);
}

void test_plane_missing_a_direction(void**) {
    // east-west's plane 1 has E and W only: fine for a row, not for a column.
    ClusterSpec s = PARSE(head("east-west") + mesh(0, 2, 1, "line"));
    EXPECT_LINKS(s, "0.E-1.W", "0.E1-1.W1");
    expect_error(g_boards, head("east-west") + mesh(0, 1, 2, "line"), 4,
                 {"mesh 0 needs a S port on plane 1", "east-west"}, __FILE__, __LINE__);
}

void test_link_at(void**) {
    ClusterSpec s = weft::load_cluster(shipped("pair.yaml"), g_boards);
    const weft::LinkSpec* l = s.link_at(0, 1);  // E of chip 0
    assert_non_null(l);
    assert_int_equal(l->a.chip, 0);
    assert_int_equal(l->a.port, 1);
    assert_int_equal(l->b.chip, 1);
    assert_int_equal(l->b.port, 3);
    assert_ptr_equal(s.link_at(1, 3), l);
    assert_null(s.link_at(0, 3));
    assert_null(s.link_at(1, 1));
    assert_null(s.link_at(2, 1));
    assert_null(s.link_at(0, 99));
}

void test_port_name(void**) {
    const BoardInfo& virt = g_boards.at("qemu-virt");
    assert_string_equal(weft::port_name(virt, 0).c_str(), "N");
    assert_string_equal(weft::port_name(virt, 1).c_str(), "E");
    assert_string_equal(weft::port_name(virt, 2).c_str(), "S");
    assert_string_equal(weft::port_name(virt, 3).c_str(), "W");
    assert_string_equal(weft::port_name(virt, 4).c_str(), "p4");
    const BoardInfo& two = g_boards.at("two-plane");
    assert_string_equal(weft::port_name(two, 4).c_str(), "N1");
    assert_string_equal(weft::port_name(two, 5).c_str(), "E1");
    assert_string_equal(weft::port_name(two, 3).c_str(), "W");
}

void test_link_model(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 2, 1, "line") +
                          "link:\n  mtu: 1500\n  bandwidth_gbps: 12.5\n"
                          "  latency_us: 3\n");
    assert_int_equal(s.link_model.mtu, 1500);
    assert_true(s.link_model.options.bandwidth_gbps == 12.5);
    assert_true(s.link_model.options.latency_us == 3.0);
    ClusterSpec d = PARSE(head() + mesh(0, 2, 1, "line"));
    assert_int_equal(d.link_model.mtu, 16384);
    assert_true(d.link_model.options.bandwidth_gbps == 0 && d.link_model.options.latency_us == 0);
}

// The wire options: for every cable in the link model, per cable in a links:
// map entry (on a cable a mesh made, or a new one).
void test_link_faults(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 4, 1, "ring") +
                          "links:\n"
                          "  - ends: [1.W, 0.E]\n"  // line 8: the ring's own cable 0.E-1.W, either way round
                          "    drop_rate: 0.05\n"
                          "    mode: ttlink\n"
                          "  - {ends: [0.N, 2.S], bit_error_rate: 1e-5, seed: 99, mode: compliance}\n"  // line 11
                          "link:\n"
                          "  drop_rate: 0.01\n"
                          "  bit_error_rate: 1e-6\n"
                          "  seed: 18446744073709551615\n"
                          "  mode: compliance\n");
    assert_int_equal(s.links.size(), 5);  // the ring's four, plus one new
    const weft::LinkOptions& m = s.link_model.options;
    assert_true(m.drop_rate == 0.01 && m.bit_error_rate == 1e-6 && m.compliance);
    assert_true(m.seed == UINT64_MAX);

    // Cable 0 is 0.E-1.W: the entry changed it, added nothing.
    assert_string_equal(link_text(s, s.links[0]).c_str(), "0.E-1.W");
    assert_int_equal(s.links[0].line, 4);
    assert_int_equal(s.links[0].overrides_line, 8);
    const weft::LinkOptions o0 = s.link_options(0);
    assert_true(o0.drop_rate == 0.05 && o0.bit_error_rate == 1e-6 && !o0.compliance);

    const weft::LinkSpec& extra = s.links[4];
    assert_string_equal(link_text(s, extra).c_str(), "0.N-2.S");
    assert_int_equal(extra.line, 11);
    const weft::LinkOptions o4 = s.link_options(4);
    assert_true(o4.drop_rate == 0.01 && o4.bit_error_rate == 1e-5 && o4.compliance && o4.seed == 99);

    // Cables without their own seed get distinct streams derived from the
    // model's, the same on every parse.
    const weft::LinkOptions o1 = s.link_options(1), o2 = s.link_options(2);
    assert_true(o1.drop_rate == 0.01 && o1.compliance);
    assert_true(o0.seed != o1.seed && o1.seed != o2.seed && o1.seed != UINT64_MAX);
    assert_true(PARSE(head() + mesh(0, 4, 1, "ring") + "link:\n  seed: 18446744073709551615\n").link_options(1).seed ==
                o1.seed);

    // Without the keys: a clean wire in TT-link mode.
    ClusterSpec d = PARSE(head() + mesh(0, 2, 1, "line"));
    const weft::LinkOptions od = d.link_options(0);
    assert_true(od.drop_rate == 0 && od.bit_error_rate == 0 && !od.compliance);
}

// Flapping and shaping come from the file too, for every cable or for one,
// and a flap is judged on what the cable ends up with.
void test_link_flap_and_shaping(void**) {
    ClusterSpec s = PARSE(head() + mesh(0, 3, 1, "line") +
                          "links:\n"
                          "  - {ends: [1.E, 2.W], flap_period_ms: 200, flap_down_ms: 50, bandwidth_gbps: 0.5}\n"
                          "link:\n"
                          "  latency_us: 2\n"
                          "  bandwidth_gbps: 4\n");
    const weft::LinkOptions o0 = s.link_options(0), o1 = s.link_options(1);
    assert_true(o0.flap_period_ms == 0 && o0.bandwidth_gbps == 4 && o0.latency_us == 2);
    assert_true(o1.flap_period_ms == 200 && o1.flap_down_ms == 50 && o1.bandwidth_gbps == 0.5 && o1.latency_us == 2);
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "link:\n  flap_period_ms: 100\n  flap_down_ms: 100\n", 8,
                 "the cable between port E of chip 0 and port W of chip 1 would never be up: flap_down_ms 100 is not "
                 "shorter than flap_period_ms 100");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - {ends: [0.E, 1.W], flap_down_ms: 10}\n", 8,
                 "has flap_down_ms but no flap_period_ms");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "link:\n  flap_period_ms: -5\n", 8, "flap_period_ms (ms) must be");
}

// ---- errors ----

void test_error_malformed_yaml(void**) {
    EXPECT_ERROR(head() + "  - id: 0\n    shape: [2, 1]]\n    topology: line\n", 5, "malformed YAML");
    EXPECT_ERROR("name: t\nboard: *nothing\n", 2, "malformed YAML", "anchor");
    // yaml-cpp 0.7's LoadAll would loop forever on these stray commas.
    EXPECT_ERROR(",\n", 1, "malformed YAML: unexpected ','");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "---\n,\n", 8, "malformed YAML: unexpected ','");
}

void test_error_not_a_map(void**) {
    EXPECT_ERROR("- a\n- b\n", 1, "must be a map", "name, board, meshes, links, link");
    EXPECT_ERROR("# a comment\n\njust words\n", 3, "must be a map", "'just words'");
}

void test_error_empty(void**) {
    EXPECT_ERROR("", 1, "empty");
    EXPECT_ERROR("# nothing but a comment\n", 1, "empty");
}

void test_empty_documents_are_skipped(void**) {
    ClusterSpec s = PARSE("---\n---\n" + head() + mesh(0, 2, 1, "line") + "---\n");
    EXPECT_LINKS(s, "0.E-1.W");
    assert_int_equal(s.meshes[0].line, 6);
}

void test_error_second_document(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "---\nname: u\n", 8, "second YAML document");
}

void test_error_unknown_keys(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "colour: red\n", 7, "unknown key 'colour'",
                 "allowed keys: name, board, meshes, links, link");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "    size: 3\n", 7, "unknown key 'size' in a mesh",
                 "allowed keys: id, shape, topology, planes");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "link:\n  mtu: 9000\n  speed: 3\n", 9,
                 "unknown key 'speed' in the link model", "allowed keys: mtu, bandwidth_gbps, latency_us");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "[1, 2]: x\n", 7, "must be plain words");
}

void test_error_duplicate_key(void**) {
    EXPECT_ERROR("name: t\nboard: qemu-virt\nname: u\nmeshes:\n" + mesh(0, 2, 1, "line"), 3, "key 'name' appears twice",
                 "first at line 1");
}

void test_error_missing_keys(void**) {
    EXPECT_ERROR("# comment\nboard: qemu-virt\nmeshes:\n" + mesh(0, 2, 1, "line"), 2,
                 "missing the required key 'name'");
    EXPECT_ERROR("name: t\nmeshes:\n" + mesh(0, 2, 1, "line"), 1, "missing the required key 'board'");
    EXPECT_ERROR("name: t\nboard: qemu-virt\n", 1, "missing the required key 'meshes'");
    EXPECT_ERROR(head() + "  - shape: [2, 1]\n    topology: line\n", 4, "missing the required key 'id'");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "  - id: 1\n    topology: line\n", 7,
                 "mesh 1 is missing the required key 'shape'");
    EXPECT_ERROR(head() + "  - id: 0\n    shape: [2, 1]\n", 4, "mesh 0 is missing the required key 'topology'");
}

void test_error_bad_shape(void**) {
    const char* phrase = "shape must be [width, height] with two positive integers";
    for (const char* shape : {"[2]", "[2, 1, 1]", "[2, 0]", "[x, 1]", "[-1, 2]", "4", "{w: 2}", "[[2], 1]",
                              "[2, 99999999999]", "[0x2, 1]", ""}) {
        EXPECT_ERROR(head() + "  - id: 0\n    shape: " + shape + "\n    topology: line\n", 5, phrase);
    }
    // Block style: the line is the element's, not the key's.
    EXPECT_ERROR(head() + "  - id: 0\n    shape:\n      - 2\n      - -1\n    topology: line\n", 7, phrase,
                 "'-1' as the height");
}

void test_error_bad_scalars(void**) {
    EXPECT_ERROR("name: [a]\nboard: qemu-virt\nmeshes:\n" + mesh(0, 2, 1, "line"), 1, "name must be a single word");
    EXPECT_ERROR("name: two words\nboard: qemu-virt\nmeshes:\n" + mesh(0, 2, 1, "line"), 1,
                 "name 'two words' may only use letters, digits");
    EXPECT_ERROR("name: t\nboard: {x: 1}\nmeshes:\n" + mesh(0, 2, 1, "line"), 2, "board must be a single word");
    EXPECT_ERROR(head() + "  - id: -1\n    shape: [2, 1]\n    topology: line\n", 4,
                 "mesh id must be a non-negative integer, not '-1'");
    // An empty value is reported on its key's line, not the next line.
    EXPECT_ERROR(head() + "  - id:\n    shape: [2, 1]\n    topology: line\n", 4,
                 "mesh id must be a non-negative integer, not nothing");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "    planes: two\n", 7, "planes must be a non-negative integer");
    EXPECT_ERROR(head() + "  - id: 0\n    shape: [2, 1]\n    topology: [line]\n", 6, "topology must be a single word");
}

void test_error_bad_meshes(void**) {
    EXPECT_ERROR("name: t\nboard: qemu-virt\nmeshes: 3\n", 3, "meshes must be a sequence");
    EXPECT_ERROR("name: t\nboard: qemu-virt\nmeshes: []\n", 3, "at least one mesh");
    EXPECT_ERROR("name: t\nboard: qemu-virt\nmeshes:\n", 3, "meshes must be a sequence", "nothing");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "  - 7\n", 7, "a mesh must be a map", "'7'");
}

void test_error_bad_links_shape(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links: 5\n", 7, "links must be a sequence");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.N]\n", 8, "a link must be a pair");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.N, 1.N, 0.S]\n", 8, "a link must be a pair");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - 0.N\n", 8, "a link must be a pair", "'0.N'");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "link: 5\n", 7, "the link model must be a map");
}

void test_error_bad_link_model(void**) {
    const std::string base = head() + mesh(0, 2, 1, "line") + "link:\n";
    EXPECT_ERROR(base + "  mtu: 0\n", 8, "mtu must be an integer from 1 to 65535, not '0'");
    EXPECT_ERROR(base + "  mtu: 1.5\n", 8, "mtu must be an integer");
    EXPECT_ERROR(base + "  mtu: 65536\n", 8, "mtu must be an integer from 1 to 65535");
    EXPECT_ERROR(base + "  bandwidth_gbps: -1\n", 8,
                 "bandwidth_gbps (GB/s) must be a number within [0, 10000], not '-1'");
    EXPECT_ERROR(base + "  latency_us: fast\n", 8, "latency_us must be a number within [0, 1000000]");
    EXPECT_ERROR(base + "  latency_us: 2e6\n", 8, "latency_us must be a number within [0, 1000000], not '2e6'");
    EXPECT_ERROR(base + "  latency_us: 1\n  bandwidth_gbps: inf\n", 9,
                 "bandwidth_gbps (GB/s) must be a number within [0, 10000]", "inf");
}

void test_error_bad_link_faults(void**) {
    const std::string model = head() + mesh(0, 3, 1, "ring") + "link:\n";
    EXPECT_ERROR(model + "  drop_rate: 1.5\n", 8, "drop_rate must be a number from 0 to 1", "not '1.5'");
    EXPECT_ERROR(model + "  drop_rate: -0.1\n", 8, "drop_rate must be a number from 0 to 1", "not '-0.1'");
    EXPECT_ERROR(model + "  drop_rate: often\n", 8, "drop_rate must be a number from 0 to 1", "not 'often'");
    EXPECT_ERROR(model + "  mtu: 1500\n  bit_error_rate: nan\n", 9, "bit_error_rate must be a number from 0 to 1");
    EXPECT_ERROR(model + "  bit_error_rate: [1e-6]\n", 8, "bit_error_rate must be a number", "a sequence");
    EXPECT_ERROR(model + "  seed: -1\n", 8, "seed must be a non-negative integer below 2^64, not '-1'");
    EXPECT_ERROR(model + "  seed: 18446744073709551616\n", 8, "seed must be a non-negative integer below 2^64");
    EXPECT_ERROR(model + "  seed: 1.5\n", 8, "seed must be a non-negative integer");
    EXPECT_ERROR(model + "  mode: lossy\n", 8, "unknown link mode 'lossy'", "known modes: ttlink, compliance");
    EXPECT_ERROR(model + "  mode: [ttlink]\n", 8, "mode must be a single word");

    const std::string links = head() + mesh(0, 3, 1, "ring") + "links:\n";
    EXPECT_ERROR(links + "  - {ends: [0.E, 1.W], drop_rate: 2}\n", 8, "drop_rate must be a number from 0 to 1",
                 "not '2'");
    EXPECT_ERROR(links + "  - ends: [0.E, 1.W]\n    mode: fast\n", 9, "unknown link mode 'fast'");
    EXPECT_ERROR(links + "  - ends: [0.E, 1.W]\n    mtu: 9000\n", 9, "unknown key 'mtu' in a link entry",
                 "allowed keys: ends, bandwidth_gbps, latency_us, drop_rate, bit_error_rate, seed, mode, "
                 "flap_period_ms, flap_down_ms");
    EXPECT_ERROR(links + "  - {drop_rate: 0.1}\n", 8, "the link entry is missing the required key 'ends'");
    EXPECT_ERROR(links + "  - {ends: 0.E, drop_rate: 0.1}\n", 8, "ends must be a pair [CHIP.PORT, CHIP.PORT]", "'0.E'");
    EXPECT_ERROR(links + "  - {ends: [0.E, 9.W]}\n", 8, "chip 9 in '9.W' does not exist");
    EXPECT_ERROR(links + "  - {ends: [0.E, 1.W], seed: 1}\n  - {ends: [1.W, 0.E], seed: 2}\n", 9,
                 "options for the cable between port W of chip 1 and port E of chip 0 are set twice", "and at line 8");
    // Sharing one port with a cable is not naming that cable: a second cable on the port.
    EXPECT_ERROR(links + "  - {ends: [0.E, 2.W], drop_rate: 0.1}\n", 8, "port E of chip 0 is linked twice");
}

void test_error_unknown_board(void**) {
    EXPECT_ERROR("name: t\nboard: vax\nmeshes:\n" + mesh(0, 2, 1, "line"), 2, "unknown board 'vax'",
                 "known boards: ", "qemu-virt");
    expect_error(Boards{}, head() + mesh(0, 2, 1, "line"), 2, {"unknown board 'qemu-virt'", "no boards are built"},
                 __FILE__, __LINE__);
}

void test_error_unknown_topology(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "star"), 6, "unknown topology 'star'", "line, ring, mesh, torus");
}

void test_error_topology_shape(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 2, "line"), 6, "a line must be one chip wide or one chip high, not 2x2");
    EXPECT_ERROR(head() + mesh(0, 3, 2, "ring"), 6, "a ring must be one chip wide or one chip high, not 3x2");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "ring"), 6, "a ring needs at least 3 chips, not 2", "topology: line");
    EXPECT_ERROR(head() + mesh(0, 1, 1, "ring"), 6, "a ring needs at least 3 chips, not 1");
}

void test_error_planes_out_of_range(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "    planes: 2\n", 7, "planes 2 is out of range", "1..1");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "    planes: 0\n", 7, "planes 0 is out of range");
    EXPECT_ERROR(head("two-plane") + mesh(0, 2, 1, "line") + "    planes: 3\n", 7, "planes 3 is out of range", "1..2");
}

void test_error_duplicate_mesh_id(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + mesh(0, 2, 1, "line"), 7, "duplicate mesh id 0",
                 "first used at line 4");
}

void test_error_too_many_chips(void**) {
    EXPECT_ERROR(head() + mesh(0, 1024, 2, "mesh"), 4, "would have 2048 chips", "at most 1024");
    EXPECT_ERROR(head() + mesh(0, 1000, 1, "line") + mesh(1, 5, 5, "mesh"), 7, "would have 1025 chips");
    EXPECT_ERROR(head() + mesh(0, 5000, 1, "line"), 5, "larger than the 1024 chips");
}

void test_error_bad_port_syntax(void**) {
    for (const char* port :
         {"0N", "x.N", "0.Q", "0.E1x", "0.", ".N", "0.p", "0.n", "-1.N", "0.P1", "0.E-1", "[0]", "0.N.1", "''"}) {
        EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [1.N, " + port + "]\n", 8, "bad port",
                     "expected CHIP.PORT");
    }
}

void test_error_port_not_on_board(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [1.N, 0.E1]\n", 8, "port 'E1' is not on board qemu-virt",
                 "its ports: N, E, S, W");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.p4, 1.N]\n", 8, "port 'p4' is not on board");
}

void test_error_chip_out_of_range(void**) {
    EXPECT_ERROR(head() + mesh(0, 8, 1, "ring") + "links:\n  - [0.N, 8.N]\n", 8, "chip 8 in '8.N' does not exist",
                 "8 chips (0..7)");
}

void test_error_self_link(void**) {
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.N, 0.N]\n", 8,
                 "link from port N of chip 0 to itself");
    // The same port under two spellings is still the same port.
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [1.S, 1.p2]\n", 8,
                 "link from port S of chip 1 to itself");
}

void test_error_linked_twice(void**) {
    // Explicit link onto a port the ring already uses.
    EXPECT_ERROR(head() + mesh(0, 3, 1, "ring") + "links:\n  - [0.N, 0.E]\n", 8,
                 "port E of chip 0 is linked twice: here and at line 4");
    // Two explicit links sharing a port, on their second end.
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.N, 1.N]\n  - [0.S, 1.N]\n", 9,
                 "port N of chip 1 is linked twice: here and at line 8");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "links:\n  - [0.N, 1.S]\n  - [1.p0, 1.W]\n", 9,
                 "port W of chip 1 is linked twice: here and at line 4");
}

void test_error_cannot_open(void**) {
    const std::string path = shipped("no-such-cluster.yaml");
    bool matched = false;
    try {
        weft::load_cluster(path, g_boards);
    } catch (const weft::Error& e) {
        const std::string msg = e.what();
        matched = msg.find("cannot open") != std::string::npos && msg.find(path) != std::string::npos;
    }
    assert_true(matched);
}

// What is not a cluster file is refused by name before a byte is read: a
// directory, a device that never ends, a FIFO nobody writes, a huge file.
void test_error_not_a_cluster_file(void**) {
    const std::string dir = "/tmp/weft-test-cluster-file-" + std::to_string(getpid());
    mkdir(dir.c_str(), 0700);
    const std::string fifo = dir + "/fifo.yaml", big = dir + "/big.yaml";
    assert_int_equal(mkfifo(fifo.c_str(), 0600), 0);
    FILE* f = fopen(big.c_str(), "w");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), weft::kMaxClusterFileBytes + 1), 0);
    fclose(f);
    const std::pair<std::string, std::string> cases[] = {
        {"/tmp", "is a directory"},
        {"/dev/zero", "not a regular file"},
        {fifo, "not a regular file"},
        {big, "more than a cluster file's limit"},
    };
    for (const auto& [path, why] : cases) {
        std::string msg;
        try {
            weft::load_cluster(path, g_boards);
        } catch (const weft::Error& e) {
            msg = e.what();
        }
        if (msg.find("'" + path + "'") == std::string::npos || msg.find(why) == std::string::npos)
            fail_msg("%s: %s", path.c_str(), msg.c_str());
    }
    unlink(fifo.c_str());
    unlink(big.c_str());
    rmdir(dir.c_str());
}

// ---- robustness ----

// Any input must either parse into a consistent spec or raise weft::Error
// naming a line of the file; never another exception, a hang or a crash.
// Returns whether it parsed.
bool parses_or_fails_cleanly(const std::string& yaml) {
    const int lines = static_cast<int>(std::count(yaml.begin(), yaml.end(), '\n')) + 1;
    try {
        ClusterSpec s = weft::parse_cluster(yaml, "test.yaml", g_boards);
        std::map<std::pair<uint32_t, uint32_t>, int> used;
        for (const auto& l : s.links) {
            for (const auto& end : {l.a, l.b}) {
                assert_true(end.chip < s.num_chips);
                assert_true(end.port < s.board.ports.size());
                assert_int_equal(++used[std::make_pair(end.chip, end.port)], 1);
            }
        }
        return true;
    } catch (const weft::Error& e) {
        const std::string msg = e.what();
        const size_t colon = msg.find(':', 10);
        const bool named = msg.rfind("test.yaml:", 0) == 0 && colon != std::string::npos && colon > 10;
        const int line = named ? atoi(msg.c_str() + 10) : 0;
        if (!named || line < 1 || line > lines) {
            print_error("badly located error '%s' for:\n%s\n", msg.c_str(), yaml.c_str());
            fail();
        }
    } catch (const std::exception& e) {
        print_error("non-weft exception '%s' for:\n%s\n", e.what(), yaml.c_str());
        fail();
    }
    return false;
}

const std::string kRich =
    head() + mesh(2, 3, 1, "ring") + mesh(1, 2, 2, "torus") + "    planes: 1\n" +
    "links:\n  - [0.N, 3.p3]\n  - [6.E, 2.S]\n  - {ends: [0.E, 1.W], drop_rate: 0.1, mode: compliance}\n"
    "link:\n  mtu: 4096\n  latency_us: 2.5\n  bit_error_rate: 1e-6\n  seed: 7\n";

void test_truncations_and_mutations(void**) {
    static const char kNoise[] = ":[]{}-,.&*!|>'\"#%@ \t\n9xp\0";
    int parsed = 0, rejected = 0;
    for (size_t n = 0; n <= kRich.size(); ++n) ++(parses_or_fails_cleanly(kRich.substr(0, n)) ? parsed : rejected);
    for (size_t i = 0; i < kRich.size(); ++i) {
        for (size_t k = 0; k < sizeof kNoise - 1; ++k) {
            std::string m = kRich;
            m[i] = kNoise[k];
            ++(parses_or_fails_cleanly(m) ? parsed : rejected);
        }
    }
    // The full text parses and most damage is caught; both must happen.
    assert_true(parses_or_fails_cleanly(kRich));
    assert_true(rejected > parsed);
}

void test_hostile_inputs(void**) {
    static const char kBinary[] = "\xef\xbb\xbfname: t\n\0\x01\xff";  // BOM, NUL, invalid UTF-8
    struct Case {
        std::string yaml;
        bool valid;
    };
    const std::vector<Case> cases = {
        {std::string(100000, '['), false},
        {std::string(3000, '{') + std::string(3000, '}'), false},
        {"name: &a [*a]\nboard: qemu-virt\nmeshes:\n" + mesh(0, 2, 1, "line"), false},
        {head() + "  - &m {id: 0, shape: [2, 1], topology: line}\n  - *m\n", false},  // same id twice
        {head() + "  - id: 0\n    shape: &s [*s, 1]\n    topology: line\n", false},
        {head() + "  - id: 0\n    shape: [4294967295, 4294967295]\n    topology: torus\n", false},
        {head() + "  - id: 4294967295\n    shape: [1, 1]\n    topology: torus\n", true},
        {head() + mesh(0, 2, 1, "line") + "links:\n  - [4294967295.N, 99999999999999.p99999999999999]\n", false},
        {head() + mesh(0, 2, 1, "line") + "links:\n  - [0.p4294967295, 1.E4294967295]\n", false},
        {head() + mesh(0, 2, 1, "line") + "link:\n  bandwidth_gbps: 1e999\n", false},
        {head() + mesh(0, 2, 1, "line") + "link:\n  latency_us: nan\n", false},
        {std::string(kBinary, sizeof kBinary - 1), false},
        {"\t\tname: t\n", false},
        {"? ? ? ? x\n", false},
        {"!!binary aGVsbG8=\n", false},
        {"name: t\r\nboard: qemu-virt\r\nmeshes:\r\n  - {id: 0, shape: [3, 1], topology: ring}\r\n", true},
    };
    for (const Case& c : cases) {
        if (parses_or_fails_cleanly(c.yaml) == c.valid) continue;
        print_error("expected %s for:\n%s\n", c.valid ? "success" : "an error", c.yaml.c_str());
        fail();
    }
}

// Two 2x2 meshes joined by two cables between their facing columns: the
// typed topology the collectives get (driver/cluster_topology.h).
void test_topology_of_two_meshes(void**) {
    const ClusterSpec spec =
        PARSE(head() + mesh(0, 2, 2, "mesh") + mesh(1, 2, 2, "mesh") + "links:\n  - [1.E, 4.W]\n  - [3.E, 6.W]\n");
    const ClusterTopology t = ClusterTopology::from_spec(spec);
    assert_int_equal(t.chips(), 8);
    assert_int_equal(t.meshes().size(), 2);
    assert_int_equal(t.mesh(1).first_chip, 4);
    assert_int_equal(t.chip_at(1, 1, 1), 7);
    const ChipCoord c = t.coord(6);
    assert_int_equal(c.mesh, 1);
    assert_int_equal(c.x, 0);
    assert_int_equal(c.y, 1);
    assert_int_equal(t.mesh_of(3).id, 0);
    const std::vector<ExitNode> out = t.exit_nodes(0);
    assert_int_equal(out.size(), 2);
    assert_int_equal(out[0].chip, 1);
    assert_int_equal(out[0].peer_mesh, 1);
    assert_int_equal(out[0].peer_chip, 4);
    assert_int_equal(out[1].chip, 3);
    assert_int_equal(out[1].peer_chip, 6);
    assert_int_equal(t.exit_nodes(1).size(), 2);
    assert_int_equal(t.exit_nodes(1)[0].chip, 4);
    // Through the bridge's info and back, with one cable pulled.
    nlohmann::json info = {{"chips", nlohmann::json::array()},
                           {"meshes", t.meshes_json()},
                           {"links", nlohmann::json::array()}};
    for (uint32_t i = 0; i < 8; ++i) info["chips"].push_back({{"id", i}});
    for (const LinkInfo& l : t.links())
        info["links"].push_back({{"a", {{"chip", l.chip_a}, {"port", l.port_a}}},
                                 {"b", {{"chip", l.chip_b}, {"port", l.port_b}}},
                                 {"state", l.chip_a == 3 && l.chip_b == 6 ? "down" : "up"}});
    const ClusterTopology back = ClusterTopology::from_json(info);
    assert_int_equal(back.meshes().size(), 2);
    assert_string_equal(back.mesh(1).topology.c_str(), "mesh");
    assert_int_equal(back.links().size(), t.links().size());
    assert_false(back.exit_nodes(0)[1].up);
    assert_true(back.exit_nodes(0)[0].up);
    // Errors name what is wrong.
    bool threw = false;
    try {
        t.chip_at(1, 2, 0);
    } catch (const weft::Error& e) {
        threw = strstr(e.what(), "outside mesh 1 of shape 2x2") != nullptr;
    }
    assert_true(threw);
    info["meshes"][1]["shape"] = {2, 1};
    threw = false;
    try {
        ClusterTopology::from_json(info);
    } catch (const weft::Error& e) {
        threw = strstr(e.what(), "the meshes hold 6 chips but the cluster has 8") != nullptr;
    }
    assert_true(threw);
}

}  // namespace

// ---- the fabric: section ----

void test_fabric_section(void**) {
    ClusterSpec d = PARSE(head() + mesh(0, 4, 1, "ring"));
    assert_string_equal(d.fabric.topology.c_str(), "auto");
    assert_int_equal(d.fabric.slots, 8);
    assert_int_equal(d.fabric.packet_bytes, 0);  // unset: sized to the board
    assert_int_equal(d.fabric.line, 0);
    ClusterSpec s = PARSE(head() + mesh(0, 4, 1, "ring") +
                          "fabric:\n  topology: line\n  slots: 4\n  packet_bytes: 4096\n  lanes: 2\n"
                          "  router_timeout_ms: 500\n  planes: 1\n");
    assert_string_equal(s.fabric.topology.c_str(), "line");
    assert_int_equal(s.fabric.slots, 4);
    assert_int_equal(s.fabric.packet_bytes, 4096);
    assert_int_equal(s.fabric.lanes, 2);
    assert_int_equal(s.fabric.router_timeout_ms, 500);
    assert_int_equal(s.fabric.line, 8);  // where its keys start
    assert_false(s.fabric.fallback);
    assert_int_equal(s.fabric.planes, 1);
    // Unset: every plane of the board, or one beside fallback relays.
    assert_int_equal(d.fabric.planes, 0);
    assert_int_equal(d.fabric.planes_on(2), 2);
    ClusterSpec two = PARSE(head("two-plane") + mesh(0, 4, 1, "ring") + "fabric:\n  planes: 2\n");
    assert_int_equal(two.fabric.planes, 2);
    assert_int_equal(weft::FabricSpec::from_json(two.fabric.to_json()).planes, 2);
    // The fallback relays: off unless asked, and carried in the bridge's info to the runner.
    ClusterSpec f = PARSE(head() + mesh(0, 4, 1, "ring") + "fabric:\n  fallback: true\n");
    assert_true(f.fabric.fallback);
    assert_true(weft::FabricSpec::from_json(f.fabric.to_json()).fallback);
    assert_int_equal(f.fabric.planes_on(2), 1);
    // Bubble flow control on a ring, carried in the info; the dateline by default.
    assert_false(d.fabric.bubble);
    ClusterSpec b = PARSE(head() + mesh(0, 4, 1, "ring") + "fabric:\n  flow_control: bubble\n");
    assert_true(b.fabric.bubble);
    assert_true(weft::FabricSpec::from_json(b.fabric.to_json()).bubble);
    assert_true(
        PARSE(head() + mesh(0, 3, 3, "torus") + "fabric:\n  topology: ring\n  flow_control: bubble\n").fabric.bubble);
    // And on a torus's rows and columns.
    assert_true(PARSE(head() + mesh(0, 3, 3, "torus") + "fabric:\n  flow_control: bubble\n").fabric.bubble);
}

void test_fabric_section_errors(void**) {
    const std::string ring = head() + mesh(0, 4, 1, "ring");  // the fabric: key is on line 7
    EXPECT_ERROR(ring + "fabric:\n  topology: hypercube\n", 8, "unknown fabric topology 'hypercube'",
                 "line, ring, mesh, torus");
    EXPECT_ERROR(ring + "fabric:\n  topology: torus\n", 8, "a torus fabric needs a cluster of one torus");
    EXPECT_ERROR(ring + "fabric:\n  topology: mesh\n", 8, "a mesh fabric needs a cluster of one mesh or torus");
    EXPECT_ERROR(head() + mesh(0, 3, 3, "mesh") + "fabric:\n  topology: torus\n", 8,
                 "a torus fabric needs a cluster of one torus");
    EXPECT_ERROR(ring + "fabric:\n  slot: 4\n", 8, "unknown key 'slot' in the fabric");
    EXPECT_ERROR(ring + "fabric:\n  slots: 0\n", 8, "the fabric's slots must be");
    EXPECT_ERROR(ring + "fabric:\n  slots: 65\n", 8, "the fabric's slots must be");
    EXPECT_ERROR(ring + "fabric:\n  packet_bytes: 100\n", 8, "multiple of 64, not 100");
    EXPECT_ERROR(ring + "fabric:\n  packet_bytes: 32\n", 8, "the fabric's packet_bytes must be");
    EXPECT_ERROR(ring + "fabric:\n  lanes: 5\n", 8, "the fabric's lanes must be");
    EXPECT_ERROR(ring + "fabric:\n  planes: 2\n", 8, "the fabric's planes 2 is out of range", "board qemu-virt",
                 "1..1");
    const std::string two = head("two-plane") + mesh(0, 4, 1, "ring");
    EXPECT_ERROR(two + "fabric:\n  planes: 2\n  fallback: true\n", 8, "fallback: true runs on one plane");
    EXPECT_ERROR(ring + "fabric: [ring]\n", 7, "the fabric must be a map");
    EXPECT_ERROR(ring + "fabric:\n  fallback: maybe\n", 8, "the fabric's fallback must be true or false, not");
    EXPECT_ERROR(ring + "fabric:\n  flow_control: credit\n", 8, "flow_control must be dateline or bubble, not");
    EXPECT_ERROR(head() + mesh(0, 3, 3, "mesh") + "fabric:\n  flow_control: bubble\n", 8,
                 "flow_control: bubble keeps a free slot in each ring", "a 2D mesh, which has no rings");
    EXPECT_ERROR(head() + mesh(0, 3, 3, "torus") + "fabric:\n  topology: mesh\n  flow_control: bubble\n", 9,
                 "a 2D mesh, which has no rings", "set topology: torus)");
    EXPECT_ERROR(head() + mesh(0, 2, 1, "line") + "fabric:\n  topology: ring\n", 8,
                 "a fabric ring needs at least 3 chips, not 2");
}

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_pair),
        cmocka_unit_test(test_shipped_ring8),
        cmocka_unit_test(test_shipped_line4),
        cmocka_unit_test(test_shipped_mesh2x2),
        cmocka_unit_test(test_line_horizontal),
        cmocka_unit_test(test_line_vertical),
        cmocka_unit_test(test_ring_horizontal),
        cmocka_unit_test(test_ring_vertical),
        cmocka_unit_test(test_mesh_grid),
        cmocka_unit_test(test_torus_3x3),
        cmocka_unit_test(test_torus_skips_size_2_wraps),
        cmocka_unit_test(test_single_chip_has_no_links),
        cmocka_unit_test(test_meshes_number_chips_in_order),
        cmocka_unit_test(test_chip_coord),
        cmocka_unit_test(test_explicit_links),
        cmocka_unit_test(test_links_key_may_be_empty),
        cmocka_unit_test(test_explicit_links_between_meshes),
        cmocka_unit_test(test_planes_default_to_all),
        cmocka_unit_test(test_planes_limited),
        cmocka_unit_test(test_explicit_plane_ports),
        cmocka_unit_test(test_plane_missing_a_direction),
        cmocka_unit_test(test_link_at),
        cmocka_unit_test(test_port_name),
        cmocka_unit_test(test_link_model),
        cmocka_unit_test(test_link_faults),
        cmocka_unit_test(test_link_flap_and_shaping),
        cmocka_unit_test(test_error_malformed_yaml),
        cmocka_unit_test(test_error_not_a_map),
        cmocka_unit_test(test_error_empty),
        cmocka_unit_test(test_empty_documents_are_skipped),
        cmocka_unit_test(test_error_second_document),
        cmocka_unit_test(test_error_unknown_keys),
        cmocka_unit_test(test_error_duplicate_key),
        cmocka_unit_test(test_error_missing_keys),
        cmocka_unit_test(test_error_bad_shape),
        cmocka_unit_test(test_error_bad_scalars),
        cmocka_unit_test(test_error_bad_meshes),
        cmocka_unit_test(test_error_bad_links_shape),
        cmocka_unit_test(test_error_bad_link_model),
        cmocka_unit_test(test_error_bad_link_faults),
        cmocka_unit_test(test_error_unknown_board),
        cmocka_unit_test(test_error_unknown_topology),
        cmocka_unit_test(test_error_topology_shape),
        cmocka_unit_test(test_error_planes_out_of_range),
        cmocka_unit_test(test_error_duplicate_mesh_id),
        cmocka_unit_test(test_error_too_many_chips),
        cmocka_unit_test(test_error_bad_port_syntax),
        cmocka_unit_test(test_error_port_not_on_board),
        cmocka_unit_test(test_error_chip_out_of_range),
        cmocka_unit_test(test_error_self_link),
        cmocka_unit_test(test_error_linked_twice),
        cmocka_unit_test(test_error_cannot_open),
        cmocka_unit_test(test_error_not_a_cluster_file),
        cmocka_unit_test(test_truncations_and_mutations),
        cmocka_unit_test(test_hostile_inputs),
        cmocka_unit_test(test_topology_of_two_meshes),
        cmocka_unit_test(test_fabric_section),
        cmocka_unit_test(test_fabric_section_errors),
        cmocka_unit_test(test_boards_do_not_mix),
    };
    return cmocka_run_group_tests(tests, load_boards, nullptr);
}
