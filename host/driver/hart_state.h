// What a chip's control block says of its cores and rings, read the same way
// by every machine (the QEMU cluster's Chip, the Machine seam's helpers, the
// host model).
#pragma once
#include <stdint.h>
#include <string.h>

#include <string>

#include "driver/board.h"
#include "driver/kernel_launch.h"
#include "weft/abi/control_block.h"
#include "weft/abi/fault.h"

namespace weft {

// The kernel a core runs or last ran, by the name its launch recorded.
inline std::string image_name(const abi::CoreImage& held) {
    return std::string(held.name, strnlen(held.name, sizeof held.name));
}

// The core's last kernel was stopped by the host (a failed op or launch
// stopping the rest), not a fault of its own.
inline bool stopped_by_host(const abi::HartStatus& st) {
    return st.state == abi::kHartFault && st.mcause == abi::kPanicCause && st.return_code == abi::kPanicStopped;
}

// The launch `seq` has ended: returned, faulted or stopped.
inline bool launch_ended(const abi::HartStatus& st, uint32_t seq) {
    return __atomic_load_n(&st.done_seq, __ATOMIC_ACQUIRE) == seq;
}

// What a launch that ended without a fault returned.
inline KernelResult returned(const abi::HartStatus& st) { return KernelResult{st.return_code, st.cycles, st.ticks}; }

// A sum of the chip's ring heads, cores' progress words and finished
// launches: it changes whenever anything on the chip moves.
inline uint64_t activity(const abi::ChipControlBlock& cb, const BoardInfo& board) {
    uint64_t sum = 0;
    for (uint32_t c = 0; c < board.cores.size(); ++c)
        sum += cb.noc[c].head + cb.math[c].head + cb.hart[c].progress + cb.hart[c].done_seq;
    for (uint32_t p = 0; p < board.ports.size(); ++p) sum += cb.eth[p].head;
    return sum;
}

}  // namespace weft
