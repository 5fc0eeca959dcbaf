// What the hang report says of a fabric router (abi::kWaitFabricRouter): per
// channel, the slots in use, the credits it holds, its head packet's header
// and how long that packet has not moved; and what the router has delivered,
// forwarded and dropped.
#pragma once
#include <stdint.h>

#include <string>

#include "weft/abi/fabric_router.h"

namespace weft::transport {

// Idempotent; the fabric builder and the CLI call it, so any process that
// can see a router can describe it.
void register_fabric_wait_decoder();

// A router's channel as its reports name it: its senders (worker lanes, then
// pass-through channels) numbered first, then its receivers, one per VC.
std::string fabric_channel_name(const abi::FabricRouterConfig& config, uint32_t channel);

}  // namespace weft::transport
