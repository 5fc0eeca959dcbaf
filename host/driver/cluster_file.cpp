#include "driver/cluster_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/error.h"

namespace weft {

const LinkSpec* ClusterSpec::link_at(uint32_t chip, uint32_t port) const {
    for (const LinkSpec& l : links)
        if ((l.a.chip == chip && l.a.port == port) || (l.b.chip == chip && l.b.port == port)) return &l;
    return nullptr;
}

ChipCoord ClusterSpec::chip_coord(uint32_t chip) const {
    for (const Mesh& m : meshes) {
        if (chip < m.first_chip || chip - m.first_chip >= m.chips()) continue;
        const uint32_t i = chip - m.first_chip;
        return ChipCoord{m.id, i % m.width, i / m.width};
    }
    throw Error("chip " + std::to_string(chip) + " is not in cluster '" + name + "', which has " +
                std::to_string(num_chips) + " chips");
}

LinkOptions ClusterSpec::link_options(size_t index) const {
    const LinkSpec& l = links.at(index);
    LinkOptions o = link_model.options;
    // splitmix64's finaliser over (model seed, index): neighbouring indices
    // get unrelated streams, and the same file always gives the same ones.
    uint64_t z = o.seed + 0x9e3779b97f4a7c15ull * (index + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    o.seed = z ^ (z >> 31);
    if (l.overrides.drop_rate) o.drop_rate = *l.overrides.drop_rate;
    if (l.overrides.bit_error_rate) o.bit_error_rate = *l.overrides.bit_error_rate;
    if (l.overrides.seed) o.seed = *l.overrides.seed;
    if (l.overrides.compliance) o.compliance = *l.overrides.compliance;
    if (l.overrides.flap_period_ms) o.flap_period_ms = *l.overrides.flap_period_ms;
    if (l.overrides.flap_down_ms) o.flap_down_ms = *l.overrides.flap_down_ms;
    if (l.overrides.bandwidth_gbps) o.bandwidth_gbps = *l.overrides.bandwidth_gbps;
    if (l.overrides.latency_us) o.latency_us = *l.overrides.latency_us;
    return o;
}

std::string port_name(const BoardInfo& board, uint32_t port) {
    for (const PortInfo& p : board.ports) {
        if (p.id != port) continue;
        std::string name(1, abi::fabric_letter(p.direction));
        return p.plane == 0 ? name : name + std::to_string(p.plane);
    }
    return "p" + std::to_string(port);
}

int port_named(const BoardInfo& board, const std::string& name) {
    for (const PortInfo& p : board.ports)
        if (name == port_name(board, p.id) || name == std::to_string(p.id) || name == "p" + std::to_string(p.id) ||
            (p.plane == 0 && name == std::string(1, abi::fabric_letter(p.direction)) + "0"))
            return static_cast<int>(p.id);
    return -1;
}

namespace {

const std::vector<std::string> kTopKeys = {"name", "board", "meshes", "links", "link", "fabric", "systems"};
const std::vector<std::string> kSystemsKeys = {"topology", "w", "h"};
const std::vector<std::string> kFabricKeys = {"topology",          "planes",   "slots",       "packet_bytes", "lanes",
                                              "router_timeout_ms", "fallback", "flow_control"};
const std::vector<std::string> kFabricTopologies = {"auto", "line", "ring", "mesh", "torus"};
const std::vector<std::string> kMeshKeys = {"id", "shape", "topology", "planes", "board"};
const std::vector<std::string> kLinkModelKeys = {"mtu",       "bandwidth_gbps", "latency_us",
                                                 "drop_rate", "bit_error_rate", "seed",
                                                 "mode",      "flap_period_ms", "flap_down_ms"};
const std::vector<std::string> kLinkEntryKeys = {"ends",      "bandwidth_gbps", "latency_us",
                                                 "drop_rate", "bit_error_rate", "seed",
                                                 "mode",      "flap_period_ms", "flap_down_ms"};
const std::vector<std::string> kLinkModes = {"ttlink", "compliance"};
const std::vector<std::string> kTopologies = {"line", "ring", "mesh", "torus"};

std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
    return out;
}

bool contains(const std::vector<std::string>& words, const std::string& w) {
    return std::find(words.begin(), words.end(), w) != words.end();
}

// yaml-cpp marks an empty value at the token after it, often on a later line,
// so empty and unmarked nodes report a line the caller knows is right.
int line_of(const YAML::Node& node, int fallback) {
    if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
    return node.Mark().line + 1;
}

// How a value looks, for "expected X, not Y" messages.
std::string describe(const YAML::Node& node) {
    if (node.IsScalar()) {
        const std::string& s = node.Scalar();
        return "'" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "'";
    }
    if (node.IsSequence()) return "a sequence";
    if (node.IsMap()) return "a map";
    return "nothing";
}

// Plain decimal only: YAML's 0x, 0o and 1_000 spellings would only surprise
// in a file that counts chips and ports.
bool parse_u32(std::string_view s, uint32_t& out) {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

bool parse_u64(std::string_view s, uint64_t& out) {
    if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

bool parse_number(std::string_view s, double& out) {
    if (s.empty()) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

std::string integer_range(uint32_t min, uint32_t max) {
    if (max != UINT32_MAX) return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    return min == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(min);
}

bool valid_name(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

// A port as written, before it is checked against the cluster and board.
struct PortText {
    uint32_t chip = 0;
    char kind = 0;        // N, E, S, W, or 'p' for a raw port number
    uint32_t number = 0;  // the plane, or the raw port number
};

std::optional<PortText> split_port(std::string_view s) {
    const size_t dot = s.find('.');
    PortText t;
    if (dot == std::string_view::npos || !parse_u32(s.substr(0, dot), t.chip)) return std::nullopt;
    const std::string_view port = s.substr(dot + 1);
    if (port.empty()) return std::nullopt;
    t.kind = port[0];
    const std::string_view digits = port.substr(1);
    if (t.kind == 'p') return parse_u32(digits, t.number) ? std::optional(t) : std::nullopt;
    if (abi::fabric_compass_of(t.kind) > 3) return std::nullopt;
    if (!digits.empty() && !parse_u32(digits, t.number)) return std::nullopt;
    return t;
}

// Records the root node of each document the parser walks through.
class DocumentRoots : public YAML::EventHandler {
public:
    bool empty = true;  // the last document's root is null
    YAML::Mark mark;    // where the last document's root starts

    void OnDocumentStart(const YAML::Mark&) override { seen_root_ = false; }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m, true); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m, false); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override {
        node(m, false);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        node(m, false);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        node(m, false);
    }
    void OnMapEnd() override {}

private:
    void node(const YAML::Mark& m, bool null) {
        if (seen_root_) return;
        seen_root_ = true;
        mark = m;
        empty = null;
    }
    bool seen_root_ = false;
};

struct Field {
    YAML::Node value;
    int key_line = 0;
    int line = 0;  // of the value, or of the key when the value is empty
};
using Fields = std::map<std::string, Field>;

class Parser {
public:
    Parser(const std::string& path, const BoardSource& boards) : path_(path), boards_(boards) {}

    ClusterSpec parse(const std::string& text) {
        const YAML::Node root = load_document(text);
        const int root_line = line_of(root, 1);
        const Fields top = fields(root, root_line, "the cluster file", kTopKeys);
        spec_.path = path_;
        parse_name(required(top, "name", root_line, "the cluster file"));
        parse_board(required(top, "board", root_line, "the cluster file"));
        parse_meshes(required(top, "meshes", root_line, "the cluster file"));
        if (auto it = top.find("links"); it != top.end()) parse_links(it->second);
        if (auto it = top.find("link"); it != top.end()) parse_link_model(it->second);
        if (auto it = top.find("fabric"); it != top.end()) parse_fabric(it->second);
        if (auto it = top.find("systems"); it != top.end()) parse_systems(it->second);
        check_flaps();
        return std::move(spec_);
    }

private:
    [[noreturn]] void fail(int line, const std::string& msg) const {
        throw Error(path_ + ":" + std::to_string(line) + ": " + msg);
    }

    YAML::Node load_document(const std::string& text) const {
        try {
            check_documents(text);
            // check_documents proved the stream ends and holds at most one
            // non-empty document, so LoadAll is safe and that one is the file.
            for (const YAML::Node& doc : YAML::LoadAll(text))
                if (!doc.IsNull()) return doc;
        } catch (const YAML::Exception& e) {
            fail(e.mark.is_null() ? 1 : e.mark.line + 1, "malformed YAML: " + e.msg);
        }
        fail(1, "the file is empty; a cluster file is a map with keys " + join(kTopKeys));
    }

    // Walks the documents of the stream without building them. Empty
    // documents (a stray '---') are harmless and skipped.
    void check_documents(const std::string& text) const {
        std::istringstream in(text);
        YAML::Parser parser(in);
        DocumentRoots roots;
        std::optional<YAML::Mark> last_empty;
        int documents = 0;
        while (parser.HandleNextDocument(roots)) {
            if (!roots.empty) {
                if (++documents > 1)
                    fail(roots.mark.line + 1, "a second YAML document starts here; a cluster file holds one");
                last_empty.reset();
                continue;
            }
            // yaml-cpp 0.7 does not consume a ',' outside a flow collection and
            // reports an empty document at it forever (jbeder/yaml-cpp#1040),
            // so an empty document where the last one was means it is stuck.
            if (last_empty && last_empty->pos == roots.mark.pos) {
                const size_t pos = static_cast<size_t>(std::max(0, roots.mark.pos));
                fail(roots.mark.line + 1, "malformed YAML: unexpected " +
                                              (pos < text.size() ? "'" + text.substr(pos, 1) + "'" : "end of file"));
            }
            last_empty = roots.mark;
        }
    }

    // The keys of a map, each checked against `allowed` and seen only once.
    Fields fields(const YAML::Node& map, int line, const std::string& what,
                  const std::vector<std::string>& allowed) const {
        if (!map.IsMap()) fail(line, what + " must be a map with keys " + join(allowed) + ", not " + describe(map));
        Fields out;
        for (auto it = map.begin(); it != map.end(); ++it) {
            const int key_line = line_of(it->first, line);
            if (!it->first.IsScalar()) fail(key_line, "the keys of " + what + " must be plain words");
            const std::string& key = it->first.Scalar();
            if (!contains(allowed, key))
                fail(key_line, "unknown key '" + key + "' in " + what + " (allowed keys: " + join(allowed) + ")");
            if (auto prev = out.find(key); prev != out.end())
                fail(key_line, "key '" + key + "' appears twice in " + what + " (first at line " +
                                   std::to_string(prev->second.key_line) + ")");
            out[key] = Field{it->second, key_line, line_of(it->second, key_line)};
        }
        return out;
    }

    const Field& required(const Fields& f, const std::string& key, int map_line, const std::string& what) const {
        auto it = f.find(key);
        if (it == f.end()) fail(map_line, what + " is missing the required key '" + key + "'");
        return it->second;
    }

    std::string word(const Field& f, const std::string& what) const {
        if (!f.value.IsScalar()) fail(f.line, what + " must be a single word, not " + describe(f.value));
        return f.value.Scalar();
    }

    uint32_t integer(const YAML::Node& n, int line, const std::string& what, uint32_t min, uint32_t max) const {
        uint32_t v = 0;
        if (!n.IsScalar() || !parse_u32(n.Scalar(), v) || v < min || v > max)
            fail(line, what + " must be " + integer_range(min, max) + ", not " + describe(n));
        return v;
    }

    double at_most(const Field& f, const std::string& what, double max) const {
        double v = 0;
        if (!f.value.IsScalar() || !parse_number(f.value.Scalar(), v) || !(v >= 0 && v <= max))
            fail(f.line, what + " must be a number within [0, " + std::to_string(static_cast<uint64_t>(max)) +
                             "], not " + describe(f.value));
        return v;
    }

    void parse_name(const Field& f) {
        spec_.name = word(f, "name");
        if (!valid_name(spec_.name))
            fail(f.line, "name '" + spec_.name + "' may only use letters, digits, '_' and '-'");
    }

    // Only the board named here is read: another board's broken DTB is no
    // business of this cluster.
    void parse_board(const Field& f) {
        spec_.board_name = word(f, "board");
        try {
            spec_.board = boards_(spec_.board_name);
        } catch (const Error& e) {
            fail(f.line, e.what());
        }
    }

    void parse_meshes(const Field& f) {
        if (!f.value.IsSequence()) fail(f.line, "meshes must be a sequence of meshes, not " + describe(f.value));
        if (f.value.size() == 0) fail(f.line, "meshes must list at least one mesh");
        std::map<uint32_t, int> id_lines;
        for (const YAML::Node& entry : f.value) {
            Mesh m = parse_mesh(entry, line_of(entry, f.line), id_lines);
            m.first_chip = spec_.num_chips;
            if (uint64_t(spec_.num_chips) + m.chips() > kMaxClusterChips)
                fail(m.line, "the cluster would have " + std::to_string(uint64_t(spec_.num_chips) + m.chips()) +
                                 " chips; at most " + std::to_string(kMaxClusterChips) + " are supported");
            spec_.num_chips += m.chips();
            spec_.meshes.push_back(m);
            generate_links(spec_.meshes.back());
        }
    }

    Mesh parse_mesh(const YAML::Node& entry, int line, std::map<uint32_t, int>& id_lines) const {
        const Fields f = fields(entry, line, "a mesh", kMeshKeys);
        Mesh m;
        m.line = line;
        const Field& id = required(f, "id", line, "the mesh");
        m.id = integer(id.value, id.line, "mesh id", 0, UINT32_MAX);
        if (auto [it, fresh] = id_lines.emplace(m.id, id.line); !fresh)
            fail(id.line, "duplicate mesh id " + std::to_string(m.id) + " (first used at line " +
                              std::to_string(it->second) + ")");
        const std::string name = "mesh " + std::to_string(m.id);
        parse_shape(required(f, "shape", line, name), m);
        parse_topology(required(f, "topology", line, name), m);
        // One device architecture per cluster (seed 002): a mesh may say its
        // board, and it must be the cluster's.
        if (auto board = f.find("board"); board != f.end()) {
            const std::string b = word(board->second, name + "'s board");
            if (b != spec_.board_name)
                fail(board->second.line, name + " is on board " + b + " but the cluster is on " + spec_.board_name +
                                             ": a cluster cannot mix chips of different architectures (one board "
                                             "for every mesh)");
        }
        auto planes = f.find("planes");
        m.planes = planes == f.end() ? std::max(1u, spec_.board.planes()) : parse_planes(planes->second);
        return m;
    }

    void parse_shape(const Field& f, Mesh& m) const {
        const std::string expected = "shape must be [width, height] with two positive integers";
        if (!f.value.IsSequence() || f.value.size() != 2) fail(f.line, expected + ", not " + describe(f.value));
        uint32_t dims[2] = {0, 0};
        for (size_t i = 0; i < 2; ++i) {
            const YAML::Node n = f.value[i];
            if (!n.IsScalar() || !parse_u32(n.Scalar(), dims[i]) || dims[i] == 0)
                fail(line_of(n, f.line), expected + ", not " + describe(n) + " as the " + (i ? "height" : "width"));
        }
        // Both at most the cluster limit, so their product cannot overflow.
        for (uint32_t d : dims)
            if (d > kMaxClusterChips)
                fail(f.line, "shape " + std::to_string(d) + " is larger than the " + std::to_string(kMaxClusterChips) +
                                 " chips a cluster may have");
        m.width = dims[0];
        m.height = dims[1];
    }

    void parse_topology(const Field& f, Mesh& m) const {
        m.topology = word(f, "topology");
        if (!contains(kTopologies, m.topology))
            fail(f.line, "unknown topology '" + m.topology + "' (known topologies: " + join(kTopologies) + ")");
        const std::string shape = std::to_string(m.width) + "x" + std::to_string(m.height);
        const bool one_dimensional = m.width == 1 || m.height == 1;
        if ((m.topology == "line" || m.topology == "ring") && !one_dimensional)
            fail(f.line, "a " + m.topology + " must be one chip wide or one chip high, not " + shape +
                             " (use topology: mesh or torus for a grid)");
        if (m.topology == "ring" && m.chips() < 3)
            fail(f.line, "a ring needs at least 3 chips, not " + std::to_string(m.chips()) +
                             " (for 2 chips use topology: line)");
    }

    uint32_t parse_planes(const Field& f) const {
        const uint32_t have = std::max(1u, spec_.board.planes());
        const uint32_t planes = integer(f.value, f.line, "planes", 0, UINT32_MAX);
        if (planes < 1 || planes > have)
            fail(f.line, "planes " + std::to_string(planes) + " is out of range: board " + spec_.board_name + " has " +
                             std::to_string(have) + " plane(s), so planes must be 1.." + std::to_string(have));
        return planes;
    }

    uint32_t mesh_port(const Mesh& m, abi::FabricCompass direction, uint32_t plane) const {
        const int port = spec_.board.port_for(direction, plane);
        if (port < 0)
            fail(m.line, "mesh " + std::to_string(m.id) + " needs a " + abi::fabric_letter(direction) +
                             " port on plane " + std::to_string(plane) + ", which board " + spec_.board_name +
                             " does not have");
        return static_cast<uint32_t>(port);
    }

    // line and ring were checked to be one-dimensional, so for them the grid
    // cables are exactly the chain; only the wrap cables differ by topology.
    void generate_links(const Mesh& m) {
        const bool ring = m.topology == "ring", torus = m.topology == "torus";
        const bool wrap_x = (ring && m.height == 1) || (torus && m.width >= 3);
        const bool wrap_y = (ring && m.width == 1) || (torus && m.height >= 3);
        auto chip = [&](uint32_t x, uint32_t y) { return m.first_chip + x + y * m.width; };
        for (uint32_t p = 0; p < m.planes; ++p) {
            if (m.width > 1) {
                const uint32_t e = mesh_port(m, abi::kFabricEast, p), w = mesh_port(m, abi::kFabricWest, p);
                for (uint32_t y = 0; y < m.height; ++y)
                    for (uint32_t x = 0; x < m.width; ++x)
                        if (x + 1 < m.width || wrap_x)
                            add_link(cable({chip(x, y), e}, {chip((x + 1) % m.width, y), w}, m.line));
            }
            if (m.height > 1) {
                const uint32_t s = mesh_port(m, abi::kFabricSouth, p), n = mesh_port(m, abi::kFabricNorth, p);
                for (uint32_t y = 0; y < m.height; ++y)
                    for (uint32_t x = 0; x < m.width; ++x)
                        if (y + 1 < m.height || wrap_y)
                            add_link(cable({chip(x, y), s}, {chip(x, (y + 1) % m.height), n}, m.line));
            }
        }
    }

    void parse_links(const Field& f) {
        if (f.value.IsNull()) return;  // "links:" with nothing under it
        if (!f.value.IsSequence())
            fail(f.line, "links must be a sequence of [CHIP.PORT, CHIP.PORT] pairs, not " + describe(f.value));
        for (const YAML::Node& entry : f.value) {
            const int line = line_of(entry, f.line);
            if (entry.IsMap()) {
                parse_link_entry(entry, line);
                continue;
            }
            if (!entry.IsSequence() || entry.size() != 2)
                fail(line, "a link must be a pair [CHIP.PORT, CHIP.PORT] or a map with 'ends', not " + describe(entry));
            add_link(cable(parse_port(entry[0], line), parse_port(entry[1], line), line));
        }
    }

    // {ends: [CHIP.PORT, CHIP.PORT], wire options...}: options for the cable
    // a mesh already made between exactly these ports, or a new cable.
    void parse_link_entry(const YAML::Node& entry, int line) {
        const Fields f = fields(entry, line, "a link entry", kLinkEntryKeys);
        const Field& ends = required(f, "ends", line, "the link entry");
        if (!ends.value.IsSequence() || ends.value.size() != 2)
            fail(ends.line, "ends must be a pair [CHIP.PORT, CHIP.PORT], not " + describe(ends.value));
        LinkSpec l = cable(parse_port(ends.value[0], ends.line), parse_port(ends.value[1], ends.line), line);
        LinkOverrides o;
        if (auto it = f.find("drop_rate"); it != f.end()) o.drop_rate = rate(it->second, "drop_rate");
        if (auto it = f.find("bit_error_rate"); it != f.end()) o.bit_error_rate = rate(it->second, "bit_error_rate");
        if (auto it = f.find("seed"); it != f.end()) o.seed = seed(it->second);
        if (auto it = f.find("mode"); it != f.end()) o.compliance = mode(it->second);
        if (auto it = f.find("flap_period_ms"); it != f.end())
            o.flap_period_ms = milliseconds(it->second, "flap_period_ms");
        if (auto it = f.find("flap_down_ms"); it != f.end()) o.flap_down_ms = milliseconds(it->second, "flap_down_ms");
        if (auto it = f.find("bandwidth_gbps"); it != f.end())
            o.bandwidth_gbps = at_most(it->second, "bandwidth_gbps (GB/s)", kMaxLinkGBps);
        if (auto it = f.find("latency_us"); it != f.end())
            o.latency_us = at_most(it->second, "latency_us", kMaxLinkLatencyUs);
        for (LinkSpec& have : spec_.links) {
            const bool same = (same_port(have.a, l.a) && same_port(have.b, l.b)) ||
                              (same_port(have.a, l.b) && same_port(have.b, l.a));
            if (!same) continue;
            if (have.overrides_line)
                fail(line, "options for the cable between " + describe_port(l.a) + " and " + describe_port(l.b) +
                               " are set twice: here and at line " + std::to_string(have.overrides_line));
            have.overrides = o;
            have.overrides_line = line;
            return;
        }
        l.overrides = o;
        l.overrides_line = line;
        add_link(l);
    }

    static LinkSpec cable(const PortRef& a, const PortRef& b, int line) {
        LinkSpec l;
        l.a = a;
        l.b = b;
        l.line = line;
        return l;
    }

    static bool same_port(const PortRef& x, const PortRef& y) { return x.chip == y.chip && x.port == y.port; }

    double rate(const Field& f, const std::string& what) const {
        double v = 0;
        if (!f.value.IsScalar() || !parse_number(f.value.Scalar(), v) || v < 0 || v > 1)
            fail(f.line, what + " must be a number from 0 to 1 (e.g. 0.01 or 1e-6), not " + describe(f.value));
        return v;
    }

    uint64_t seed(const Field& f) const {
        uint64_t v = 0;
        if (!f.value.IsScalar() || !parse_u64(f.value.Scalar(), v))
            fail(f.line, "seed must be a non-negative integer below 2^64, not " + describe(f.value));
        return v;
    }

    bool mode(const Field& f) const {
        const std::string m = word(f, "mode");
        if (!contains(kLinkModes, m))
            fail(f.line, "unknown link mode '" + m + "' (known modes: " + join(kLinkModes) + ")");
        return m == "compliance";
    }

    PortRef parse_port(const YAML::Node& n, int line) const {
        const std::optional<PortText> t = n.IsScalar() ? split_port(n.Scalar()) : std::nullopt;
        if (!t)
            fail(line, "bad port " + describe(n) +
                           ": expected CHIP.PORT, where PORT is N, E, S or W with an optional plane (E1) or pN "
                           "for raw port N, e.g. 0.E, 3.W1, 2.p3");
        if (t->chip >= spec_.num_chips)
            fail(line, "chip " + std::to_string(t->chip) + " in '" + n.Scalar() + "' does not exist: the cluster has " +
                           std::to_string(spec_.num_chips) + " chips (0.." + std::to_string(spec_.num_chips - 1) + ")");
        const int port =
            t->kind == 'p'
                ? (t->number < spec_.board.ports.size() ? int(t->number) : -1)
                : spec_.board.port_for(static_cast<abi::FabricCompass>(abi::fabric_compass_of(t->kind)), t->number);
        if (port < 0) {
            std::vector<std::string> names;
            for (const PortInfo& p : spec_.board.ports) names.push_back(port_name(spec_.board, p.id));
            fail(line, "port '" + n.Scalar().substr(n.Scalar().find('.') + 1) + "' is not on board " +
                           spec_.board_name + " (its ports: " + join(names) + ")");
        }
        return PortRef{t->chip, static_cast<uint32_t>(port)};
    }

    std::string describe_port(const PortRef& p) const {
        return "port " + port_name(spec_.board, p.port) + " of chip " + std::to_string(p.chip);
    }

    void add_link(const LinkSpec& l) {
        if (l.a.chip == l.b.chip && l.a.port == l.b.port)
            fail(l.line, "link from " + describe_port(l.a) + " to itself");
        for (const PortRef& end : {l.a, l.b}) {
            auto it = cabled_.find({end.chip, end.port});
            if (it != cabled_.end())
                fail(l.line, describe_port(end) + " is linked twice: here and at line " + std::to_string(it->second));
        }
        cabled_[{l.a.chip, l.a.port}] = l.line;
        cabled_[{l.b.chip, l.b.port}] = l.line;
        spec_.links.push_back(l);
    }

    void parse_link_model(const Field& f) {
        if (f.value.IsNull()) return;  // "link:" with nothing under it keeps the defaults
        const Fields model = fields(f.value, f.line, "the link model", kLinkModelKeys);
        LinkModel& lm = spec_.link_model;
        if (auto it = model.find("mtu"); it != model.end())
            lm.mtu = integer(it->second.value, it->second.line, "mtu", 1, kMaxLinkMtu);
        model_line_ = f.line;
        if (auto it = model.find("bandwidth_gbps"); it != model.end())
            lm.options.bandwidth_gbps = at_most(it->second, "bandwidth_gbps (GB/s)", kMaxLinkGBps);
        if (auto it = model.find("latency_us"); it != model.end())
            lm.options.latency_us = at_most(it->second, "latency_us", kMaxLinkLatencyUs);
        if (auto it = model.find("flap_period_ms"); it != model.end())
            lm.options.flap_period_ms = milliseconds(it->second, "flap_period_ms");
        if (auto it = model.find("flap_down_ms"); it != model.end())
            lm.options.flap_down_ms = milliseconds(it->second, "flap_down_ms");
        if (auto it = model.find("drop_rate"); it != model.end()) lm.options.drop_rate = rate(it->second, "drop_rate");
        if (auto it = model.find("bit_error_rate"); it != model.end())
            lm.options.bit_error_rate = rate(it->second, "bit_error_rate");
        if (auto it = model.find("seed"); it != model.end()) lm.options.seed = seed(it->second);
        if (auto it = model.find("mode"); it != model.end()) lm.options.compliance = mode(it->second);
    }

    void parse_fabric(const Field& f) {
        FabricSpec& fs = spec_.fabric;
        fs.line = f.line;
        if (f.value.IsNull()) return;  // "fabric:" alone: the defaults
        const Fields keys = fields(f.value, f.line, "the fabric", kFabricKeys);
        if (auto it = keys.find("topology"); it != keys.end()) {
            fs.topology = word(it->second, "the fabric's topology");
            if (std::find(kFabricTopologies.begin(), kFabricTopologies.end(), fs.topology) == kFabricTopologies.end())
                fail(it->second.line,
                     "unknown fabric topology '" + fs.topology + "' (known: " + join(kFabricTopologies) + ")");
            if (fs.topology == "ring" && spec_.num_chips < 3)
                fail(it->second.line, "a fabric ring needs at least 3 chips, not " + std::to_string(spec_.num_chips));
            // A 2D fabric runs on one grid; a mesh may downshift a torus (its wrap cables unused).
            const bool grid = spec_.meshes.size() == 1 &&
                              (spec_.meshes[0].topology == "mesh" || spec_.meshes[0].topology == "torus");
            if ((fs.topology == "mesh" && !grid) ||
                (fs.topology == "torus" && (!grid || spec_.meshes[0].topology != "torus")))
                fail(it->second.line, "a " + fs.topology + " fabric needs a cluster of one " +
                                          (fs.topology == "mesh" ? "mesh or torus" : "torus"));
        }
        if (auto it = keys.find("planes"); it != keys.end()) {
            const uint32_t have = std::max(1u, spec_.board.planes());
            fs.planes = integer(it->second.value, it->second.line, "the fabric's planes", 1, 64);
            if (fs.planes > have)
                fail(it->second.line, "the fabric's planes " + std::to_string(fs.planes) + " is out of range: board " +
                                          spec_.board_name + " has " + std::to_string(have) +
                                          " plane(s), so planes must be 1.." + std::to_string(have));
        }
        if (auto it = keys.find("slots"); it != keys.end())
            fs.slots = integer(it->second.value, it->second.line, "the fabric's slots", 1, 64);
        if (auto it = keys.find("packet_bytes"); it != keys.end()) {
            fs.packet_bytes =
                integer(it->second.value, it->second.line, "the fabric's packet_bytes", 64, (1u << 20) - 64);
            if (fs.packet_bytes % 64)
                fail(it->second.line,
                     "the fabric's packet_bytes must be a multiple of 64, not " + std::to_string(fs.packet_bytes));
        }
        if (auto it = keys.find("lanes"); it != keys.end())
            fs.lanes = integer(it->second.value, it->second.line, "the fabric's lanes", 1, 4);
        if (auto it = keys.find("router_timeout_ms"); it != keys.end())
            fs.router_timeout_ms = milliseconds(it->second, "the fabric's router_timeout_ms");
        if (auto it = keys.find("fallback"); it != keys.end()) {
            const std::string v = word(it->second, "the fabric's fallback");
            if (v != "true" && v != "false")
                fail(it->second.line, "the fabric's fallback must be true or false, not " + describe(it->second.value));
            fs.fallback = v == "true";
        }
        if (auto it = keys.find("flow_control"); it != keys.end()) {
            const std::string v = word(it->second, "the fabric's flow_control");
            if (v != "dateline" && v != "bubble")
                fail(it->second.line,
                     "the fabric's flow_control must be dateline or bubble, not " + describe(it->second.value));
            fs.bubble = v == "bubble";
            // The one mesh's topology ("mesh" or "torus") where the cluster is a 2D grid.
            const std::string grid = is_2d_grid(spec_.meshes) ? spec_.meshes[0].topology : "";
            if (fs.bubble && (fs.topology == "mesh" || (fs.topology == "auto" && grid == "mesh")))
                fail(it->second.line,
                     "the fabric's flow_control: bubble keeps a free slot in each ring of a ring, a line or a torus; "
                     "this fabric is a 2D mesh, which has no rings (keep flow_control: dateline, or set topology: " +
                         std::string(grid == "torus" ? "torus" : "ring or line") + ")");
        }
        if (fs.fallback && fs.planes > 1)
            fail(keys.at("planes").line, "the fabric's fallback relays run on the other planes' cables: a fabric "
                                         "with fallback: true runs on one plane (planes: 1, or no planes key)");
    }

    void parse_systems(const Field& f) {
        SystemsSpec& sy = spec_.systems;
        sy.line = f.line;
        const Fields keys = fields(f.value, f.line, "the systems", kSystemsKeys);
        const Field& topo = required(keys, "topology", f.line, "the systems");
        sy.topology = word(topo, "the systems' topology");
        if (std::find(kSystemTopologies.begin(), kSystemTopologies.end(), sy.topology) == kSystemTopologies.end())
            fail(topo.line, "unknown systems topology '" + sy.topology + "' (known: " + join(kSystemTopologies) + ")");
        const auto count = static_cast<uint32_t>(spec_.meshes.size());
        const auto w = keys.find("w"), h = keys.find("h");
        if (sy.topology == "ring_1d") {
            if (w != keys.end() || h != keys.end()) fail(f.line, "a ring_1d of systems is one row: it takes no w or h");
            sy.w = count, sy.h = 1;
        } else if (w != keys.end() || h != keys.end()) {
            if (w == keys.end() || h == keys.end()) fail(f.line, "give both w and h, or neither (a square grid)");
            sy.w = integer(w->second.value, w->second.line, "the systems' w", 1, count);
            sy.h = integer(h->second.value, h->second.line, "the systems' h", 1, count);
            if (sy.w * sy.h != count)
                fail(f.line, "a " + std::to_string(sy.w) + "x" + std::to_string(sy.h) + " grid holds " +
                                 std::to_string(sy.w * sy.h) + " systems, but the file has " + std::to_string(count) +
                                 " meshes (one per system)");
        } else {
            uint32_t side = 0;
            while ((side + 1) * (side + 1) <= count) ++side;
            if (side * side != count)
                fail(f.line, std::to_string(count) + " systems are not a square grid: give w and h (e.g. w: " +
                                 std::to_string(count) + ", h: 1)");
            sy.w = sy.h = side;
        }
        check_systems();
    }

    // Systems of one shape, each neighbour pair joined by a cable of its own.
    void check_systems() const {
        const SystemsSpec& sy = spec_.systems;
        const Mesh& first = spec_.meshes.front();
        for (const Mesh& m : spec_.meshes)
            if (m.width != first.width || m.height != first.height)
                fail(sy.line, "every system must have one shape: mesh " + std::to_string(m.id) + " is " +
                                  std::to_string(m.width) + "x" + std::to_string(m.height) + ", mesh " +
                                  std::to_string(first.id) + " " + std::to_string(first.width) + "x" +
                                  std::to_string(first.height));
        for (const auto& [a, b] : system_neighbours(sy))
            if (!cabled(spec_.meshes[a], spec_.meshes[b]))
                fail(sy.line, "systems " + std::to_string(a) + " and " + std::to_string(b) + " are neighbours in a " +
                                  sy.topology + " but no cable joins mesh " + std::to_string(spec_.meshes[a].id) +
                                  " to mesh " + std::to_string(spec_.meshes[b].id));
    }

    bool cabled(const Mesh& a, const Mesh& b) const {
        auto in = [](const Mesh& m, uint32_t chip) { return chip >= m.first_chip && chip < m.first_chip + m.chips(); };
        for (const LinkSpec& l : spec_.links)
            if ((in(a, l.a.chip) && in(b, l.b.chip)) || (in(b, l.a.chip) && in(a, l.b.chip))) return true;
        return false;
    }

    uint32_t milliseconds(const Field& f, const std::string& what) const {
        return integer(f.value, f.line, what + " (ms)", 0, 86400000);
    }

    // A flap is judged on what a cable ends up with (the model's keys and a
    // links: entry's together), at the line that set the cable's last say.
    void check_flaps() const {
        for (size_t i = 0; i < spec_.links.size(); ++i) {
            const LinkOptions o = spec_.link_options(i);
            const int line = spec_.links[i].overrides_line ? spec_.links[i].overrides_line : model_line_;
            const std::string cable = "the cable between " + describe_port(spec_.links[i].a) + " and " +
                                      describe_port(spec_.links[i].b);
            if (!o.flap_period_ms && o.flap_down_ms)
                fail(line, cable + " has flap_down_ms but no flap_period_ms: a flap needs both");
            if (o.flap_period_ms && o.flap_down_ms >= o.flap_period_ms)
                fail(line, cable + " would never be up: flap_down_ms " + std::to_string(o.flap_down_ms) +
                               " is not shorter than flap_period_ms " + std::to_string(o.flap_period_ms));
        }
    }

    const std::string& path_;
    const BoardSource& boards_;
    int model_line_ = 0;
    ClusterSpec spec_;
    std::map<std::pair<uint32_t, uint32_t>, int> cabled_;  // (chip, port) -> line of the link using it
};

}  // namespace

BoardSource boards_in(const std::map<std::string, BoardInfo>& boards) {
    return [&boards](const std::string& name) {
        auto it = boards.find(name);
        if (it != boards.end()) return it->second;
        std::vector<std::string> known;
        for (const auto& [known_name, info] : boards) known.push_back(known_name);
        throw Error("unknown board '" + name + "' (" +
                    (known.empty() ? "no boards are built; run 'make'" : "known boards: " + join(known)) + ")");
    };
}

ClusterSpec parse_cluster(const std::string& yaml_text, const std::string& path, const BoardSource& boards) {
    return Parser(path, boards).parse(yaml_text);
}

ClusterSpec parse_cluster(const std::string& yaml_text, const std::string& path,
                          const std::map<std::string, BoardInfo>& boards) {
    return parse_cluster(yaml_text, path, boards_in(boards));
}

ClusterSpec load_cluster(const std::string& path, const std::map<std::string, BoardInfo>& boards) {
    return load_cluster(path, boards_in(boards));
}

std::string read_cluster_text(const std::string& path) {
    // Opened first, then checked through the descriptor: what is checked is
    // what is read. O_NONBLOCK: a FIFO must not block the open itself.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error("cannot open cluster file '" + path + "': " + strerror(errno));
    struct stat st {};
    std::string why;
    if (fstat(fd, &st) != 0) why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "it is a directory; give a cluster file (.yaml) or a name from clusters/";
    else if (!S_ISREG(st.st_mode))
        why = "it is not a regular file (a device, FIFO or socket)";
    else if (st.st_size > static_cast<off_t>(kMaxClusterFileBytes))
        why = "it has " + std::to_string(st.st_size) + " bytes, more than a cluster file's limit of " +
              std::to_string(kMaxClusterFileBytes);
    std::string text;
    if (why.empty()) {
        text.resize(static_cast<size_t>(st.st_size));
        const ssize_t n = read(fd, text.data(), text.size());
        if (n != st.st_size) why = n < 0 ? strerror(errno) : "it changed while it was read";
    }
    close(fd);
    if (!why.empty()) throw Error("cluster file '" + path + "': " + why);
    return text;
}

ClusterSpec load_cluster(const std::string& path, const BoardSource& boards) {
    return parse_cluster(read_cluster_text(path), path, boards);
}

nlohmann::json FabricSpec::to_json() const {
    return {{"topology", topology}, {"planes", planes},
            {"slots", slots},       {"packet_bytes", packet_bytes},
            {"lanes", lanes},       {"router_timeout_ms", router_timeout_ms},
            {"fallback", fallback}, {"flow_control", bubble ? "bubble" : "dateline"}};
}

FabricSpec FabricSpec::from_json(const nlohmann::json& j) {
    FabricSpec f;
    f.topology = j.value("topology", f.topology);
    f.planes = j.value("planes", f.planes);
    f.slots = j.value("slots", f.slots);
    f.packet_bytes = j.value("packet_bytes", f.packet_bytes);
    f.lanes = j.value("lanes", f.lanes);
    f.router_timeout_ms = j.value("router_timeout_ms", f.router_timeout_ms);
    f.fallback = j.value("fallback", f.fallback);
    f.bubble = j.value("flow_control", std::string("dateline")) == "bubble";
    return f;
}

}  // namespace weft
