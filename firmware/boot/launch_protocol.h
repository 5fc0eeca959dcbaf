// The hart side of the launch mailbox protocol, free of hardware access so the
// host unit tests run the very code the boot firmware runs.
//   host:  fills LaunchRequest, fences, bumps seq
//   hart:  sees seq != done_seq -> RUNNING -> runs -> result, DONE -> done_seq = seq
//   trap:  result = cause, FAULT -> done_seq = running_seq
// done_seq is written last: the host waits on it and then reads the state
// (a fault?) and launches again (the core must not look RUNNING by then).
#pragma once
#include <stdint.h>

#include "weft/abi/control_protocol.h"

namespace weft::boot {

inline bool launch_pending(const abi::LaunchRequest& req, const abi::HartStatus& st) { return req.seq != st.done_seq; }

// A hart that (re)boots ignores launches posted before it came up.
inline void post_ready(const abi::LaunchRequest& req, abi::HartStatus& st) {
    st.done_seq = req.seq;
    st.running_seq = req.seq;
    st.wait_kind = abi::kWaitNone;
    st.boot_count = st.boot_count + 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    st.state = abi::kHartReady;
}

struct Snapshot {
    uint32_t seq, flags;
    uint64_t entry, args, arg_count, code_base, code_size;
};

inline Snapshot begin_launch(const abi::LaunchRequest& req, abi::HartStatus& st) {
    __atomic_thread_fence(__ATOMIC_ACQUIRE);  // read the fields the seq published
    Snapshot s{req.seq, req.flags, req.entry, req.args, req.arg_count, req.code_base, req.code_size};
    st.running_seq = s.seq;
    st.progress = 0;
    st.state = abi::kHartRunning;
    return s;
}

inline void post_done(abi::HartStatus& st, uint32_t seq, int32_t rc, uint64_t cycles, uint64_t ticks) {
    st.cycles = cycles;
    st.ticks = ticks;
    st.return_code = rc;
    st.wait_kind = abi::kWaitNone;
    st.state = abi::kHartDone;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    st.done_seq = seq;
}

inline void post_fault(abi::HartStatus& st, uint64_t mcause, uint64_t mepc, uint64_t mtval, int32_t rc,
                       uint64_t ra = 0) {
    st.mcause = mcause;
    st.ra = ra;
    st.mepc = mepc;
    st.mtval = mtval;
    st.return_code = rc;
    st.wait_kind = abi::kWaitNone;
    st.state = abi::kHartFault;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    st.done_seq = st.running_seq;
}

}  // namespace weft::boot
