// The fabric model's state at one instant as JSON (schema
// "weft-fabric-state/1", documented in docs/fabric-model.md): the cluster's
// chips and cables (failed ones marked, as each chip's control block sees its
// ports), every router's channels (packets held, the head packet's
// destination, what it waits for) and, on request, each chip's routing tables.
#pragma once
#include <stdint.h>

#include <nlohmann/json.hpp>

#include "fabric_model/traffic.h"
#include "model/fabric_model.h"
#include "transport/fabric/routing2d.h"

namespace weft::fabric_model {

inline constexpr const char* kStateSchema = "weft-fabric-state/1";

struct StateOptions {
    // Every chip's L0 and L1 tables: chips x (mesh chips + meshes) routes,
    // so off unless asked for.
    bool tables = false;
};

nlohmann::json state_json(model::FabricModel& model, uint64_t now_ns, const StateOptions& options = {});
nlohmann::json state_json(Simulation& sim, const StateOptions& options = {});

// 2D: the routing tables `chip`'s routers hold now (the control plane
// rewrites them round a failed cable); the builder's for a chip without one.
const abi::FabricRouteTable& live_table(model::FabricModel& model, uint32_t chip);

// A fabric node as the model's JSON writes it: {"mesh": M, "chip": C}.
nlohmann::json node_json(abi::FabricNodeId n);

using transport::route_letters;  // transport/fabric/routing2d.h

}  // namespace weft::fabric_model
