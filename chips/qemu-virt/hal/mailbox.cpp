#include "hal/mailbox.h"

#include "rt/csr.h"
#include "weft/abi/control_block.h"
#include "weft/abi/fault.h"
#include "weft/board_layout.h"

namespace weft::mailbox {

abi::ControlProtocol& control() { return *reinterpret_cast<abi::ChipControlBlock*>(WEFT_CONTROL_BLOCK); }
uint32_t core_id() { return static_cast<uint32_t>(rt::hart_id()); }
void panic(int32_t code, uint64_t detail) {
    // The boot firmware's trap handler recognises this breakpoint by a2.
    register int64_t a0 __asm__("a0") = code;
    register uint64_t a1 __asm__("a1") = detail;
    register uint64_t a2 __asm__("a2") = abi::kPanicMagic;
    __asm__ volatile("ebreak" ::"r"(a0), "r"(a1), "r"(a2));
    __builtin_unreachable();
}

}  // namespace weft::mailbox
