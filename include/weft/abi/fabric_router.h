// A fabric router's layout, 1D and 2D (the TT-Fabric architecture spec, "1D Fabric
// Router"): what the host fabric builder writes into the router's kept L1
// (host/transport/fabric) and the router firmware (firmware/fabric/router.h)
// and the worker API (firmware/fabric/sender.h) read. Every address was placed
// by the builder; nothing is chosen by hand.
//
// One router per Ethernet port a fabric uses. Its channels:
//   sender channels, each a ring of slots some writer fills over the NoC:
//     the local workers' lanes (the spec's sender channel 0, split so that
//     each worker owns its slots: no cross-core lock, no worker waits for a
//     slower one), then one pass-through channel per VC (the spec's channel
//     1), which the router of the opposite port on the same chip fills; on a
//     2D fabric one per VC from each of the chip's other routers (the spec's
//     2D VC: local workers plus pass-through from the three other directions);
//   one receiver channel per VC, which the router at the far end of the cable
//     fills over the link.
// Every slot holds one packet: its FabricPacketHeader, then the payload.
// A ring of slots has two counters: `written` (in the reader's L1, the writer
// increments it after the packet) and `freed` (in the writer's L1, the reader
// increments it once it is done with a slot): the writer never has more than
// `slots` packets outstanding, so a full channel back-pressures its writer.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "weft/abi/fabric.h"
#include "weft/abi/kernel_args.h"

