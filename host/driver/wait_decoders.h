// Describing a stuck wait for the hang report. The generic waits (launch,
// semaphore, rings) are the driver's; a wait a transport's or a resident
// image's kernel posts (abi::WaitKind from kWaitFirstOwned on) is decoded by
// whoever owns that kind, registered here, so the driver never reads another
// component's private status.
#pragma once
#include <stdint.h>

#include <functional>
#include <string>

#include "driver/machine.h"
#include "weft/abi/control_block.h"

namespace weft {

using WaitDecoder = std::function<std::string(const MachineChip& chip, const abi::HartStatus& status)>;

// Registers (or replaces) the decoder of `kind`; `owner` names it in reports.
void register_wait_decoder(uint32_t kind, const std::string& owner, WaitDecoder decode);
// What the registered decoder says, or "" if nobody registered `kind`.
std::string decode_owned_wait(uint32_t kind, const MachineChip& chip, const abi::HartStatus& status);

}  // namespace weft
