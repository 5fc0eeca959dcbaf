/* The resident boot firmware, at the board's boot-firmware window. */
#include "weft/board_layout.h"

OUTPUT_ARCH(riscv)
ENTRY(_start)
MEMORY { boot (rwx) : ORIGIN = WEFT_BOOT_BASE, LENGTH = WEFT_BOOT_SIZE }
#define IMAGE_REGION boot
#include "sections.ld.inc"
