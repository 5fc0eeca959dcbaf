// Waits for a semaphore to reach a value. With nobody to signal it, this is
// the kernel that never finishes: the host's deadline must catch it.
// args: sem(2), value
#include "hal/noc.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    noc::semaphore_wait(a.u64(0), a.u32(2));
    return 0;
}
