// What the hang report says of a fabric router (abi::kWaitFabricRouter): per
// channel, the slots in use, the credits it holds, its head packet's header
// and how long that packet has not moved; and what the router has delivered,
// forwarded and dropped.
#pragma once

namespace weft::transport {

// Idempotent; the fabric builder and the CLI call it, so any process that
// can see a router can describe it.
void register_fabric_wait_decoder();

}  // namespace weft::transport
