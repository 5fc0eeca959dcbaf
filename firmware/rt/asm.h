// What assembly needs to know of the register width (RV32 or RV64): the one
// place the runtime's .S files differ between them.
#pragma once

#if __riscv_xlen == 64
#define WEFT_LOAD_REG ld
#define WEFT_REG_SHIFT 3 /* log2 of a register's bytes */
#elif __riscv_xlen == 32
#define WEFT_LOAD_REG lw
#define WEFT_REG_SHIFT 2
#else
#error "weft's runtime supports RV32 and RV64"
#endif