namespace weft::abi {

inline constexpr uint32_t kFabricRouterMagic = 0x4641'4231;  // "FAB1"
// VC 1: past a ring's dateline, or between meshes the class of packets from
// another mesh; VC 2: the escape class between meshes (kFabricEscapeVc) or
// on a ring or torus (kFabricRingEscape).
inline constexpr uint32_t kFabricMaxVcs = 3;
inline constexpr uint32_t kFabricMaxLanes = 4;               // workers sharing sender channel 0
inline constexpr uint32_t kFabricMaxDirections = 4;          // 2D: N, E, S, W (abi::FabricCompass)
// 2D: pass-through from the 3 other routers, and on several meshes from itself.
inline constexpr uint32_t kFabricMaxSenders = kFabricMaxLanes + 4 * kFabricMaxVcs;
inline constexpr uint32_t kFabricMaxSlots = 64;
inline constexpr uint32_t kFabricHeaderBytes = sizeof(FabricPacketHeader);

enum FabricRouterFlags : uint32_t {
    kFabricDropStuck = 1,   // a head packet stuck past the timeout is dropped (drained), not only reported
    kFabricNoDateline = 2,  // debug: never move to VC 1 (rings can deadlock; the CMocka model shows it)
    // Many meshes: VC 1 is the class of packets that entered their mesh from
    // another (the spec's hierarchical VCs); they keep it through turns, and
    // a packet that reaches the end of its route short of its destination
    // gets its next route from this chip's tables (L0 or L1).
    kFabricMeshClasses = 4,
    // A fallback relay (on another plane's port of the same chip, the same
    // way): it sends what its chip's router puts in its senders over its own
    // cable, and passes all it receives to forward[0][vc], that router's
    // fallback_in: a second cable for it while its own is down.
    kFabricRelay = 8,
    // Bubble flow control (a ring, a line or a torus) instead of the dateline
    // VC: every packet stays on VC 0, and a packet enters a ring (from a
    // worker's lane or, on a torus, turning in from the other dimension) only
    // while the peer's receiver has two free slots, so a cycle of the ring's
    // buffers always keeps one free and some packet can always move.
    kFabricBubble = 16,
    // Meshes without wraps, or one torus: the escape class of the packets a
    // dead cable's router sends round it by the new tables (VC 1 on one mesh;
    // VC 2 between meshes, above both classes, and on a torus, above its
    // datelines' two: fabric_escape_vc). They keep it to the end of their
    // mesh, through turns and datelines, so the detours never wait on the old
    // routes still in use on the other VCs (the mixes that close a cycle of
    // turns: live_reroute.h). Between meshes the control plane chooses, per
    // move, whether they keep it into the next meshes too
    // (FabricPacketHeader::keeps_escape) or fall back to VC 1 there.
    kFabricEscapeVc = 32,
    // Some route is longer than a header holds (kFabricMaxRouteHops): its
    // table entry holds the first cables, and a packet whose route ends
    // short of its destination is routed on by the tables of the chip it
    // reached (route.h's route_on), as between meshes; the TTL then counts
    // the routes a packet is given, not its receptions.
    kFabricLongRoutes = 64,
    // A ring (1D) or a torus (2D, with kFabricEscapeVc) with an escape class
    // above its datelines' VCs: VC 2, kept across datelines too. On a ring it
    // carries the packets a dead cable's router sends back the other way
    // round (ring_chips - hops cables): with one cable dead each direction of
    // the ring is a line, and a packet turned back never turns again, so VC 2
    // waits on nothing but VC 2 ahead. On a torus it carries the detours.
    kFabricRingEscape = 128,
};

// The escape class's VC (kFabricEscapeVc): above the two classes between
// meshes or a torus's two datelines' VCs, else above VC 0.
constexpr uint32_t fabric_escape_vc(uint32_t flags) {
    return (flags & (kFabricMeshClasses | kFabricRingEscape)) ? 2 : 1;
}

// Whether a packet on `vc` leaving on a router's dateline cable moves to VC 1
// (a ring's escape class keeps VC 2, and so does a detour between meshes
// that `keeps_escape`).
constexpr bool fabric_crosses_dateline(bool dateline, uint32_t flags, uint32_t vc = 0, bool keeps_escape = false) {
    return dateline && !(flags & (kFabricNoDateline | kFabricBubble)) &&
           !((flags & kFabricRingEscape || keeps_escape) && vc == 2);
}

// A router's pass-through channels come in groups of one per VC: 1D one
// group (from the opposite router); 2D one from each of the chip's other
// routers, in compass order, and on a fabric of several meshes one from
// itself, in its own compass place (a packet that enters a mesh where the
// tables now send it back out: new routes between meshes while it travelled).
constexpr uint32_t fabric_pass_groups(uint32_t dims, uint32_t flags) {
    return dims != 2 ? 1 : (flags & kFabricMeshClasses) ? 4 : 3;
}
// Which group the channel from the router facing `from` is, in the router facing `to`.
constexpr uint32_t fabric_pass_group(uint32_t to, uint32_t from, uint32_t flags) {
    return (flags & kFabricMeshClasses) || from < to ? from : from - 1;
}
// The other way round: the router (its compass) whose channel group `group`
// is, in the router facing `to` (2D).
constexpr uint32_t fabric_pass_source(uint32_t to, uint32_t group, uint32_t flags) {
    return (flags & kFabricMeshClasses) || group < to ? group : group + 1;
}
static_assert(fabric_pass_source(2, fabric_pass_group(2, 3, 0), 0) == 3 &&
                  fabric_pass_source(2, fabric_pass_group(2, 1, 0), 0) == 1,
              "fabric_pass_source inverts fabric_pass_group");

// Words the router at the far end of the cable writes into this one's L1.
struct FabricLinkWords {
    volatile uint32_t filled[kFabricMaxVcs];  // receiver VC v: packets the peer has sent into it
    volatile uint32_t acked[kFabricMaxVcs];   // the peer's receiver VC v: packets it has released
};
static_assert(sizeof(FabricLinkWords) == 8 * kFabricMaxVcs, "FabricLinkWords layout");

// A ring of slots, seen from its reader (a sender channel of this router) or
// from its writer (where a receiver channel forwards to).
struct FabricRing {
    uint64_t buffer;   // slot i at buffer + slot_size * i
    uint64_t written;  // the reader's counter of packets written
    uint64_t freed;    // the writer's counter of slots freed
    uint32_t slots;    // 0: this ring does not exist
    uint32_t vc;       // the VC its packets travel on
};
static_assert(sizeof(FabricRing) == 32, "FabricRing layout");

// What the router publishes while it runs, read by the host's hang report.
struct FabricChannelStatus {
    volatile uint32_t done;      // sender: packets sent on the cable; receiver: packets handled
    volatile uint32_t freed;     // slots given back to the writer
    volatile uint32_t stuck_us;  // how long the head packet has not moved, when last looked at
    // A receiver's head packet, once its route is decided and it waits to
    // move on: 1 + the direction it leaves by (forward[] index), plus 256 x
    // the VC it takes there; 0: none. A hang report follows these waits.
    volatile uint32_t waits_for;
};

// What a router is doing, as the control plane commands it (the TT-Fabric
// spec's router states; Rerouted is the control plane's, kept on the host).
enum FabricRouterState : uint32_t {
    kFabricRouterInitializing = 0,  // configured, not yet polled
    kFabricRouterRunning = 1,
    kFabricRouterPaused = 2,    // sends nothing over its cable; still receives
    kFabricRouterDraining = 3,  // its worker lanes send nothing; what passes through goes on
    kFabricRouterRerouted = 4,  // its cable died: its traffic goes over its fallback relay, or round by new tables
};
// Whether a router in `state` sends from a sender (a worker lane, or not):
// a paused one holds all, a draining one its worker lanes.
constexpr bool fabric_router_sends(uint32_t state, bool lane) {
    return state != kFabricRouterPaused && (state != kFabricRouterDraining || !lane);
}
// The host's command, written into FabricRouterStatus::command.
// kFabricReroute (2D, its cable dead): the peer took peer_took[vc] of our
// packets off it and our receivers take freeze_at[vc] of the peer's; free
// the first, send the rest again, and from then on give every packet for the
// dead cable a new route from this chip's tables (which the control plane
// has rewritten around it) through another router of the chip.
// kFabricRejoin (its cable back): on its fallback relay, send a
// kFabricRejoinMark per VC after what went there and that VC over the cable
// from then, reading a VC off the cable once the peer's mark came; routed
// round by tables (paused until what went round was delivered), read each
// VC off the cable again from freeze_at[vc] (the peer's count) and send over it.
enum FabricRouterCommand : uint32_t {
    kFabricRun = 0,
    kFabricPause = 1,
    kFabricDrain = 2,
    kFabricReroute = 3,
    kFabricRejoin = 4,
};

struct FabricRouterStatus {
    FabricChannelStatus senders[kFabricMaxSenders];
    FabricChannelStatus receivers[kFabricMaxVcs];
    volatile uint32_t delivered;       // packets executed on this chip
    volatile uint32_t forwarded;       // packets passed to the opposite router
    volatile uint32_t dropped;         // TTL expired, no route on, or stuck past the timeout with kFabricDropStuck
    volatile uint32_t timeouts;        // timeout events posted
    volatile uint32_t link_downs;      // times its cable went down (a link_down event each)
    volatile uint32_t resent;          // packets sent again over the fallback (not known to have arrived)
    volatile uint32_t state;           // FabricRouterState
    volatile uint32_t command;         // host: FabricRouterCommand, obeyed at the next poll
    volatile uint64_t heartbeat;       // timebase ticks at its latest poll
    volatile uint64_t busy_ticks;      // between polls that moved something
    volatile uint64_t idle_ticks;      // between polls that did not (mostly asleep)
    volatile uint64_t bytes_sent;      // over its cable, headers included
    volatile uint64_t bytes_received;  // off its cable, headers included
    // Per VC of its cable (packets received per VC: receivers[vc].done).
    volatile uint64_t vc_bytes_sent[kFabricMaxVcs];
    volatile uint64_t vc_bytes_received[kFabricMaxVcs];
    volatile uint32_t vc_packets_sent[kFabricMaxVcs];
    volatile uint32_t peer_took[kFabricMaxVcs];  // host, with kFabricReroute
    volatile uint32_t freeze_at[kFabricMaxVcs];  // host, with kFabricReroute and (routed round) kFabricRejoin
    volatile uint32_t recorded;  // packets written into the log so far (the latest record_slots are kept)
    // Host: non-zero while the control plane settles a move round a dead
    // cable (its worker lanes wait, as Draining, whatever the command).
    volatile uint32_t hold_lanes;
    volatile uint32_t polls;  // every poll, whether it moved anything or not
    // Host, with kFabricReroute between meshes: non-zero, the packets this
    // router sends round its dead cable keep the escape VC into the next
    // meshes (FabricPacketHeader::keeps_escape).
    volatile uint32_t detours_keep_vc;
    uint32_t reserved;
};
static_assert((3 * kFabricMaxVcs + 5) % 2 == 0, "FabricRouterStatus: its words end on an 8-byte boundary");
static_assert(sizeof(FabricRouterStatus) ==
                  16 * (kFabricMaxSenders + kFabricMaxVcs) + 72 + 16 * kFabricMaxVcs + 4 * (3 * kFabricMaxVcs + 5),
              "FabricRouterStatus layout");

struct FabricRouterConfig {
    uint32_t magic;
    uint32_t port;
    FabricNodeId self;
    uint32_t num_vcs;    // 1 on a line or mesh, 2 on a ring or torus
    uint32_t dateline;   // 1: this port's cable is the ring's (2D: its dimension's) dateline: packets leave on VC 1
    uint32_t slot_size;  // bytes per slot, header included
    uint32_t num_senders;
    uint32_t timeout_us;  // a head packet that cannot move this long is reported; 0: never
    uint32_t flags;       // FabricRouterFlags
    uint32_t dims;        // 1: a line or ring (forward[0] is the opposite router); 2: a mesh or torus
    uint64_t link_words;  // this router's FabricLinkWords
    uint64_t peer_link_words;
    FabricRing receivers[kFabricMaxVcs];     // fed by the peer over the cable (written: link_words.filled)
    uint64_t peer_receivers[kFabricMaxVcs];  // the peer's receiver slot 0 per VC, where our packets go
    FabricRing senders[kFabricMaxSenders];   // lanes, then pass-through per VC
    // Where a packet passing on goes, per direction and VC: on 1D, [0] is the
    // opposite router's pass-through channel; on 2D, [d] is the pass-through
    // channel from us of the router facing d (FabricCompass). slots 0: none.
    FabricRing forward[kFabricMaxDirections][kFabricMaxVcs];
    uint64_t status;   // FabricRouterStatus
    uint32_t compass;  // 2D: the direction this router's cable leaves the chip (FabricCompass)
    uint32_t mesh_width;   // 2D: its chip's mesh's width (chip ids: x + y * width), for a multicast's run
    uint64_t route_table;  // 2D: this chip's FabricRouteTable (in this router's L1); 0 on 1D
    // Ethernet fallback (the TT-Fabric spec's fallback channel per VC): while
    // the cable is down, packets go into fallback[vc], a sender channel of
    // this chip's relay (kFabricRelay) on another plane's cable the same way;
    // the peer's come back through its relay into fallback_in[vc] (written
    // in our L1 by our relay, freed in its L1). slots 0: no fallback.
    FabricRing fallback[kFabricMaxVcs];
    FabricRing fallback_in[kFabricMaxVcs];
    uint32_t fallback_port;  // the relay's port, for events
    uint32_t pad2;
    uint64_t fallback_stage;  // 64 bytes of our L1 where what we tell the peer is staged for the NoC
    // The packet log, when the host asks for one: record_slots
    // FabricPacketRecords from here, the latest packets this router sent over
    // its cable (record i at records + 48 x (i % record_slots); the count in
    // FabricRouterStatus::recorded). 0 slots: no log.
    uint64_t records;
    uint32_t record_slots;
    uint32_t ring_chips;  // 1D, kFabricRingEscape: the chips round the ring; else 0
    // With kFabricEscapeVc: the tables this router routes a packet for its
    // dead cable by (route_round), written by the control plane while the
    // chip's own (route_table, which its workers read) stay as they were.
    // One mesh: the `to` entries only (kFabricDetourTableBytes, meshes 0);
    // between meshes all of it. 0: route_table.
    uint64_t detour_table;
};
static_assert(sizeof(FabricRouterConfig) == 56 + 32 * kFabricMaxVcs + 8 * kFabricMaxVcs + 32 * kFabricMaxSenders +
                                                32 * kFabricMaxDirections * kFabricMaxVcs + 8 + 16 +
                                                64 * kFabricMaxVcs + 16 + 16 + 8,
              "FabricRouterConfig layout");
// A router's senders: its worker lanes first, then one per pass-through group and VC.
constexpr uint32_t fabric_lanes(const FabricRouterConfig& c) {
    return c.num_senders - fabric_pass_groups(c.dims, c.flags) * c.num_vcs;
}
inline constexpr uint32_t kFabricDetourTableBytes = offsetof(FabricRouteTable, to_mesh);

// One packet a router sent over its cable, as its log keeps it: enough of the
// header to tell the packet from others (its source's seq and addresses), the
// VC it crossed on, and when, on the router's timer. A packet's path is the
// records it left, chip after chip: the same on a QEMU cluster and in the
// fabric model, which runs this firmware.
struct FabricPacketRecord {
    FabricNodeId src;
    FabricNodeId dst;
    uint32_t seq;
    uint8_t noc_command;
    uint8_t send_type;
    uint8_t vc;    // the VC it crossed the cable on
    uint8_t hops;  // cables still to cross to its (first) destination, this one included
    uint32_t payload_bytes;
    uint32_t inc_value;
    uint64_t dst_address;
    uint64_t sem_address;
    uint64_t sent_ticks;  // the router's timer when it sent the packet (the board's timebase)
};
static_assert(sizeof(FabricPacketRecord) == 48, "FabricPacketRecord layout");

// What a worker kernel needs to send through one router (one lane of its
// sender channel 0), from the builder. The lane's counters run on for the
// router's life while connections come and go: a worker opening the lane
// reads where `written` stands (over the NoC: the counter is in the router's
// L1), starts its own `freed` there, and tells the router where that counter
// is by writing its address into the router's ring of the lane (router_lane);
// closing waits until every packet it sent was freed.
struct FabricWorkerConnection {
    FabricRing lane;       // buffer and written in the router's L1, freed in ours
    uint64_t headers;      // slots x 64 bytes in our L1 where packet headers are staged
    uint64_t router_lane;  // the router's FabricRing of this lane (in its FabricRouterConfig)
    FabricNodeId self;     // this chip
    uint32_t slot_size;    // bytes per slot, header included
    uint32_t router_core;  // for reports
    uint32_t port;
    uint64_t route_table;  // 2D: the chip's abi::FabricRouteTable, in the router's L1 (read over the NoC); 0 on 1D
    uint64_t scratch;      // 2D: 8 bytes of our L1 a table entry is read into
    uint64_t reserved[6];
};
static_assert(sizeof(FabricWorkerConnection) == 128, "FabricWorkerConnection layout");

// One end of a stream of messages between two worker cores carried by the
// fabric (the collectives' transport, host/transport/fabric). The receiver
// keeps a ring of `slots` message buffers in its L1; the sender stages a
// message in a ring of its own, sends it with a fused write + increment of
// the receiver's `filled`, and may reuse a slot once the receiver's credit (an
// atomic increment of the sender's `credits`, sent back over the fabric) says
// the receiver is done with it.
enum FabricStreamRole : uint32_t { kFabricStreamSender = 1, kFabricStreamReceiver = 2 };

struct FabricStreamEnd {
    uint64_t connection;      // this worker's abi::FabricWorkerConnection toward the peer
    uint64_t buffer;          // sender: staging ring; receiver: landing ring (this worker's L1)
    uint64_t remote_buffer;   // sender: the receiver's landing ring; receiver: 0
    uint64_t counter;         // sender: credits; receiver: filled (this worker's L1)
    uint64_t remote_counter;  // sender: the receiver's filled; receiver: the sender's credits
    FabricNodeId peer;
    uint32_t role;  // FabricStreamRole
    uint32_t slots;
    uint32_t message_bytes;  // per slot
    uint32_t hops;           // to the peer, through the connection's router
    uint32_t route;          // 2D: the directions after the first cable (FabricPacketHeader::route)
};
static_assert(sizeof(FabricStreamEnd) == 64, "FabricStreamEnd layout");

// firmware/kernels/fabric_multicast's arguments: one block written by
// multicast to a run of chips each way (a fabric-native all-gather or
// broadcast), then a wait until this chip has received `expect` blocks.
struct FabricMulticastArgs {
    uint64_t connection[2];  // abi::FabricWorkerConnection forward, backward; 0: none
    uint64_t src;            // this chip's block
    uint64_t dst;            // where it lands on every chip reached (the same address on each)
    uint64_t local_dst;      // where it lands on this chip (a local copy); 0: nowhere
    uint64_t sem;            // in this core's L1, at the same address on every chip: +1 per block landed
    uint32_t bytes;
    uint32_t expect;         // blocks this chip waits for
    uint8_t count[2];        // chips reached forward, backward (from the next one on)
    uint16_t first_chip[2];  // the first of them, for reports
    uint8_t pad[2];
};
static_assert(sizeof(FabricMulticastArgs) == 64 && kIsKernelArgs<FabricMulticastArgs>, "FabricMulticastArgs layout");

// firmware/kernels/fabric_traffic's arguments: one worker sending packets
// through the fabric (firmware/fabric/connection.h), each job one API call
// (the system tests' traffic, and weft replay's).
struct FabricTrafficJob {
    uint8_t command;  // abi::FabricNocCommand
    uint8_t hops;
    uint8_t count;  // > 1: multicast
    uint8_t ttl;
    uint8_t direction;  // the connection it goes on: 1D 0 forward, 1 backward; 2D the abi::FabricCompass
    uint8_t dst_mesh;
    uint16_t dst_chip;  // in its mesh
    uint32_t bytes;     // write: all of it; scatter: each part
    uint32_t inc;       // increment, or the inline write's value
    uint64_t dst, sem, src;
    uint64_t scatter[2];
    uint32_t route;  // 2D: the directions after the first cable
    uint32_t pad1;
};
static_assert(sizeof(FabricTrafficJob) == 64, "FabricTrafficJob layout");

inline constexpr uint32_t kFabricTrafficMaxJobs = 48;

struct FabricTrafficArgs {
    uint64_t connection[4];  // abi::FabricWorkerConnection by job direction; 0: none
    uint32_t job_count;
    uint32_t pad;
    FabricTrafficJob jobs[kFabricTrafficMaxJobs];
};
static_assert(sizeof(FabricTrafficArgs) == 40 + 64 * kFabricTrafficMaxJobs && kIsKernelArgs<FabricTrafficArgs>,
              "FabricTrafficArgs layout");

}  // namespace weft::abi
