// A cluster of systems (the hierarchical all-reduce's machine, seed 003): each
// mesh of the cluster file is one system (a SIP, its chips the cubes), and
// the systems are joined as a ring, a 2D torus or a 2D mesh, as the file's
// top-level `systems:` section says. Empty topology: no such section.
#pragma once
#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft {

struct SystemsSpec {
    std::string topology;  // "" (none), ring_1d, torus_2d or mesh_2d_no_wrap
    uint32_t w = 0, h = 0;  // the grid of systems (2D); ring_1d: count x 1
    int line = 0;           // of the file's section, 0: none

    bool empty() const { return topology.empty(); }
    uint32_t count() const { return w * h; }
    nlohmann::json to_json() const;  // as the bridge's info carries it
    static SystemsSpec from_json(const nlohmann::json& j);
};

// The pairs of systems (by index: the cluster file's meshes in order, system
// s at column s % w, row s / w) that are neighbours in its topology, each
// pair once, lower index first.
std::vector<std::pair<uint32_t, uint32_t>> system_neighbours(const SystemsSpec& s);

inline const std::vector<std::string> kSystemTopologies = {"ring_1d", "torus_2d", "mesh_2d_no_wrap"};

}  // namespace weft
