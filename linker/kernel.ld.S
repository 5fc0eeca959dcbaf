/* Kernel images: linked at 0 and relocated by the host loader to the L1 of the
 * core they run on (--emit-relocs keeps what it needs). The loader checks that
 * the board's code-size bounds it. */
#include "weft/board_layout.h"

OUTPUT_ARCH(riscv)
ENTRY(weft_kernel_start)
MEMORY { l1 (rwx) : ORIGIN = 0, LENGTH = WEFT_CODE_SIZE }
#define IMAGE_REGION l1
#include "sections.ld.inc"
