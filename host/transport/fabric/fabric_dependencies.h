// The deadlock check of a built 2D fabric of any number of meshes: every
// packet from every chip to every other is walked through the tables the
// routers hold, by the routers' own route decisions (firmware/fabric/route.h:
// the L0 route, the exit toward another mesh, the new route written where it
// enters a mesh, the VC it moves to), and each channel it holds (a chip's
// cable out in one direction, on one VC) is joined to the next it may wait
// for. The fabric can deadlock only if that graph has a cycle, so intra- and
// inter-mesh dependencies are checked together: exit nodes that several
// meshes' traffic shares included.
#pragma once

#include "transport/fabric/routing2d.h"

namespace weft::transport {

class FabricBuilder;

// Acyclic, or one cycle named ("chip 5 E vc0", cluster chip ids). Throws
// weft::Error naming a pair whose walk does not arrive (a loop the TTL stops,
// a route off a cable, a table with no entry).
DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric);

}  // namespace weft::transport
