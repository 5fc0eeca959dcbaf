// Waits until a semaphore reaches a value, then checks the first check_len
// bytes of the buffer against the shared test pattern. Returns the number of
// wrong words (0 = all intact). A guest loop is slow under emulation and
// steals host cores from the chips still moving data, so large buffers are
// better checked by the host (check_len 0).
// Arguments: abi::RecvCheckArgs.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/abi/pattern.h"
#include "weft/abi/platform_kernels.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::RecvCheckArgs>();
    const uint32_t len = args.check_len, seed = args.seed;
    noc::semaphore_wait(args.sem, args.value);
    const volatile uint32_t* words = reinterpret_cast<const volatile uint32_t*>(args.buf);
    int wrong = 0;
    for (uint32_t i = 0; i < len / 4; ++i)
        if (words[i] != abi::pattern_word(seed, i)) ++wrong;
    return wrong;
}
