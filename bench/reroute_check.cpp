#include "reroute_check.h"

#include <chrono>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "driver/cluster_topology.h"
#include "fabric_model/grid_cluster.h"
#include "timing.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/fabric_dependencies.h"
#include "transport/fabric/live_reroute.h"

namespace weft::bench {
namespace {

struct CheckTimes {
    uint32_t chips = 0;
    double fabric_s = 0, move_s = 0;
    bool accepted = false;
};

// The cable east of the middle chip of the first mesh fails.
CheckTimes time_checks(const fabric_model::GridCluster& grid) {
    const ClusterSpec spec = fabric_model::grid_cluster_spec(grid);
    const ClusterTopology topology = ClusterTopology::from_spec(spec);
    const transport::FabricBuilder fabric = transport::cluster_fabric(spec.board, topology, spec.fabric);
    CheckTimes t;
    t.chips = spec.num_chips;
    auto t0 = std::chrono::steady_clock::now();
    if (!transport::check_fabric_dependencies(fabric).acyclic) throw Error(spec.name + "'s own tables could deadlock");
    t.fabric_s = seconds_since(t0);
    const uint32_t middle = grid.width * (grid.height / 2) + grid.width / 2;
    const transport::FabricRouterPlan* end = nullptr;
    for (const transport::FabricRouterPlan& p : fabric.routers())
        if (p.chip == middle && p.direction == transport::FabricDirection::kEast) end = &p;
    if (!end) throw Error(spec.name + " has no router east of chip " + std::to_string(middle));
    transport::ControlPlane control(spec.board, topology);
    if (control.cable_down(middle, end->port).kind != transport::RerouteDecision::kNewTables)
        throw Error("the control plane has no new tables without chip " + std::to_string(middle) + "'s east cable");
    const std::vector<abi::FabricRouteTable> next = transport::control_plane_tables(fabric, control);
    const transport::TableMove move{[&](uint32_t c) -> const abi::FabricRouteTable& {
                                        return next[fabric.position(c)];
                                    },
                                    middle, static_cast<uint32_t>(end->direction), end->peer_chip,
                                    transport::moves_every_table(fabric, middle, end->peer_chip)};
    t0 = std::chrono::steady_clock::now();
    t.accepted = transport::check_table_move(fabric, move).acyclic;
    t.move_s = seconds_since(t0);
    return t;
}

}  // namespace

std::string reroute_check_table(void (*progress)(const std::string&)) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nA live reroute's deadlock check (every mix of old and new routes round one dead cable) beside the "
         "builder's check of the fabric's own tables, one core (detours on the escape VC: VC 1 on one mesh, VC 2 between meshes)\n\n"
         "| meshes of 8x8 | chips | fabric's check s | move's check s | move / fabric | move |\n"
         "|---|---|---|---|---|---|\n";
    for (uint32_t meshes : {1u, 16u, 256u}) {
        progress("reroute check on " + std::to_string(meshes) + " meshes of 8x8");
        const CheckTimes c = time_checks(fabric_model::GridCluster{meshes, 8, 8, 2});
        t << "| " << meshes << " | " << c.chips << " | " << c.fabric_s << " | " << c.move_s << " | "
          << c.move_s / c.fabric_s << "x | " << (c.accepted ? "made" : "refused (could deadlock)") << " |\n";
    }
    return t.str();
}

}  // namespace weft::bench
