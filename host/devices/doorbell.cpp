#include "devices/doorbell.h"

namespace weft {
namespace {

// A wake-up that finds nothing to do costs the host as much as one that does.
bool wait_may_be_over(const ChipMemory& mem, const abi::HartStatus& st, uint32_t core, const Touched& t) {
    const auto word = [&] { return reinterpret_cast<const uint32_t*>(mem.at(st.wait_addr, 4)); };
    switch (st.wait_kind) {
        case abi::kWaitSemaphore: {
            // semaphore_wait waits for ==, semaphore_wait_min for >=: >= covers both.
            const uint32_t* sem = word();
            return t.any() && (!sem || __atomic_load_n(sem, __ATOMIC_ACQUIRE) >= st.wait_value);
        }
        case abi::kWaitWord: {
            const uint32_t* w = word();
            return t.any() && (!w || __atomic_load_n(w, __ATOMIC_ACQUIRE) == st.wait_value);
        }
        // Launches ring for themselves (below); the idle hart on watch hears
        // the chip's line whoever a ring is for.
        case abi::kWaitLaunch: return false;
        case abi::kWaitEthRing: return (t.cores >> core & 1) || (st.wait_addr < 32 && (t.ports >> st.wait_addr & 1));
        case abi::kWaitNone: return t.any();
        case abi::kWaitNocRing:
        case abi::kWaitMathRing: return t.cores >> core & 1;
        default: return owned_wait_rung(st.wait_value, core, t);
    }
}

}  // namespace

void Doorbell::reset(const abi::ChipControlBlock& cb) {
    for (uint32_t c = 0; c < abi::kMaxCores; ++c) {
        rung_[c] = 0;
        launch_rung_[c] = cb.host.launch[c].seq;
        host_rung_[c] = cb.host.ring[c];
    }
}

uint32_t Doorbell::cores_to_ring(const abi::ChipControlBlock& cb, const ChipMemory& mem, uint32_t cores,
                                 const Touched& touched) {
    uint32_t ring = 0;
    for (uint32_t c = 0; c < cores && c < abi::kMaxCores; ++c) {
        const abi::HartStatus& st = cb.hart[c];
        // A sleeper re-arms with a new odd number each time it sleeps.
        const uint32_t bell = cb.doorbell[c].seq;
        if (abi::doorbell_armed(bell) && bell != rung_[c] && wait_may_be_over(mem, st, c, touched)) {
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
