// Faults on purpose, to show how a fault is reported.
// Arguments: test_abi::FaultArgs.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "test_kernel_args.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    switch (a.as<test_abi::FaultArgs>().kind) {
        case 0: {
            volatile uintptr_t unmapped = 0x10;  // volatile: keep the compiler from proving it
            return *reinterpret_cast<volatile int*>(unmapped);
        }
        case 1: __asm__ volatile(".word 0"); return 1;
        case 2:
            noc::async_write(0x81000000, 0x7000000000ull, 64);
            noc::barrier();
            return 2;
    }
    return 3;
}
