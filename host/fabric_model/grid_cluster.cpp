#include "fabric_model/grid_cluster.h"

#include <unistd.h>

#include <cmath>
#include <fstream>

#include "common/error.h"

namespace weft::fabric_model {
namespace {

// `n` of `edge` positions, spread evenly (the middle one for a single cable).
uint32_t spread(uint32_t i, uint32_t n, uint32_t edge) { return uint32_t((uint64_t(2 * i + 1) * edge) / (2 * n)); }

}  // namespace

std::string grid_cluster_yaml(const GridCluster& g) {
    if (!g.meshes || !g.width || !g.height) throw Error("a grid of meshes needs at least one chip");
    if (!g.cables || g.cables > std::min(g.width, g.height))
        throw Error("between 1 and " + std::to_string(std::min(g.width, g.height)) +
                    " cables join neighbouring meshes of " + std::to_string(g.width) + "x" + std::to_string(g.height));
    const uint32_t columns = uint32_t(std::ceil(std::sqrt(double(g.meshes))));
    const uint32_t per_mesh = g.width * g.height;
    auto chip = [&](uint32_t mesh, uint32_t x, uint32_t y) { return mesh * per_mesh + y * g.width + x; };
    std::string out = "# " + std::to_string(g.meshes) + " meshes of " + std::to_string(g.width) + "x" +
                      std::to_string(g.height) + " in a grid " + std::to_string(columns) +
                      " meshes wide; neighbours joined by " + std::to_string(g.cables) +
                      " cables (weft-fabric-model cluster)\nname: grid" + std::to_string(g.meshes) + "x" +
                      std::to_string(g.width) + "x" + std::to_string(g.height) + "\nboard: " + g.board + "\nmeshes:\n";
    for (uint32_t m = 0; m < g.meshes; ++m)
        out += "  - id: " + std::to_string(m) + "\n    shape: [" + std::to_string(g.width) + ", " +
               std::to_string(g.height) + "]\n    topology: mesh\n";
    out += "links:\n";
    for (uint32_t m = 0; m < g.meshes; ++m) {
        if (m % columns + 1 < columns && m + 1 < g.meshes)
            for (uint32_t i = 0; i < g.cables; ++i) {
                const uint32_t y = spread(i, g.cables, g.height);
                out += "  - [" + std::to_string(chip(m, g.width - 1, y)) + ".E, " + std::to_string(chip(m + 1, 0, y)) +
                       ".W]\n";
            }
        if (m + columns < g.meshes)
            for (uint32_t i = 0; i < g.cables; ++i) {
                const uint32_t x = spread(i, g.cables, g.width);
                out += "  - [" + std::to_string(chip(m, x, g.height - 1)) + ".S, " +
                       std::to_string(chip(m + columns, x, 0)) + ".N]\n";
            }
    }
    return out;
}

std::string write_grid_cluster(const GridCluster& g) {
    const std::string path = "/tmp/weft-grid-" + std::to_string(getpid()) + "-" + std::to_string(g.meshes) + "x" +
                             std::to_string(g.width) + "x" + std::to_string(g.height) + ".yaml";
    std::ofstream(path) << grid_cluster_yaml(g);
    return path;
}

}  // namespace weft::fabric_model
