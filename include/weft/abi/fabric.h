// The fabric's packet header (the TT-Fabric architecture spec: "Fabric Node
// Model", "Packet Header", TTL in "Fault Handling"), one definition for the
// host that builds packets and routers, and for the firmware that sends,
// forwards and executes them. Every packet starts with it; the payload, if
// any, follows in the same slot.
//
// 1D routing: a sender sets `hops`, the cables the packet still has to cross
// to reach its (first) destination chip; each router that receives it counts
// one off. `ttl` is counted off the same way and guards against a packet that
// would circle for ever (a corrupt header, a wrong route): a router that
// receives a packet with ttl 0 drops it and posts a dropped-packet event.
// Between meshes (routers with tables) it counts the routes routers give
// the packet where it enters a mesh instead (fabric::on_receive).
//
// 2D routing (a mesh or torus): the sender looks its route up in its chip's
// L0 table (FabricRouteEntry), sends into the router of the route's first
// direction, and carries the directions of the later hops in `route`, two
// bits each (FabricCompass), the next in the low bits; each router that
// receives the packet and is not its destination takes the next direction
// off and passes the packet to the router of that direction on its chip.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace weft::abi {

// A chip anywhere in the system: its mesh, and its chip id within the mesh.
struct FabricNodeId {
    uint16_t mesh;
    uint16_t chip;
};
static_assert(sizeof(FabricNodeId) == 4, "FabricNodeId layout");

// What the destination's router does with the packet on its chip's NoC.
enum FabricNocCommand : uint8_t {
    kFabricWrite = 1,         // payload to dst_address
    kFabricAtomicInc = 2,     // inc_value added to sem_address; no payload
    kFabricWriteInc = 3,      // payload to dst_address, then inc_value to sem_address
    kFabricInlineWrite = 4,   // inc_value (the 4-byte payload, in the header) to dst_address
    kFabricScatterWrite = 5,  // payload in equal parts to dst_address, scatter[0], scatter[1]
};

enum FabricSendType : uint8_t {
    kFabricUnicast = 1,
    kFabricMulticast = 2,  // delivered by mcast_count chips in a row, from `hops` away on
    // Between the two routers of a cable, over its fallback: consumed by the
    // router, never executed. The packets the sender's receivers took off the
    // dead cable: VC 0's in dst_address's low word, VC 1's in its high word,
    // VC 2's in sem_address's low word.
    kFabricFallbackSync = 3,
    // Between the two routers of a cable that came back (kFabricRejoin), over
    // the fallback, after every packet the sender put there on that VC: the
    // packets the sender sent into the peer's receivers before the cable died
    // (VC 0's in dst_address's low word, VC 1's in its high word, VC 2's in
    // sem_address's low word). The receiver skips those it never took (they
    // went again over the fallback) and reads its cable again from there.
    kFabricRejoinMark = 4,
};

inline constexpr uint32_t kFabricMaxScatter = 3;  // dst_address and the two in scatter[]
inline constexpr uint8_t kFabricDefaultTtl = 64;

struct FabricPacketHeader {
    FabricNodeId src;        // 0
    FabricNodeId dst;        // 4: the (first) destination
    uint8_t noc_command;     // 8: FabricNocCommand
    uint8_t send_type;       // 9: FabricSendType
    uint8_t ttl;             // 10: receptions (between meshes: new routes) left before a router drops it
    uint8_t hops;            // 11: cables still to cross to the (first) destination
    uint8_t mcast_count;     // 12: multicast: chips that deliver, from the first on
    uint8_t dst_core;        // 13: the destination core (its L1), or 0xff: chip DRAM
    uint8_t vc;              // 14: virtual channel; 1 once it crossed a ring's dateline
    // 15: 1: sent round a dead cable on the escape VC by a router told to
    // keep it across the cables into other meshes (FabricRouterStatus::
    // detours_keep_vc); 0: it falls back to VC 1 there, as any packet entering a mesh
    uint8_t keeps_escape;
    uint32_t payload_bytes;  // 16
    uint32_t inc_value;      // 20: the increment, or the inline write's value
    uint64_t dst_address;    // 24
    uint64_t sem_address;    // 32
    uint64_t scatter[2];     // 40: a scatter write's further destinations
    uint32_t seq;            // 56: the sender's packet number, for hang reports
    uint32_t route;          // 60: 2D: the directions after the next cable, 2 bits each
};
static_assert(sizeof(FabricPacketHeader) == 64, "FabricPacketHeader is one 64-byte line");
static_assert(offsetof(FabricPacketHeader, payload_bytes) == 16 && offsetof(FabricPacketHeader, dst_address) == 24 &&
                  offsetof(FabricPacketHeader, scatter) == 40 && offsetof(FabricPacketHeader, seq) == 56,
              "FabricPacketHeader field offsets");

