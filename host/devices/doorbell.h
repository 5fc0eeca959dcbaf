// Which cores of a chip the bridge's doorbell is for (firmware/hal/wake.h):
// a core sleeping on what the devices just changed, each sleep rung once: a
// semaphore or word wait only once the word got where it waits for, an eth
// ring wait when its port's ring moved, any other wait (an EDM, a router, a
// NoC or math ring) when its own L1 or rings changed; a core
// launch is posted for, each launch rung once; a core the host asked to ring
// (HostArea::ring), each request rung once.
#pragma once
#include <stdint.h>

#include "devices/chip_memory.h"
#include "devices/devices.h"
#include "weft/abi/control_block.h"

namespace weft {

// Whether a pass that touched `t` rings `core` asleep in an owned wait (an
// EDM, a router) that posted `wait_value`: for what others wrote into its L1,
// and for its own commands finishing unless it said it waits on none
// (abi::kWaitOthersOnly). The host models of the fabric ring their routers so too.
inline bool owned_wait_rung(uint32_t wait_value, uint32_t core, const Touched& t) {
    const uint32_t by = (wait_value & abi::kWaitOthersOnly) ? t.others : t.cores;
    return by >> core & 1;
}

class Doorbell {
public:
    // The launches already in the mailboxes are not rung for.
    void reset(const abi::ChipControlBlock& cb);
    // The cores to ring (bit c: core c) among the first `cores`, 0 when nobody
    // needs a ring. `touched`: what the devices changed on this chip since the
    // last call.
    uint32_t cores_to_ring(const abi::ChipControlBlock& cb, const ChipMemory& mem, uint32_t cores,
                           const Touched& touched);

private:
    uint32_t rung_[abi::kMaxCores] = {};         // HartDoorbell::seq last rung for
    uint32_t launch_rung_[abi::kMaxCores] = {};  // launch seq last rung for
    uint32_t host_rung_[abi::kMaxCores] = {};    // HostArea::ring last rung for
};

}  // namespace weft
