// Pictures of a fabric model as Graphviz DOT text: the cluster's meshes
// (boxes), chips at their (x, y), cables (those between meshes bold, failed
// ones red and dashed), exit nodes filled; on request one chip's routes, and
// the cycle of waits of a fabric that deadlocked, drawn in red. Laid out by
// neato -n: the positions are the mesh's own, not a layout's guess.
#pragma once
#include <stdint.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fabric_model/traffic.h"
#include "model/fabric_model.h"

namespace weft::fabric_model {

struct PictureOptions {
    std::string title;                  // above the picture; "": the cluster's name
    std::optional<uint32_t> routes_of;  // this chip's routes to every other chip, in blue
    bool cycle = true;                  // the routers' cycle of waits, if their waits close one
};

// On MPI ranks the cycle of waits is found among every rank's routers (all ranks call it).
std::string cluster_dot(Simulation& sim, const PictureOptions& options = {});

// The cables a packet from `from` to `to` crosses, as (chip, next chip), by
// the tables the routers hold now (after a reroute, the new ones): L0 inside
// a mesh, L1 out of it, then the next mesh's tables. Empty for no route.
std::vector<std::pair<uint32_t, uint32_t>> route_hops(model::FabricModel& model, uint32_t from, uint32_t to);

// Writes `dot` beside `picture` (its name with .dot) and has Graphviz draw
// `picture` (.svg, .png or .pdf) from it. Throws weft::Error naming the
// file, or Graphviz's package when it is missing.
void draw_picture(const std::string& dot, const std::string& picture);

}  // namespace weft::fabric_model
