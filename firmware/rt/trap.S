// Machine trap vector. The firmware never enables interrupts (WFI wakes on
// mie without mstatus.MIE), so every trap is an exception from a kernel or a
// panic: the handler gets a fresh stack and never returns to the faulting code.
#include "rt/asm.h"

    .section .text.trap, "ax"
    .balign 4
    .globl weft_trap_entry
weft_trap_entry:
    // a0..a2 still hold the panic code, detail and magic when this is a panic
    // (a3 the detail's high half on RV32).
    mv a7, a3
    mv a3, a0
    mv a4, a1
    mv a5, a2
    mv a6, ra  // a panic's caller (a kernel calls mailbox::panic)
    csrr a0, mhartid
    la t1, weft_stack_tops
    slli t2, a0, WEFT_REG_SHIFT
    add t1, t1, t2
    WEFT_LOAD_REG sp, 0(t1)
    csrr a0, mcause
    csrr a1, mepc
    csrr a2, mtval
    call weft_on_trap
1:  wfi
    j 1b
