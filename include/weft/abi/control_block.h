// The control block of a chip whose devices weft-bridge emulates: the generic
// control protocol (control_protocol.h) followed by the emulated devices
// (emulated_devices.h), as one structure the host, the bridge and the chip's
// HAL backend share. Code that is the same on every chip (firmware/rt,
// firmware/boot, the HAL interfaces) sees only abi::ControlProtocol.
#pragma once
#include <stdint.h>

#include "weft/abi/control_protocol.h"
#include "weft/abi/emulated_devices.h"

namespace weft::abi {

// cb.host, cb.hart, ... and cb.noc, cb.port, ...: both parts' members, the
// generic part first at the block's base.
struct ChipControlBlock : ControlProtocol, EmulatedDevices {};

static_assert(sizeof(ChipControlBlock) == sizeof(ControlProtocol) + sizeof(EmulatedDevices),
              "ChipControlBlock: the two parts back to back");
static_assert(sizeof(ChipControlBlock) <= 256 * 1024, "control block outgrew its window");

}  // namespace weft::abi
