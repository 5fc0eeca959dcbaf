// The emulated devices' part of the chip's control block
// (weft/abi/emulated_devices.h), where this chip's HAL finds its rings,
// link states and doorbell words.
#pragma once
#include "hal/mailbox.h"
#include "weft/abi/control_block.h"

namespace weft::qemu_virt {

// The generic part mailbox::control() returns opens this chip's ChipControlBlock.
inline abi::EmulatedDevices& devices() { return static_cast<abi::ChipControlBlock&>(mailbox::control()); }

}  // namespace weft::qemu_virt
