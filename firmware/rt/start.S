// Entry of the resident boot firmware. QEMU's reset vector starts every hart
// here at once with a0 = mhartid, a1 = DTB address.
#include "rt/asm.h"
#include "weft/board_layout.h"

    .section .text.start, "ax"
    .option norvc
    .globl _start
_start:
    csrw mie, zero
    csrwi mstatus, 0
    la t0, weft_trap_entry
    csrw mtvec, t0
    li t0, WEFT_NUM_CORES
    bgeu a0, t0, park
    // Each hart's stack is the top of its own L1.
    la t1, weft_stack_tops
    slli t2, a0, WEFT_REG_SHIFT
    add t1, t1, t2
    WEFT_LOAD_REG sp, 0(t1)
    call weft_boot_main
park:
    wfi
    j park
