#include "devices/doorbell.h"

namespace weft {
namespace {

// A wake-up that finds nothing to do costs the host as much as one that does.
bool wait_may_be_over(const ChipMemory& mem, const abi::HartStatus& st) {
    if (st.wait_kind != abi::kWaitSemaphore) return true;
    const auto* sem = reinterpret_cast<const uint32_t*>(mem.at(st.wait_addr, 4));
    // semaphore_wait waits for ==, semaphore_wait_min for >=: >= covers both.
    return !sem || __atomic_load_n(sem, __ATOMIC_ACQUIRE) >= st.wait_value;
}

}  // namespace

void Doorbell::reset(const abi::ChipControlBlock& cb) {
    for (uint32_t c = 0; c < abi::kMaxCores; ++c) {
        rung_[c] = 0;
        launch_rung_[c] = cb.host.launch[c].seq;
        host_rung_[c] = cb.host.ring[c];
    }
}

uint32_t Doorbell::cores_to_ring(const abi::ChipControlBlock& cb, const ChipMemory& mem, uint32_t cores, bool touched) {
    uint32_t ring = 0;
    for (uint32_t c = 0; c < cores && c < abi::kMaxCores; ++c) {
        const abi::HartStatus& st = cb.hart[c];
        // A sleeper re-arms with a new odd number each time it sleeps.
        const uint32_t bell = cb.doorbell[c].seq;
        if (touched && abi::doorbell_armed(bell) && bell != rung_[c] && wait_may_be_over(mem, st)) {
            rung_[c] = bell;
            ring |= 1u << c;
        }
        // The core a launch is for sleeps until a software interrupt, which the
        // core that takes the doorbell (the chip's watch hart if no other) sends.
        const uint32_t seq = cb.host.launch[c].seq;
        if (seq != st.done_seq && st.state != abi::kHartRunning && seq != launch_rung_[c]) {
            launch_rung_[c] = seq;
            ring |= 1u << c;
        }
        const uint32_t asked = cb.host.ring[c];
        if (asked != host_rung_[c]) {
            host_rung_[c] = asked;
            ring |= 1u << c;
        }
    }
    return ring;
}

}  // namespace weft
