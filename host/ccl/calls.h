// NCCL-style calls on the caller's own buffers: each names its buffers by
// their address in chip DRAM (the same address on every chip), sizes them in
// elements as NCCL does, launches the op and returns it running; the
// program overlaps its own work and ends the op with runner.wait(op), which
// throws weft::FaultError / weft::TimeoutError (with the hang report) if the
// op fails, leaving the cluster usable.
//
//   ccl::PendingOp op = ccl::all_reduce(runner, send, recv, n, abi::kF32, abi::kMathSum);
//   ... host work ...
//   runner.wait(op);
//
// send == recv runs in place (ccl::OpRequest::send says what that means for
// each op). A buffer outside DRAM, misaligned for its type or overlapping
// the other throws weft::Error naming it.
#pragma once
#include <stdint.h>

#include "ccl/runner.h"

namespace weft::ccl {

// count: elements of the whole vector.
PendingOp all_reduce(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                     abi::MathOp op);
// sendcount: elements each rank contributes; recv holds ranks x sendcount.
PendingOp all_gather(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t sendcount, abi::DataType dtype);
// recvcount: elements each rank ends with; send holds ranks x recvcount.
PendingOp reduce_scatter(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t recvcount,
                         abi::DataType dtype, abi::MathOp op);
PendingOp broadcast(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                    uint32_t root);
PendingOp reduce(CollectiveRunner& runner, uint64_t send, uint64_t recv, uint64_t count, abi::DataType dtype,
                 abi::MathOp op, uint32_t root);

}  // namespace weft::ccl
