#include "hal/mailbox.h"

#include "hal/timer.h"
#include "rt/csr.h"
#include "weft/abi/fault.h"
#include "weft/board_layout.h"

namespace weft::mailbox {

abi::ChipControlBlock& control() { return *reinterpret_cast<abi::ChipControlBlock*>(WEFT_CONTROL_BLOCK); }
uint32_t core_id() { return static_cast<uint32_t>(rt::hart_id()); }
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

uint32_t active_wake_us() {
    uint32_t v = control().host.active_wake_us;
    return v ? v : 500;
}
uint32_t idle_wake_us() {
    uint32_t v = control().host.idle_wake_us;
    return v ? v : 20000;
}

void panic(int32_t code, uint64_t detail) {
    // The boot firmware's trap handler recognises this breakpoint by a2.
    register int64_t a0 __asm__("a0") = code;
    register uint64_t a1 __asm__("a1") = detail;
    register uint64_t a2 __asm__("a2") = abi::kPanicMagic;
    __asm__ volatile("ebreak" ::"r"(a0), "r"(a1), "r"(a2));
    __builtin_unreachable();
}

}  // namespace weft::mailbox
