#include "fabric_model/grid_cluster.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"
#include "fabric_model/scale_tables.h"

namespace weft::fabric_model {

namespace {

// grid_of_meshes lays the meshes out ceil(sqrt(meshes)) to a row.
SystemsSpec systems_of(uint32_t meshes) {
    uint32_t w = 1;
    while (w * w < meshes) ++w;
    if (meshes % w)
        throw Error(std::to_string(meshes) + " meshes leave the last row of a grid " + std::to_string(w) +
                    " wide short: systems need a full grid (a square number, or a multiple of its side)");
    return {"mesh_2d_no_wrap", w, meshes / w, 0};
}

std::string systems_section(uint32_t meshes) {
    const SystemsSpec s = systems_of(meshes);
    return "systems:\n  topology: " + s.topology + "\n  w: " + std::to_string(s.w) + "\n  h: " + std::to_string(s.h) +
           "\n";
}

}  // namespace

void check_grid(const GridCluster& g) {
    if (!g.meshes || !g.width || !g.height) throw Error("a grid of meshes needs at least one chip");
    const uint32_t most = std::min(g.width, g.height);
    if (!g.cables || g.cables > most)
        throw Error("--cables " + std::to_string(g.cables) + ": between 1 and " + std::to_string(most) +
                    " cables join neighbouring meshes of " + std::to_string(g.width) + "x" + std::to_string(g.height) +
                    " (one a chip of the side they share)");
}

// The cables between meshes are grid_of_meshes' (the tables at scale are
// checked on the same layout); the file names only those: a mesh's own
// cables follow from its `topology: mesh`.
namespace {

std::string shape_of(const GridCluster& g) { return std::to_string(g.width) + "x" + std::to_string(g.height); }
std::string name_of(const GridCluster& g) { return "grid" + std::to_string(g.meshes) + "x" + shape_of(g); }

}  // namespace

std::string grid_cluster_yaml(const GridCluster& g) {
    check_grid(g);
    const BoardInfo board = paths::load_built_board(g.board);
    const ClusterTopology t = grid_of_meshes(g.meshes, g.width, g.height, board, g.cables);
    const std::string shape = shape_of(g);
    std::string out = "# " + std::to_string(g.meshes) + " meshes of " + shape + " in a grid of meshes; neighbours " +
                      "joined by " + std::to_string(g.cables) +
                      " cables (weft-fabric-model cluster)\nname: " + name_of(g) + "\nboard: " + g.board +
                      "\nmeshes:\n";
    for (uint32_t m = 0; m < g.meshes; ++m)
        out += "  - id: " + std::to_string(m) + "\n    shape: [" + std::to_string(g.width) + ", " +
               std::to_string(g.height) + "]\n    topology: mesh\n";
    out += "links:\n";
    for (const LinkInfo& l : t.links())
        if (t.mesh_of(l.chip_a).id != t.mesh_of(l.chip_b).id)
            out += "  - [" + std::to_string(l.chip_a) + "." + port_name(board, l.port_a) + ", " +
                   std::to_string(l.chip_b) + "." + port_name(board, l.port_b) + "]\n";
    if (g.systems) out += systems_section(g.meshes);
    return out;
}

// As the file's parser makes it (its defaults for the links and the fabric),
// every cable listed: the parser adds a mesh's own from its topology.
ClusterSpec grid_cluster_spec(const GridCluster& g) {
    check_grid(g);
    ClusterSpec spec;
    spec.name = name_of(g);
    spec.board_name = g.board;
    spec.board = paths::load_built_board(g.board);
    const ClusterTopology t = grid_of_meshes(g.meshes, g.width, g.height, spec.board, g.cables);
    spec.num_chips = t.chips();
    spec.meshes = t.meshes();
    spec.links.reserve(t.links().size());
    for (const LinkInfo& l : t.links()) {
        LinkSpec& link = spec.links.emplace_back();
        link.a = {l.chip_a, l.port_a};
        link.b = {l.chip_b, l.port_b};
    }
    if (g.systems) spec.systems = systems_of(g.meshes);
    return spec;
}

std::string write_grid_cluster(const GridCluster& g) {
    const std::string path = "/tmp/weft-grid-" + std::to_string(getpid()) + "-" + std::to_string(g.meshes) + "x" +
                             std::to_string(g.width) + "x" + std::to_string(g.height) + ".yaml";
    std::ofstream(path) << grid_cluster_yaml(g);
    return path;
}

}  // namespace weft::fabric_model
