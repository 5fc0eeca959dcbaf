// Entry of every kernel image. The boot firmware calls it as a function with
// the runtime arguments the host wrote; .bss was zeroed and pointers relocated
// by the host loader, so only the constructors are left to run.
#include <stdint.h>

#include "kernels/kernel.h"

extern "C" {
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();

__attribute__((section(".text.start"), used)) int weft_kernel_start(const uint32_t* args, uint32_t count) {
    for (auto fn = __init_array_start; fn != __init_array_end; ++fn) (*fn)();
    return kernel_main(weft::KernelArgs{args, count});
}
}
