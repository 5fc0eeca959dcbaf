// Which cores of a chip the bridge's doorbell is for (firmware/hal/wake.h):
// a core sleeping on a device it just touched, each sleep rung once, and a
// semaphore wait only once the semaphore got where it waits for; a core a
// launch is posted for, each launch rung once; a core the host asked to ring
// (HostArea::ring), each request rung once.
#pragma once
#include <stdint.h>

#include "devices/chip_memory.h"
#include "weft/abi/control_block.h"

namespace weft {

class Doorbell {
public:
    // The launches already in the mailboxes are not rung for.
    void reset(const abi::ChipControlBlock& cb);
    // The cores to ring (bit c: core c) among the first `cores`, 0 when nobody
    // needs a ring. `touched`: the devices changed this chip's memory or rings
    // since the last call.
    uint32_t cores_to_ring(const abi::ChipControlBlock& cb, const ChipMemory& mem, uint32_t cores, bool touched);

private:
    uint32_t rung_[abi::kMaxCores] = {};         // HartDoorbell::seq last rung for
    uint32_t launch_rung_[abi::kMaxCores] = {};  // launch seq last rung for
    uint32_t host_rung_[abi::kMaxCores] = {};    // HostArea::ring last rung for
};

}  // namespace weft
