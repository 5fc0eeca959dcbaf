// L0 routing of a 2D fabric (the TT-Fabric spec's intra-mesh routing tables):
// for every chip, the source route to every other chip of its mesh, as the
// directions of the cables to take, dimension-ordered (X first, then Y).
// Chips are numbered row-major, x + y * width; S is +y. On a torus a route
// takes the shorter way round each dimension, the positive one (E, S) on a
// tie. And the deadlock check the control plane runs on any table set: the
// channel dependency graph must have no cycle.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/mesh.h"
#include "weft/abi/fabric.h"
#include "weft/abi/fabric_router.h"

namespace weft::transport {

// Chips numbered in the mesh, x + y * width (its first_chip aside).
// The chip one cable from `chip` toward `dir` (N, E, S, W), or -1 off the
// mesh's edge; *wrap (if given) says whether that cable is its dimension's
// wrap cable (a torus's dateline).
int neighbor(const Mesh& mesh, uint32_t chip, abi::FabricCompass dir, bool* wrap = nullptr);

// "EES", "WWNN", ... ("" from a chip to itself): the spec's notation, a
// letter per cable (abi::fabric_compass_of reads one). Throws weft::Error for a chip not in the mesh.
std::string dor_route(const Mesh& mesh, uint32_t from, uint32_t to);
// dor_route(...).size() without building the route: exits are chosen by it
// for every chip and mesh pair.
uint32_t dor_hops(const Mesh& mesh, uint32_t from, uint32_t to);
// The longest dimension-ordered route of `mesh`, in hops.
uint32_t dor_diameter(const Mesh& mesh);
// [src][dst]: every chip's table; all pairs, so for small meshes only (a
// report): everything else asks dor_route for the pair it needs.
std::vector<std::vector<std::string>> l0_tables(const Mesh& mesh);

// A channel of a dependency graph: a chip's output cable in one direction on
// one VC, numbered densely: (chip * 4 + direction) * kChannelVcs + vc. The
// channels a packet holding it may wait for all start at the chip its cable
// leads to, so a channel's dependencies fit one ChannelBits: bit
// (direction * kChannelVcs + vc) of that chip's.
inline constexpr uint32_t kChannelVcs = 4;
inline constexpr uint32_t kChipChannels = 4 * kChannelVcs;
using ChannelBits = uint16_t;
static_assert(abi::kFabricMaxVcs <= kChannelVcs && kChipChannels <= 16, "a chip's channels fit ChannelBits");
constexpr uint32_t channel_id(uint32_t chip, uint32_t dir, uint32_t vc) { return (chip * 4 + dir) * kChannelVcs + vc; }
constexpr uint32_t channel_chip(uint32_t id) { return id / kChipChannels; }
constexpr uint32_t channel_dir(uint32_t id) { return id / kChannelVcs % 4; }
constexpr uint32_t channel_vc(uint32_t id) { return id % kChannelVcs; }
// The bit of the channel toward `dir` on `vc` among its chip's channels.
constexpr ChannelBits channel_bit(uint32_t dir, uint32_t vc) { return ChannelBits(1u << (dir * kChannelVcs + vc)); }
std::string channel_name(uint32_t id);  // "chip 3 E vc0"
// A cycle of the graph `next` (per channel, its dependencies' bits; `across`
// gives the chip a channel's cable leads to): its channels in order, or none.
std::vector<uint32_t> find_cycle(const std::vector<ChannelBits>& next, const std::function<uint32_t(uint32_t)>& across);

struct DependencyVerdict {
    bool acyclic = true;
    std::vector<std::string> cycle;  // the channels of one cycle, "chip 3 E vc0", when there is one
};

// The channel dependency graph of `tables` on `mesh`: a channel is a chip's
// output cable in one direction on one VC; a packet holding one channel may
// wait for the next of its route. With `datelines`, a packet moves to VC 1
// when it crosses a dimension's wrap cable and back to VC 0 when it turns to
// the other dimension (a dateline per dimension). Throws weft::Error for a
// route that leaves the mesh or does not end at its destination.
// Memory stays linear in the chips (two bytes per channel): routes are asked
// for one at a time.
// A route of kNoRoute: the pair exchanges no traffic (a chip taken out).
using RouteOf = std::function<std::string(uint32_t from, uint32_t to)>;
inline constexpr const char* kNoRoute = "-";
// Many meshes: the way out of `from`'s mesh toward mesh `to_mesh`, from
// `from` (a cluster chip id): the L0 route to the exit node, then
// the letter of the exit node's cable into the next mesh ("EES" + "E").
using ExitOf = std::function<std::string(uint32_t from, uint32_t to_mesh)>;
// With `bubble` (bubble flow control on a torus, no datelines) the check is
// find_ring_cycle's.
DependencyVerdict check_dependencies(const Mesh& mesh, const RouteOf& route, bool datelines, bool bubble = false);
DependencyVerdict check_dependencies(const Mesh& mesh, const std::vector<std::vector<std::string>>& tables,
                                     bool datelines, bool bubble = false);

// Bubble flow control keeps a free slot in every ring (a row's or a
// column's cables, both ways round, on one VC), so the waits inside a ring
// cannot deadlock it; only the waits from ring to ring (a packet turning
// into the other dimension) must have no cycle. A cycle of `next` (as
// find_cycle takes it; channels of chips numbered in `mesh`, its first_chip
// added) seen ring by ring, its rings named ("row 1 vc0"), or none.
std::vector<std::string> find_ring_cycle(const Mesh& mesh, const std::vector<ChannelBits>& next,
                                         const std::function<uint32_t(uint32_t)>& across);

// A table entry's route as the spec's compass letters ("EES"), first cable
// first, as far as the entry holds it (kFabricMaxRouteHops); "" for an
// entry of no hops (the chip itself, or no route).
std::string route_letters(const abi::FabricRouteEntry& entry);

}  // namespace weft::transport
