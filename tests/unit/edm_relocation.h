// The EDM builder places every buffer, semaphore and configuration at the
// board's addresses, the same on every chip (so it writes them, through
// HostCluster::bytes, to the right place on each chip). But firmware on the
// host board dereferences the addresses it is given, and a host chip's copy
// of a board address is elsewhere (HostChip::to_host): these move the
// addresses inside what the builder wrote, as a loader relocates an image.
#pragma once
#include "devices/host_chip.h"
#include "weft/abi/edm.h"

namespace weft::test {

// An address of 0 means "none" and stays 0.
inline void relocate(uint64_t& addr, const HostChip& chip) {
    if (addr) addr = chip.to_host(addr);
}

// `self` holds the EDM (and the workers of its channels), `peer` the far end.
inline void relocate(abi::EdmConfig& c, const HostChip& self, const HostChip& peer) {
    relocate(c.link_words, self);
    relocate(c.peer_link_words, peer);
    for (uint32_t i = 0; i < c.num_channels; ++i) {
        abi::EdmChannel& ch = c.channels[i];
        relocate(ch.buffer_base, self);
        relocate(ch.semaphore_base, self);
        relocate(ch.remote_buffer_base, peer);
        relocate(ch.control_semaphore, self);
        for (uint32_t w = 0; w < ch.num_workers; ++w) {
            relocate(ch.workers[w].semaphore_base, self);
            relocate(ch.workers[w].buffer_base, self);
        }
    }
}

// A worker talks to the EDM of its own chip only.
inline void relocate(abi::EdmWorkerConnection& w, const HostChip& self) {
    relocate(w.edm_buffer_base, self);
    relocate(w.edm_semaphore_base, self);
    relocate(w.worker_semaphore_base, self);
    relocate(w.worker_buffer_base, self);
    relocate(w.edm_control_semaphore, self);
}

}  // namespace weft::test
