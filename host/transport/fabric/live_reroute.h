// Rerouting a running 2D fabric round a cable that died under it, where no
// fallback relay stands beside the cable (the control plane's side of the
// routers' kFabricReroute): the control plane computes tables without the
// cable, and the cable's two routers are told which of their packets the
// other took off it (counts read at both ends while it is down), so each
// sends the rest again round the new routes and gives every later packet for
// the cable a new route from its chip. Nothing arrives twice; traffic goes on
// without the cable.
//
// Where the new tables go: a fabric of meshes without wraps, or one torus,
// has an escape class (abi::kFabricEscapeVc), and only the cable's two
// routers take them, as detour tables; their detours travel on the escape
// VC (VC 1 on one mesh, VC 2 between meshes or on a torus) to the end of
// their way, into other meshes too, while every other packet keeps its old
// route. Old routes and
// detours mixed on one VC close cycles of turns (8 of mesh3x3's 12
// single-cable moves), and apart they cannot.
// A cable between meshes changes every mesh's exits: every chip takes new
// exits, reached along the routes inside its mesh it holds now, which stay.
// A later cable's move is checked with the detours the earlier ones gave
// and the tables the chips hold (both read back from their routers), since
// a packet one of them carries may meet it; a move between meshes may give
// those earlier detours its new exits, where their own would now loop. A torus's escape class is VC 2,
// above its datelines' two; under bubble flow control (one VC, no escape
// class) every router of the fabric takes the new tables. Either way check_table_move refuses a move that
// could deadlock.
//
// A ring (1D) needs no tables: the cable's two routers send what they hold
// for it back the other way round, on VC 2 (abi::kFabricRingEscape). A
// second dead cable cuts a ring in two, and one cuts a line: kCutOff.
//
// A lane's order holds across the move. A packet that crossed the cable
// before it died may still be on its old route past the cable; one of the
// same lane sent round after it could get there first (mesh3x3, chip 4's east
// cable pulled at step 10 of the model's every-pair traffic: chip 0's last
// word from chip 5 came 4th of 12). So the move goes in two steps, as the
// host polls (settle_move): every router's worker lanes wait and the cable's
// two routers hold what they have for it until the fabric settles
// (fabric_settle.h: what crossed has landed); then the two send round, and
// the lanes wait until that has landed too (a move between meshes gives
// every chip new exits, which must not overtake what waited at the cable).
// A fallback relay keeps the order by itself: the peer takes what came
// round only after all the cable brought.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "driver/machine.h"
#include "transport/fabric/control_plane.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/fabric_dependencies.h"
#include "transport/fabric/fabric_settle.h"

namespace weft::transport {

// The router at the far end of a's cable. Throws weft::Error if the fabric has none.
const FabricRouterPlan& peer_router(const FabricBuilder& fabric, const FabricRouterPlan& a);

// The routing table of each chip of `fabric` (in its order) as the control
// plane routes now. Throws weft::Error where a route needs a cable the fabric
// does not use (one planned narrower than the cluster: a torus run as a mesh).
std::vector<abi::FabricRouteTable> control_plane_tables(const FabricBuilder& fabric, const ControlPlane& control);

// A move round a dead cable under way: reroute_live starts it, settle_move
// steps it. kCrossing: the lanes wait and the cable's routers hold, until
// what crossed the cable has landed; kGoingRound: the two send round, and
// the lanes wait until that has landed too.
struct PendingMove {
    enum Phase { kNone, kCrossing, kGoingRound };
    Phase phase = kNone;
    uint32_t chip = 0, port = 0;  // the dead cable's router that started it
    SettleWatch watch;
};

// `wake(chip, core)` rings a router that may sleep (none on a host model).
// Returns the control plane's decision: kNewTables when the routers were
// given their tables and `move` started (the caller steps it with
// settle_move); anything else did nothing to the running fabric (a cut
// mesh, refused tables, or a cable the fabric does not use). A move under
// way must end before the next starts.
RerouteDecision reroute_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                             uint32_t port, PendingMove& move,
                             const std::function<void(uint32_t chip, uint32_t core)>& wake = {});
// One look of a move under way, as a host polls (a model: once a step).
// Returns whether it is still under way. `all`: on the fabric model's ranks,
// whether every rank found its routers settled.
bool settle_move(Machine& machine, const FabricBuilder& fabric, PendingMove& move,
                 const std::function<void(uint32_t chip, uint32_t core)>& wake = {}, const AllRanks& all = {});
// Ends it now, whatever its step (a caller that waited long enough): the
// cable's routers send round, the lanes go. Only the order may suffer.
void end_move(Machine& machine, const FabricBuilder& fabric, PendingMove& move,
              const std::function<void(uint32_t chip, uint32_t core)>& wake = {});

// The cable on (chip, port) is up again. Where its two routers moved onto
// their fallback relays, both go back onto it live (kFabricRejoin: what went
// over the fallback arrives first, then the cable carries again, nothing
// lost or twice) and the control plane takes the cable back. Returns "" when
// they were told to, else why they stay off it until the next fabric (a
// cable routed round by tables: its detours stay).
std::string rejoin_live(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                        uint32_t port, const std::function<void(uint32_t chip, uint32_t core)>& wake = {});

// The cable on (chip, port), which the control plane routed round by
// tables, is up again. Its return is a step at a time, one per call, as a
// host polls: kPaused, both routers told to send nothing (kFabricPause); then
// kWaiting while any packet they sent round is undelivered (escape_drained);
// then kRejoined, both told where the other's sending stands and to take
// the cable again (kFabricRejoin), and the control plane has the cable back.
// A cable between meshes moved every chip's exits: its return instead
// holds every worker lane from kPaused (its routers go on sending round)
// and waits for the fabric to settle, so no packet is on its way when the
// chips take back the tables the fabric was built with; the lanes go with
// kRejoined. While other cables are routed round, the chips take the exits
// the control plane picks with this one back and those still dead (along
// the routes they hold) and the others' detours take them too, where the
// deadlock check passes that state (plan_return); else kRefused (back.why),
// and its detours stay until the next fabric. A caller that gives up
// waiting resumes the detours with resume_detours. `back` is the caller's,
// fresh for each return.
enum class ReturnStep { kPaused, kWaiting, kRejoined, kRefused };
struct PendingReturn {
    bool started = false;  // the first step was taken
    uint64_t seen = 0;     // escape_drained's last look
    bool holding = false;  // every lane held: a cable between meshes
    SettleWatch watch;
    // Between meshes, beside other cables still routed round: every chip's
    // tables after the return (by position) and the others' detours with
    // those exits. Empty: the tables the fabric was built with.
    std::vector<abi::FabricRouteTable> after;
    std::vector<EarlierDetour> exits;
    std::string why;  // kRefused: why its detours stay
};
ReturnStep return_from_detours(Machine& machine, const FabricBuilder& fabric, ControlPlane& control, uint32_t chip,
                               uint32_t port, PendingReturn& back,
                               const std::function<void(uint32_t chip, uint32_t core)>& wake = {});
void resume_detours(Machine& machine, const FabricBuilder& fabric, uint32_t chip, uint32_t port, PendingReturn& back,
                    const std::function<void(uint32_t chip, uint32_t core)>& wake = {});
// Whether every packet on the fabric's escape VC (the detours; on a ring the
// packets sent back round) is delivered: none on a cable, none waiting in a
// channel, every receiver's slot read. True only when two looks in a row
// found it so with the same counts (`seen` keeps the last look's), so a
// packet moving between two routers' reads cannot hide.
bool escape_drained(Machine& machine, const FabricBuilder& fabric, uint64_t& seen);

}  // namespace weft::transport
