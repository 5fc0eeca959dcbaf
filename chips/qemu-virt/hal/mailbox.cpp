#include "hal/mailbox.h"

#include "rt/csr.h"
#include "weft/abi/control_block.h"
#include "weft/abi/fault.h"
#include "weft/board_layout.h"

namespace weft::mailbox {

abi::ControlProtocol& control() { return *reinterpret_cast<abi::ChipControlBlock*>(WEFT_CONTROL_BLOCK); }
uint32_t core_id() { return static_cast<uint32_t>(rt::hart_id()); }
void panic(int32_t code, uint64_t detail) {
    // The boot firmware's trap handler recognises this breakpoint by a2. The
    // detail goes a register at a time: a1 holds it on RV64, its low half on
    // RV32 with the high half in a3 (rt/trap.S).
    register long a0 __asm__("a0") = code;
    register unsigned long a1 __asm__("a1") = static_cast<unsigned long>(detail);
    register unsigned long a2 __asm__("a2") = static_cast<unsigned long>(abi::kPanicMagic);
    register unsigned long a3 __asm__("a3") = static_cast<unsigned long>(detail >> 32);
    __asm__ volatile("ebreak" ::"r"(a0), "r"(a1), "r"(a2), "r"(a3));
    __builtin_unreachable();
}

}  // namespace weft::mailbox
