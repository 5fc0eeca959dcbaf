// Where packets wait in a model's routers, and whether their waits close a
// cycle: the fabric model's hang report. Each receiver channel holding
// packets waits for the receiver its head packet goes to next (found by the
// router's own route decision, firmware/fabric/route.h); a cycle of such
// waits among channels that cannot move is a deadlock.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "model/fabric_model.h"

namespace weft::fabric_model {

class TimedFabric;

struct HeldChannel {
    uint32_t router = 0, chip = 0, port = 0;
    bool receiver = true;  // else a sender channel (a lane or pass-through)
    uint32_t channel = 0;  // the VC of a receiver, the index of a sender
    uint32_t held = 0, slots = 0;
    abi::FabricNodeId head_dst{};  // a receiver's head packet's destination
};

// Every router channel holding packets now.
std::vector<HeldChannel> held_channels(model::FabricModel& model);
uint64_t held_packets(model::FabricModel& model);

// Per router (by index), the slots its channels have in use: packets not yet
// passed on and those passed on whose slots are not yet free again (their
// bytes still leaving). Its buffers' occupancy, which back-pressure fills.
std::vector<uint32_t> slots_in_use(model::FabricModel& model);

// A receiver channel holding packets and the receiver its head packet waits
// to move into: across the cable of the router it leaves its chip by.
struct ChannelWait {
    HeldChannel from;
    uint32_t direction = 0;  // the way it leaves (forward[] index): 2D a FabricCompass, 1D 0 (onward)
    bool decided = false;    // the router published it (FabricChannelStatus::waits_for); else as it will decide
    int to_router = -1;      // the receiver's router; -1: the cable leads to no router
    uint32_t to_chip = 0, to_port = 0, to_vc = 0;
};

// Every held receiver whose head packet goes on to another chip.
std::vector<ChannelWait> channel_waits(model::FabricModel& model);

// The waits that close a cycle, in order (each one's receiver is the next
// one's `from`); empty if none does.
std::vector<ChannelWait> wait_cycle_waits(model::FabricModel& model);
std::vector<ChannelWait> wait_cycle_of(const std::vector<ChannelWait>& waits);

// The same over the chips of every rank: on MPI ranks a rank's copy of
// another's routers never ran, so each rank reads its own routers and sends
// what it found to every rank (all ranks call these together).
std::vector<HeldChannel> held_channels(model::FabricModel& model, TimedFabric& engine);
std::vector<ChannelWait> channel_waits(model::FabricModel& model, TimedFabric& engine);

// The receivers whose head packets wait on one another round a cycle, each
// named "chip 3 port 1 vc0"; empty if their waits close no cycle.
std::vector<std::string> wait_cycle(model::FabricModel& model);

// Several lines: each router of the chips `engine` runs (on ranks, this
// rank's) that dropped or sent again packets, and why a packet may be
// missing ("" when none did).
std::string drop_report(model::FabricModel& model, const TimedFabric& engine);

// Several lines: the channels that hold packets and the cycle, if any, over
// every rank's chips.
std::string stuck_report(model::FabricModel& model, TimedFabric& engine);

}  // namespace weft::fabric_model
