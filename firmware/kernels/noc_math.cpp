// Exercises the NoC and math engines of one chip: copies src to dst with a
// fused write+increment, multicasts it, reduces two buffers, and signals done.
// args: src(2), dst(2), len, sem(2), mcast_l1_offset(2), mcast_mask,
//       op, dtype, a(2), b(2), out(2), count
#include "hal/math.h"
#include "hal/noc.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const uint64_t src = a.u64(0), dst = a.u64(2);
    const uint32_t len = a.u32(4);
    const uint64_t sem = a.u64(5);
    noc::async_write_inc(src, dst, len, sem, 1);
    noc::semaphore_inc(sem, 2);
    if (a.u32(9)) noc::async_multicast(src, a.u64(7), len, a.u32(9));
    noc::barrier();
    math::eltwise(static_cast<abi::MathOp>(a.u32(10)), static_cast<abi::DataType>(a.u32(11)), a.u64(12), a.u64(14),
                  a.u64(16), a.u32(18));
    math::barrier();
    noc::semaphore_wait(sem, 3);
    return 0;
}
