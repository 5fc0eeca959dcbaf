// Exercises the NoC and math engines of one chip: copies src to dst with a
// fused write+increment, multicasts it, reduces two buffers, and signals done.
// Arguments: test_abi::NocMathArgs.
#include "hal/math.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "test_kernel_args.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<test_abi::NocMathArgs>();
    noc::async_write_inc(args.src, args.dst, args.len, args.sem, 1);
    noc::semaphore_inc(args.sem, 2);
    if (args.mcast_mask) noc::async_multicast(args.src, args.mcast_l1_offset, args.len, args.mcast_mask);
    noc::barrier();
    math::eltwise(static_cast<abi::MathOp>(args.op), static_cast<abi::DataType>(args.dtype), args.a, args.b, args.out,
                  args.count);
    math::barrier();
    noc::semaphore_wait(args.sem, 3);
    return 0;
}
