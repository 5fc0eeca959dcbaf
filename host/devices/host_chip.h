// A chip whose RAM is plain host memory, for unit tests and simulators: as many
// as they need in one process. The mapping is anonymous, so a chip costs only
// the pages its firmware and tests touch.
//
// Its addresses are host addresses (ChipMemory::base is the mapping itself):
// firmware built for the host board (boards/host) dereferences the addresses
// it is given, and the engines must see the same ones. to_host() moves an
// address of the board's memory map (what the host's builders place) to this
// chip's copy of it.
#pragma once
#include <stdint.h>

#include "devices/device_chip.h"
#include "driver/board.h"

namespace weft {

class HostChip final : public DeviceChip {
public:
    // The control block is filled in as the bridge does when it starts a chip.
    HostChip(const BoardInfo& board, uint32_t id, uint32_t num_chips);
    // A chip whose memory is `bytes` of the caller's at `memory` (zeroed),
    // standing for the start of the board's RAM: a model of thousands of
    // chips maps one arena for them all (a mapping each would outrun the
    // address space and vm.max_map_count), each chip a slice as large as
    // what the model uses of it. `bytes` must cover the control block.
    HostChip(const BoardInfo& board, uint32_t id, uint32_t num_chips, uint8_t* memory, uint64_t bytes);
    ~HostChip();
    HostChip(const HostChip&) = delete;
    HostChip& operator=(const HostChip&) = delete;

    const ChipMemory& memory() const override { return mem_; }
    abi::ChipControlBlock& control() const override;
    bool alive() const override { return true; }

    // Throws weft::Error when [addr, addr + len) is outside the board's RAM,
    // or outside the part of it this chip keeps.
    uint64_t to_host(uint64_t board_addr, uint64_t len = 1) const;
    uint8_t* at(uint64_t board_addr, uint64_t len = 1) const {
        return reinterpret_cast<uint8_t*>(to_host(board_addr, len));
    }

private:
    void start(uint32_t id, uint32_t num_chips);

    const BoardInfo& board_;
    ChipMemory mem_;
    bool owned_ = true;  // its own mapping, unmapped with it
};

}  // namespace weft
