// Waits for a semaphore to reach a value. With nobody to signal it, this is
// the kernel that never finishes: the host's deadline must catch it.
// Arguments: test_abi::WaitSemArgs.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "test_kernel_args.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<test_abi::WaitSemArgs>();
    noc::semaphore_wait(args.sem, args.value);
    return 0;
}
WEFT_KERNEL_ARG_NAMES(test_abi::WaitSemArgs, "sem:u64 value:u32 pad:u32");
