// Rerouting a running 2D fabric round a cable that died under it, where no
// fallback relay stands beside the cable (the control plane's side of the
// routers' kFabricReroute): the control plane computes tables without the
// cable, they are written into every router of the mesh, and the cable's two
// routers are told which of their packets the other took off it (counts
// read at both ends while it is down), so each sends the rest again round
// the new routes and gives every later packet for the cable a new route from
// its chip. Nothing arrives twice; traffic goes on without the cable.
#pragma once
#include <stdint.h>

#include <functional>
#include <vector>

#include "driver/machine.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {

// The routing table of each chip of `fabric` (in its order) as the control
// plane routes now. Throws weft::Error where a route needs a cable the fabric
// does not use (one planned narrower than the cluster: a torus run as a mesh).
std::vector<abi::FabricRouteTable> control_plane_tables(const FabricBuilder& fabric, const ControlPlane& control);

// `wake(chip, core)` rings a router that may sleep (none on a host model).
// Returns the control plane's decision: kNewTables when the routers were
// rerouted; anything else did nothing to the running fabric (a cut mesh,
// refused tables, or a cable the fabric does not use).
RerouteDecision reroute_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                             uint32_t port, const std::function<void(uint32_t chip, uint32_t core)>& wake = {});

}  // namespace weft::transport
