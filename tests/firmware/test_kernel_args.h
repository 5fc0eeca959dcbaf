// Arguments of the test-only kernels (tests/firmware/kernels), shared by the
// kernels and the system tests that launch them (tests/system/test_kernels.h).
#pragma once
#include <stdint.h>

#include "weft/abi/kernel_args.h"

namespace weft::test_abi {

// fault: kind 0 load from unmapped memory, 1 illegal instruction, 2 NoC
// command outside the chip.
struct FaultArgs {
    uint32_t kind;
};
static_assert(sizeof(FaultArgs) == 4 && abi::kIsKernelArgs<FaultArgs>, "FaultArgs layout");

// wait_sem: wait for *sem == value.
struct WaitSemArgs {
    uint64_t sem;
    uint32_t value;
    uint32_t pad;
};
static_assert(sizeof(WaitSemArgs) == 16 && abi::kIsKernelArgs<WaitSemArgs>, "WaitSemArgs layout");

// noc_math: write+inc src->dst, inc sem by 2, multicast src to mcast_l1_offset
// of the cores in mcast_mask, then out = a op b over count elements; waits
// for sem == 3.
struct NocMathArgs {
    uint64_t src, dst;
    uint64_t sem;
    uint64_t mcast_l1_offset;
    uint64_t a, b, out;
    uint32_t len;
    uint32_t mcast_mask;
    uint32_t op, dtype;  // abi::MathOp, abi::DataType
    uint32_t count;
    uint32_t pad;
};
static_assert(sizeof(NocMathArgs) == 80 && abi::kIsKernelArgs<NocMathArgs>, "NocMathArgs layout");

}  // namespace weft::test_abi