// The four ways out of a chip on a 2D fabric; S is +y, E is +x.
// The one encoding of a direction on a grid, host and firmware alike; letters
// only where people read or write them (board files, routes printed).
enum FabricCompass : uint8_t { kFabricNorth = 0, kFabricEast = 1, kFabricSouth = 2, kFabricWest = 3 };
constexpr FabricCompass fabric_opposite(FabricCompass c) { return static_cast<FabricCompass>(c ^ 2); }
constexpr char fabric_letter(uint32_t c) { return "NESW"[c & 3]; }
// The compass of a letter N, E, S or W; 4 for anything else.
constexpr uint32_t fabric_compass_of(char letter) {
    return letter == 'N'   ? kFabricNorth
           : letter == 'E' ? kFabricEast
           : letter == 'S' ? kFabricSouth
           : letter == 'W' ? kFabricWest
                           : 4;
}
inline constexpr uint32_t kFabricMaxRouteHops = 17;  // the first direction, then 16 in `route`

constexpr bool fabric_same_dimension(uint32_t a, uint32_t b) { return (a & 1) == (b & 1); }

// One line of a chip's L0 routing table: how to reach one chip of its mesh.
struct FabricRouteEntry {
    uint8_t hops;   // cables to cross; 0: the chip itself (or no route)
    uint8_t first;  // FabricCompass of the first cable
    uint16_t pad;
    uint32_t route;  // the directions after the first, as FabricPacketHeader::route
};
static_assert(sizeof(FabricRouteEntry) == 8, "FabricRouteEntry layout");

// A chip's routing tables: L0, entry i routes to chip i of its own mesh; L1
// (the spec's inter-mesh table), entry m routes out of the mesh toward mesh
// m: to the exit node the chip's L1 names and over its cable into the next
// mesh, where that mesh's router writes the packet's next route. `meshes` 0
// or 1: one mesh, no L1. An entry holds a route's first kFabricMaxRouteHops
// cables (a header's); where a route is longer (meshes of 16x16), the chip
// those cables lead to routes the packet on by its own table, as a mesh's
// entry chip does (abi::kFabricLongRoutes).
inline constexpr uint32_t kFabricMaxMeshChips = 256;
inline constexpr uint32_t kFabricMaxMeshes = 1024;  // the TT-Fabric spec's largest cluster
struct FabricRouteTable {
    uint32_t chips;
    uint32_t meshes;
    FabricRouteEntry to[kFabricMaxMeshChips];
    FabricRouteEntry to_mesh[kFabricMaxMeshes];
};
static_assert(sizeof(FabricRouteTable) == 8 + 8 * (kFabricMaxMeshChips + kFabricMaxMeshes), "FabricRouteTable layout");

// The entry of `table` (a chip of mesh `self_mesh`) that routes toward `dst`;
// hops 0: `dst` is the chip itself, or no route.
constexpr FabricRouteEntry fabric_route_entry(const FabricRouteTable& table, uint16_t self_mesh, FabricNodeId dst) {
    if (dst.mesh == self_mesh) return dst.chip < table.chips ? table.to[dst.chip] : FabricRouteEntry{};
    return dst.mesh < table.meshes ? table.to_mesh[dst.mesh] : FabricRouteEntry{};
}

// A unicast write of `bytes` to `address` on the chip `hops` cables away.
constexpr FabricPacketHeader fabric_unicast_write(FabricNodeId src, FabricNodeId dst, uint8_t hops, uint8_t core,
                                                  uint64_t address, uint32_t bytes) {
    FabricPacketHeader h{};
    h.src = src;
    h.dst = dst;
    h.noc_command = kFabricWrite;
    h.send_type = kFabricUnicast;
    h.ttl = kFabricDefaultTtl;
    h.hops = hops;
    h.mcast_count = 1;
    h.dst_core = core;
    h.dst_address = address;
    h.payload_bytes = bytes;
    return h;
}

// The same write delivered by `count` chips in a row, the first `hops` away.
constexpr FabricPacketHeader fabric_multicast_write(FabricNodeId src, FabricNodeId first, uint8_t hops, uint8_t count,
                                                    uint8_t core, uint64_t address, uint32_t bytes) {
    FabricPacketHeader h = fabric_unicast_write(src, first, hops, core, address, bytes);
    h.send_type = kFabricMulticast;
    h.mcast_count = count;
    return h;
}

}  // namespace weft::abi
