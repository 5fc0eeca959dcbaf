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

// The receivers whose head packets wait on one another round a cycle, each
// named "chip 3 port 1 vc0"; empty if their waits close no cycle.
std::vector<std::string> wait_cycle(model::FabricModel& model);

// Several lines: each router that dropped or sent again packets, and why a
// packet may be missing ("" when none did).
std::string drop_report(model::FabricModel& model);

// Several lines: the channels that hold packets and the cycle, if any.
std::string stuck_report(model::FabricModel& model);

}  // namespace weft::fabric_model
