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

#include <stdint.h>

#include <functional>
#include <optional>
#include <vector>

#include "transport/fabric/routing2d.h"
#include "weft/abi/fabric.h"

namespace weft::transport {

class FabricBuilder;

// Acyclic, or one cycle named ("chip 5 E vc0", cluster chip ids). Throws
// weft::Error naming a pair whose walk does not arrive (a loop the TTL stops,
// a route off a cable, a table with no entry).
DependencyVerdict check_fabric_dependencies(const FabricBuilder& fabric);

// A running fabric moving to new tables round a dead cable (live_reroute.h):
// packets already on their way keep the routes they were given, and the
// routers route them again by the new tables where they meet the dead cable
// or (between meshes) enter a mesh; new packets take the new routes. The
// check covers every such mix, so a move it passes cannot deadlock halfway.
//
// Either every chip takes the new tables (`everywhere`), or only the dead
// cable's two routers do, as detour tables (moves_every_table). With an
// escape class the fabric may have been routed round other cables before:
// their routers send what reaches them by the detour tables they were given
// then, and a packet one of those detours carries may meet this cable;
// `earlier` lists those routers, so the check covers packets moved more than
// once.
struct TableMove {
    std::function<const abi::FabricRouteTable&(uint32_t chip)> next;
    uint32_t chip = 0, dir = 0;  // the dead cable, from one end (abi::FabricCompass)
    uint32_t peer_chip = 0;      // its other end (facing dir ^ 2)
    bool everywhere = true;  // set it by moves_every_table, as live_reroute does
    // The tables the chips route by now, before this move: after an earlier
    // move that rewrote every chip's (a cable between meshes) they are no
    // longer the ones the fabric was built with. Empty: the builder's.
    std::function<const abi::FabricRouteTable&(uint32_t chip)> now = {};
    // The detour tables the dead cable's two routers take, where they are
    // not the chips' new tables: a move between meshes keeps the chips' own
    // routes inside their mesh (only their exits change), and the detours
    // route round every dead cable. Empty: `next`.
    std::function<const abi::FabricRouteTable&(uint32_t chip)> detours = {};
    // The detours keep the escape VC into the next meshes
    // (abi::FabricPacketHeader::keeps_escape), not VC 1 there.
    bool keep_escape = false;
};
// Whether a move round the cable between `chip` and `peer_chip` rewrites
// every chip's tables: without an escape class (a torus under bubble flow
// control), and for a cable
// between meshes, whose loss changes the exits every mesh routes by (its
// meshes' L0 routes stay). Else only its two routers take detour tables.
bool moves_every_table(const FabricBuilder& fabric, uint32_t chip, uint32_t peer_chip);
struct EarlierDetour {
    uint32_t chip = 0, dir = 0;  // the router's cable, from its end
    abi::FabricRouteTable table{};
    bool keeps = false;  // its detours keep the escape VC into the next meshes
    // The detour table this move gives it in place of `table` (a move
    // between meshes gives it the new exits); the packets it sent round
    // before are still on their way by `table`.
    std::optional<abi::FabricRouteTable> rewritten;
};
DependencyVerdict check_table_move(const FabricBuilder& fabric, const TableMove& move,
                                   const std::vector<EarlierDetour>& earlier = {});
// The graph that check walks (routing2d.h's find_cycle form: per channel id,
// a bit per channel of the chip its cable leads to that it may wait for).
std::vector<ChannelBits> table_move_dependencies(const FabricBuilder& fabric, const TableMove& move);

}  // namespace weft::transport
