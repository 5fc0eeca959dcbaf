// The start of a standalone image (weft_firmware_image in CMake): the image's
// weft_image_main runs on core 0 in place of the boot firmware, the other
// cores wait, and its return value ends the machine through the test device
// (0: pass). A fault ends it too, with code 255, after printing where.
#include "hal/test_device.h"
#include "rt/console.h"

extern "C" int weft_image_main();

// Called through a pointer the optimiser cannot see through, so the image's
// entry stays a function of its own: LTO would otherwise inline it into
// weft_boot_main (attributes on this declaration do not reach its definition
// in another file), and GDB's `break weft_image_main` would find nothing.
static int (*volatile const image_entry)() = weft_image_main;

extern "C" [[noreturn]] void weft_boot_main(unsigned long hart) {
    if (hart == 0) weft::test_device::exit(image_entry());
    for (;;) __asm__ volatile("wfi");
}

extern "C" [[noreturn]] void weft_on_trap(unsigned long mcause, unsigned long mepc, unsigned long mtval, unsigned long,
                                          unsigned long, unsigned long, unsigned long ra) {
    weft::console::printf("image: FAULT mcause=%lu mepc=0x%lx mtval=0x%lx ra=0x%lx\n", mcause, mepc, mtval, ra);
    weft::test_device::exit(255);
}
