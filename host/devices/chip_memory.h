// A chip's RAM as the bridge (and the driver) see it: the memfd QEMU uses as
// guest RAM, mapped shared. Guest physical address = ram.base + offset.
#pragma once
#include <stdint.h>

#include "weft/abi/control_block.h"

namespace weft {

struct ChipMemory {
    uint8_t* host = nullptr;
    uint64_t base = 0;  // guest physical address of host[0]
    uint64_t size = 0;
    // A host chip (host_chip.h) answers to two addresses for each byte: its
    // host address, which firmware on the host board dereferences, and the
    // board's, which a packet carries from chip to chip (a fabric multicast
    // names one address for every chip it reaches). 0: no alias.
    uint64_t alias = 0;

    // Host pointer for [addr, addr + len) or nullptr if any of it is outside RAM.
    uint8_t* at(uint64_t addr, uint64_t len) const {
        if (addr >= base && len <= size && addr - base <= size - len) return host + (addr - base);
        if (alias && addr >= alias && len <= size && addr - alias <= size - len) return host + (addr - alias);
        return nullptr;
    }
    // The board's address of a byte a host chip names by its host address;
    // any other address (a board's already, or a chip without an alias) as it is.
    uint64_t board_address(uint64_t addr) const {
        return alias && addr >= base && addr - base < size ? addr - base + alias : addr;
    }
    abi::ChipControlBlock& control(uint64_t control_block_addr) const {
        return *reinterpret_cast<abi::ChipControlBlock*>(at(control_block_addr, sizeof(abi::ChipControlBlock)));
    }
};

}  // namespace weft
