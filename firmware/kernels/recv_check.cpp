// Waits until a semaphore reaches a value, then checks the first check_len
// bytes of the buffer against the shared test pattern. Returns the number of
// wrong words (0 = all intact). A guest loop is slow under emulation and
// steals host cores from the chips still moving data, so large buffers are
// better checked by the host (check_len 0).
// args: sem(2), value, buf(2), check_len, seed
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/abi/pattern.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const uint64_t sem = a.u64(0);
    const uint32_t value = a.u32(2);
    const uint64_t buf = a.u64(3);
    const uint32_t len = a.u32(5), seed = a.u32(6);
    noc::semaphore_wait(sem, value);
    const volatile uint32_t* words = reinterpret_cast<const volatile uint32_t*>(buf);
    int wrong = 0;
    for (uint32_t i = 0; i < len / 4; ++i)
        if (words[i] != abi::pattern_word(seed, i)) ++wrong;
    return wrong;
}
