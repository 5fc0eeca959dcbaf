#include "fabric_model/cluster_dot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/graphviz.h"
#include "driver/cluster_file.h"
#include "fabric_model/state_json.h"
#include "fabric_model/stuck_channels.h"

namespace weft::fabric_model {
namespace {

using transport::FabricDirection;

constexpr double kChipSpacing = 72;  // points between neighbouring chips: an inch
constexpr double kChipRadius = 18;   // the circles are half an inch across

struct Point {
    double x, y;
};

// Where each mesh sits in a grid of meshes: next to the mesh its exit
// cables lead from, on the side they leave by (a cable out of a chip's E
// port puts the other mesh east). Meshes no cable reaches go in a row below.
std::map<uint32_t, std::pair<int, int>> place_meshes(const ClusterTopology& t, const BoardInfo& board) {
    std::map<uint32_t, std::pair<int, int>> at;
    std::set<std::pair<int, int>> taken;
    auto put = [&](uint32_t mesh, int gx, int gy) {
        while (taken.count({gx, gy})) ++gx;  // a spot two meshes claim: the next free one east
        at[mesh] = {gx, gy};
        taken.insert({gx, gy});
    };
    static const int kStep[4][2] = {{0, -1}, {1, 0}, {0, 1}, {-1, 0}};  // N, E, S, W; S is +y
    int lowest = 0;
    for (const Mesh& first : t.meshes()) {
        if (at.count(first.id)) continue;
        put(first.id, 0, lowest);
        std::vector<uint32_t> todo{first.id};
        while (!todo.empty()) {
            const uint32_t m = todo.back();
            todo.pop_back();
            for (const ExitNode& e : t.exit_nodes(m)) {
                if (at.count(e.peer_mesh)) continue;
                const auto port = std::find_if(board.ports.begin(), board.ports.end(),
                                               [&](const PortInfo& p) { return p.id == e.port; });
                const int d = port == board.ports.end() ? 1 : int(port->direction);
                put(e.peer_mesh, at[m].first + kStep[d][0], at[m].second + kStep[d][1]);
                todo.push_back(e.peer_mesh);
            }
        }
        for (const auto& [_, g] : at) lowest = std::max(lowest, g.second + 1);
    }
    return at;
}

// Chips in points, y up as Graphviz has it: row 0 of a mesh on top.
std::vector<Point> chip_positions(const ClusterTopology& t, const BoardInfo& board) {
    uint32_t widest = 1, tallest = 1;
    for (const Mesh& m : t.meshes()) widest = std::max(widest, m.width), tallest = std::max(tallest, m.height);
    const auto grid = place_meshes(t, board);
    int left = 0, top = 0;
    for (const auto& [_, g] : grid) left = std::min(left, g.first), top = std::min(top, g.second);
    std::vector<Point> pos(t.chips());
    for (uint32_t c = 0; c < t.chips(); ++c) {
        const ChipCoord at = t.coord(c);
        const auto [gx, gy] = grid.at(at.mesh);
        pos[c] = {((gx - left) * (widest + 1) + at.x) * kChipSpacing,
                  -((gy - top) * (tallest + 1.0) + at.y) * kChipSpacing};
    }
    return pos;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c == '\n' ? ' ' : c;
    }
    return out + "\"";
}

std::string point(double v) {
    std::ostringstream o;
    o << std::round(v * 10) / 10;
    return o.str();
}

std::string chip_node(uint32_t chip) { return "c" + std::to_string(chip); }

// neato -n draws a cluster only where it is told its box.
void mesh_boxes(std::ostream& o, const ClusterTopology& t, const std::vector<Point>& pos) {
    for (const Mesh& m : t.meshes()) {
        double x0 = 1e300, y0 = 1e300, x1 = -1e300, y1 = -1e300;
        for (uint32_t c = m.first_chip; c < m.first_chip + m.chips(); ++c)
            x0 = std::min(x0, pos[c].x), y0 = std::min(y0, pos[c].y), x1 = std::max(x1, pos[c].x),
            y1 = std::max(y1, pos[c].y);
        const double margin = kChipRadius + 8;
        o << "  subgraph cluster_mesh" << m.id << " {\n"
          << "    label="
          << quoted("mesh " + std::to_string(m.id) + " (" + std::to_string(m.width) + "x" + std::to_string(m.height) +
                    " " + m.topology + ")")
          << "; labeljust=l; style=rounded; color=\"#8c8c8c\";\n"
          << "    bb=\"" << point(x0 - margin) << "," << point(y0 - margin) << "," << point(x1 + margin) << ","
          << point(y1 + margin + 16) << "\";\n";
        for (uint32_t c = m.first_chip; c < m.first_chip + m.chips(); ++c) o << "    " << chip_node(c) << ";\n";
        o << "  }\n";
    }
}

// One edge per pair of chips, whatever crosses between them: Graphviz
// 2.43's spline router crashes on parallel edges among curved ones (a torus'
// wrap cables), and one line a pair reads better anyway.
struct Pair {
    uint32_t cables = 0, failed = 0;
    bool exit = false;
    std::vector<std::string> names;  // "5.E - 12.W"
    uint32_t routes[2] = {};         // routes crossing low -> high chip, high -> low
    std::vector<const ChannelWait*> waits[2];
};
using Pairs = std::map<std::pair<uint32_t, uint32_t>, Pair>;

// Cable ends' states as the chips' control blocks see them (a failed cable is down at both).
void add_cables(Pairs& pairs, model::FabricModel& model, const ClusterTopology& t) {
    const BoardInfo& board = model.cluster().board();
    for (const LinkInfo& l : t.links()) {
        Pair& p = pairs[std::minmax(l.chip_a, l.chip_b)];
        ++p.cables;
        p.failed += !(model.cluster().memory(l.chip_a).control().port[l.port_a].state == abi::kLinkUp &&
                      model.cluster().memory(l.chip_b).control().port[l.port_b].state == abi::kLinkUp);
        p.exit = t.coord(l.chip_a).mesh != t.coord(l.chip_b).mesh;
        p.names.push_back(std::to_string(l.chip_a) + "." + port_name(board, l.port_a) + " - " +
                          std::to_string(l.chip_b) + "." + port_name(board, l.port_b));
    }
}

// The cables the chip's routes to every other chip cross, counted each way.
void add_routes(Pairs& pairs, model::FabricModel& model, uint32_t from) {
    for (uint32_t to = 0; to < model.chips(); ++to)
        if (to != from)
            for (const auto& [a, b] : route_hops(model, from, to)) ++pairs[std::minmax(a, b)].routes[a > b];
}

void add_waits(Pairs& pairs, const std::vector<ChannelWait>& waits) {
    for (const ChannelWait& w : waits)
        pairs[std::minmax(w.from.chip, w.to_chip)].waits[w.from.chip > w.to_chip].push_back(&w);
}

const char* arrows(bool forward, bool backward) {
    return forward && backward ? "both" : forward ? "forward" : backward ? "back" : "none";
}

std::string wait_text(const ChannelWait& w) {
    return "chip " + std::to_string(w.from.chip) + " port " + std::to_string(w.from.port) + " vc" +
           std::to_string(w.from.channel) + " waits for chip " + std::to_string(w.to_chip) + " port " +
           std::to_string(w.to_port) + " vc" + std::to_string(w.to_vc);
}

// A cable grey (bold between meshes, red and dashed when failed); one the
// chip's routes cross blue, thicker for more routes, with their count; one
// the cycle of waits crosses red and thick, with the VC waited for.
void edge(std::ostream& o, uint32_t low, uint32_t high, const Pair& p) {
    std::string tooltip;
    for (const std::string& n : p.names) tooltip += (tooltip.empty() ? "" : ", ") + n;
    if (p.failed) tooltip += " (" + std::to_string(p.failed) + " failed)";
    std::vector<std::string> style{p.exit ? "bold" : "solid"};
    if (p.failed) style.push_back("dashed");
    std::string colour = p.failed ? "red" : "#505050", label;
    double width = p.exit ? 3 : 1;
    const bool waits = !p.waits[0].empty() || !p.waits[1].empty();
    const uint32_t routed = std::max(p.routes[0], p.routes[1]);
    if (waits) {
        colour = "red", width = 3;
        for (const auto& side : p.waits)
            for (const ChannelWait* w : side) {
                label += (label.empty() ? "" : " ") + ("vc" + std::to_string(w->to_vc));
                tooltip += "; " + wait_text(*w);
            }
    } else if (routed) {
        colour = "#1f77b4", width = std::max(width, 1.5 + std::log2(double(routed)));
        label = p.routes[0] && p.routes[1] ? std::to_string(p.routes[0]) + "/" + std::to_string(p.routes[1])
                                           : std::to_string(routed);
        tooltip += "; routes " + std::to_string(low) + "->" + std::to_string(high) + ": " +
                   std::to_string(p.routes[0]) + ", " + std::to_string(high) + "->" + std::to_string(low) + ": " +
                   std::to_string(p.routes[1]);
    }
    std::string styles;
    for (const std::string& s : style) styles += (styles.empty() ? "" : ",") + s;
    o << "  " << chip_node(low) << " -- " << chip_node(high) << " [style=\"" << styles << "\" color=\"" << colour
      << "\" penwidth=" << point(width);
    if (waits) o << " dir=" << arrows(!p.waits[0].empty(), !p.waits[1].empty());
    else if (routed)
        o << " dir=" << arrows(p.routes[0], p.routes[1]);
    if (!label.empty()) o << " label=\"" << label << "\" fontcolor=\"" << colour << "\" fontsize=9";
    if (p.cables > 1) o << " taillabel=\"x" << p.cables << "\"";
    o << " tooltip=" << quoted(tooltip) << "];\n";
}

void chips(std::ostream& o, const ClusterTopology& t, const std::vector<Point>& pos, const PictureOptions& options,
           const std::vector<ChannelWait>& waits) {
    std::set<uint32_t> exits, waiting;
    for (const Mesh& m : t.meshes())
        for (const ExitNode& e : t.exit_nodes(m.id)) exits.insert(e.chip);
    for (const ChannelWait& w : waits) waiting.insert(w.from.chip);
    for (uint32_t c = 0; c < t.chips(); ++c) {
        const ChipCoord at = t.coord(c);
        const char* fill = options.routes_of == c ? "#ffd866"
                           : waiting.count(c)     ? "#f6c6c6"
                           : exits.count(c)       ? "#cfe3f7"
                                                  : "#ffffff";
        o << "  " << chip_node(c) << " [label=\"" << c << "\" pos=\"" << point(pos[c].x) << "," << point(pos[c].y)
          << "\" fillcolor=\"" << fill << "\" tooltip=\"chip " << c << ": mesh " << at.mesh << " (" << at.x << ", "
          << at.y << ")" << (exits.count(c) ? ", exit node" : "") << "\"];\n";
    }
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> route_hops(model::FabricModel& model, uint32_t from, uint32_t to) {
    const transport::FabricBuilder& f = model.fabric();
    std::vector<std::pair<uint32_t, uint32_t>> hops;
    if (from == to) return hops;
    if (f.dims() != 2) {
        const transport::FabricRoute r = f.route(from, to);
        const uint32_t n = uint32_t(f.order().size());
        const uint32_t step = r.direction == FabricDirection::kForward ? 1 : n - 1;
        for (uint32_t k = 0, at = f.position(from); k < r.hops; ++k, at = (at + step) % n)
            hops.push_back({f.order()[at], f.order()[(at + step) % n]});
        return hops;
    }
    // Each table routes to the end of its mesh's part; a bad table cannot loop here for ever.
    uint32_t at = from;
    while (at != to && hops.size() < 4 * size_t(model.chips())) {
        const abi::FabricRouteEntry e = abi::fabric_route_entry(live_table(model, at), f.node(at).mesh, f.node(to));
        if (e.hops == 0) return {};
        for (char letter : route_letters(e)) {
            const int r = f.router_index(at, transport::compass_direction(abi::fabric_compass_of(letter)));
            if (r < 0) return {};
            const uint32_t next = f.routers()[size_t(r)].peer_chip;
            hops.push_back({at, next});
            at = next;
        }
    }
    return at == to ? hops : std::vector<std::pair<uint32_t, uint32_t>>{};
}

namespace {

std::string dot_of(model::FabricModel& model, const PictureOptions& options, const std::vector<ChannelWait>& waits) {
    const ClusterTopology t = model.cluster().topology();
    if (options.routes_of && *options.routes_of >= t.chips())
        throw Error("chip " + std::to_string(*options.routes_of) + " is not in the cluster (" +
                    std::to_string(t.chips()) + " chips)");
    const std::vector<Point> pos = chip_positions(t, model.cluster().board());
    std::ostringstream o;
    const std::string title = options.title.empty() ? model.cluster().spec().name : options.title;
    o << "// " << title << ": draw with neato -n (the positions are the chips' own)\n"
      << "graph fabric {\n"
      << "  graph [label=" << quoted(title) << " labelloc=t fontname=\"sans\" splines=true outputorder=edgesfirst];\n"
      << "  node [shape=circle fixedsize=true width=" << point(2 * kChipRadius / 72)
      << " style=filled fontname=\"sans\" fontsize=10];\n"
      << "  edge [fontname=\"sans\"];\n";
    mesh_boxes(o, t, pos);
    chips(o, t, pos, options, waits);
    Pairs pairs;
    add_cables(pairs, model, t);
    if (options.routes_of) add_routes(pairs, model, *options.routes_of);
    add_waits(pairs, waits);
    for (const auto& [chips, p] : pairs) edge(o, chips.first, chips.second, p);
    o << "}\n";
    return o.str();
}

}  // namespace

std::string cluster_dot(Simulation& sim, const PictureOptions& options) {
    const std::vector<ChannelWait> waits = options.cycle ? wait_cycle_of(channel_waits(sim.model(), sim.engine()))
                                                         : std::vector<ChannelWait>{};
    return dot_of(sim.model(), options, waits);
}

void draw_picture(const std::string& dot, const std::string& picture) {
    const size_t slash = picture.rfind('/'), ext = picture.rfind('.');
    const bool named = ext != std::string::npos && (slash == std::string::npos || ext > slash);
    const std::string dot_path = (named ? picture.substr(0, ext) : picture) + ".dot";
    {
        std::ofstream out(dot_path);
        out << dot;
        if (!out.flush()) throw Error("cannot write '" + dot_path + "'");
    }
    render_graphviz(dot_path, picture, "neato", {"-n"});
}

}  // namespace weft::fabric_model
