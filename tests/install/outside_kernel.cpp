// A kernel of the outside project's own, built by weft_add_kernel against the
// installed SDK: it sums 1..n with the NoC's help (it writes the sum to DRAM
// and reads it back through a NoC read, so the HAL and runtime are linked
// and used) and returns the sum, which `weft launch` reports.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/board_layout.h"

struct SumArgs {
    uint32_t n;
    uint32_t pad;
    uint64_t scratch;  // 8 bytes of DRAM
};
static_assert(weft::abi::kIsKernelArgs<SumArgs>);

extern "C" int kernel_main(weft::KernelArgs a) {
    const auto& args = a.as<SumArgs>();
    uint32_t sum = 0;
    for (uint32_t i = 1; i <= args.n; ++i) sum += i;
    volatile uint32_t here = sum, back = 0;
    weft::noc::async_write(reinterpret_cast<uintptr_t>(&here), args.scratch, 4);
    weft::noc::async_read(args.scratch, reinterpret_cast<uintptr_t>(&back), 4);
    weft::noc::barrier();
    return static_cast<int>(back);
}

WEFT_KERNEL_ARG_NAMES(SumArgs, "n:u32 pad:u32 scratch:u64");
