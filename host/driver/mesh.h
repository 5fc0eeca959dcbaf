// A mesh: chips on a grid with one topology, the unit the fabric routes in
// (its L0 tables) and the cluster file describes. The one mesh type: the
// cluster file makes them, the topology keeps them, the 2D routing reads them.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

namespace weft {

struct Mesh {
    uint32_t id = 0;
    uint32_t width = 1, height = 1;
    std::string topology = "mesh";  // line | ring | mesh | torus; custom: cables only
    uint32_t planes = 1;
    uint32_t first_chip = 0;  // its chips are first_chip + x + y * width
    int line = 0;             // of the cluster file's entry that made it; 0: none

    uint32_t chips() const { return width * height; }
    // Its dimensions wrap: a torus, or a ring (a torus one chip high). The
    // wrap cables are the datelines.
    bool wraps() const { return topology == "torus" || topology == "ring"; }
    // A bare grid, for routing on its own: chip i at (i % width, i / width).
    static Mesh grid(uint32_t width, uint32_t height, bool torus) {
        Mesh m;
        m.width = width;
        m.height = height;
        m.topology = torus ? "torus" : "mesh";
        return m;
    }
};

// One mesh or torus of at least 2x2 chips: what a 2D fabric and the 2D
// algorithms run on.
inline bool is_2d_grid(const std::vector<Mesh>& meshes) {
    return meshes.size() == 1 && (meshes[0].topology == "mesh" || meshes[0].topology == "torus") &&
           meshes[0].width >= 2 && meshes[0].height >= 2;
}

}  // namespace weft
