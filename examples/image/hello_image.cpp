// A first standalone image: the whole chip runs this, no boot firmware, no
// host. It fills a buffer in DRAM with the exchange pattern, checks it and
// ends the run with the number of wrong words as the exit code (0: pass).
//   scripts/flash-and-run build/firmware/qemu-virt/images/hello_image.elf
#include <inttypes.h>  // PRIu32: uint32_t is unsigned long on RV32, unsigned int on RV64
#include "exchange.h"
#include "rt/console.h"
#include "weft/board_layout.h"

extern "C" int weft_image_main() {
    constexpr uint32_t kWords = 1024;
    auto* buffer = reinterpret_cast<uint32_t*>(WEFT_DRAM_BASE);
    example::fill(buffer, kWords, 3);
    const uint32_t wrong = example::mismatches(buffer, kWords, 3);
    weft::console::printf("hello_image: chip %s, %u cores; %" PRIu32 " of %" PRIu32 " words wrong\n", WEFT_CHIP_NAME,
                          WEFT_NUM_CORES, wrong, kWords);
    return static_cast<int>(wrong);
}
