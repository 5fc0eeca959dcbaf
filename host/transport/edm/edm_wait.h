// What the hang report says of an EDM waiting for work (abi::kWaitEdm): its
// handshake and every open channel's counters, read from its configuration.
#pragma once

namespace weft::transport {

// Idempotent; the EDM builder calls it, so any process that placed an EDM
// can describe one.
void register_edm_wait_decoder();

}  // namespace weft::transport
