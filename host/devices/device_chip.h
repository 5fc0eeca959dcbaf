// What the device engines need of a chip: its memory, its control block (where
// the cores' command rings are) and whether it still runs. weft-bridge's chips
// are QEMU processes (bridge/chip_process.h); a test's or a simulator's are
// plain host memory (devices/host_chip.h). The engines see no difference.
#pragma once
#include "devices/chip_memory.h"
#include "weft/abi/control_block.h"

namespace weft {

class DeviceChip {
public:
    virtual const ChipMemory& memory() const = 0;
    virtual abi::ChipControlBlock& control() const = 0;
    // False once the chip died: the links to it refuse commands, for good.
    virtual bool alive() const = 0;

protected:
    ~DeviceChip() = default;
};

}  // namespace weft
