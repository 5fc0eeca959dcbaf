// The board-independent part of the mailbox HAL: everything that follows from
// the control block and the core id, which each board provides.
#include "hal/mailbox.h"

#include "hal/timer.h"
#include "weft/abi/fault.h"

namespace weft::mailbox {

uint32_t chip_id() { return control().host.chip_id; }
uint32_t num_chips() { return control().host.num_chips; }
abi::HartStatus& my_status() { return control().hart[core_id()]; }

void set_wait(uint32_t kind, uint64_t addr, uint32_t value) {
    auto& st = my_status();
    st.wait_addr = addr;
    st.wait_value = value;
    st.wait_kind = kind;
    st.heartbeat = timer::now();
}
void clear_wait() { my_status().wait_kind = abi::kWaitNone; }
void set_progress(uint64_t step) { my_status().progress = step; }

void honour_stop() {
    const uint32_t seq = my_status().running_seq;
    if (seq != 0 && control().host.stop[core_id()] == seq) panic(abi::kPanicStopped, seq);
}

// The host may tune the back-off per chip; these defaults hold until it does.
uint32_t active_wake_us() {
    uint32_t v = control().host.active_wake_us;
    return v ? v : 5000;
}
// Launches ring the idle hart on watch: its alarm only bounds a missed ring,
// and every wake-up of an idle chip costs the host (a 32-chip galaxy idles
// under a tenth of a core with 250 ms).
uint32_t idle_wake_us() {
    uint32_t v = control().host.idle_wake_us;
    return v ? v : 250000;
}

}  // namespace weft::mailbox
