// All-reduce of a tensor in any layout through the flat all-reduce. On each
// chip the tensor_reshard kernel moves the tensor's pages into one run of
// DRAM (the same tensor interleaved over a single bank: its pages in order,
// padding included), the collective runner reduces that run in place over
// whatever transport it uses, and the kernel moves the pages back. An
// element-wise op cares only that an element sits in the same place on every
// chip, and the padding is zero on all of them.
#pragma once
#include <stdint.h>

#include <chrono>
#include <string>

#include "ccl/runner.h"
#include "driver/cluster.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

// `t`'s pages in order in one run of DRAM bank 0, from `offset` in it.
// Throws weft::Error if they do not fit the bank.
abi::TensorAt contiguous_at(const BoardInfo& board, abi::TensorSpec t, uint64_t offset);

// The tensor at `at` on every chip of `runner` (the same place on each)
// reduced element-wise by `op` into every chip's copy of it, in place. The
// pages run through DRAM at `staging`, which must not overlap `at`; the
// kernel runs on `core` of each chip (a worker holding no shard). Throws
// weft::Error for a layout whose pages cannot line up in one run (row-major
// pages cut by width shards), TimeoutError / FaultError if a step fails.
// `algo`: the flat all-reduce's algorithm (weft run's names, or auto).
void all_reduce(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& at, abi::MathOp op,
                const abi::TensorAt& staging, uint32_t core, std::chrono::milliseconds timeout,
                const std::string& algo = "auto");

}  // namespace weft::tensor
