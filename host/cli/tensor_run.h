// weft run all_gather and sendrecv with a tensor layout (--layout): the
// tensor ops of host/tensor over the fabric, each chip's tensor from random
// data, every element checked on every chip.
#pragma once
#include <stdint.h>

#include <array>
#include <string>

#include "ccl/runner.h"
#include "driver/cluster.h"
#include "weft/abi/tensor.h"

namespace weft::cli {

struct TensorRunArgs {
    std::string layout;            // row | tile; "" for the flat vector ops
    std::string memory = "interleaved", out_memory;  // interleaved | height | width | block
    std::string shard_grid = "2x1";                  // XxY worker cores
    std::string mesh_axis;         // rows | cols: one op per row or column of a 2D mesh at once
};

// Whether any tensor option was given (then --layout must be too).
bool tensor_asked(const TensorRunArgs& t);
// What --layout and --shape say of the tensor, refused (UsageError) before any cluster starts.
void check_tensor(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype);
// Runs it and prints what happened; returns the exit code. Throws UsageError
// for options that do not fit each other or the cluster. Over the fabric by
// its own kernel; with the options' transport "edm", through the flat
// all-gather (tensor/tensor_flat.h).
int run_tensor_all_gather(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, uint32_t dim,
                          abi::DataType dtype, const ccl::RunnerOptions& options, Cluster& cluster);

// weft run sendrecv --layout: every chip's tensor to the next chip round the
// cluster's ring at once (the flat sendrecv's shift), resharded in flight
// into --out-memory, checked on every chip: over the fabric by its kernel, or
// with the options' transport "edm" through the flat sendrecv.
int run_tensor_send_recv(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype,
                         const ccl::RunnerOptions& options, Cluster& cluster);

// weft run reduce_scatter --layout: every chip's tensor (--shape, in
// --memory) reduced and cut along --dim, chip k left with part k (in
// --out-memory), through the flat reduce-scatter over the options'
// transport (tensor/tensor_flat.h), checked against the host reference.
// With --mesh-axis, every row (or column) of the mesh its own, at once.
int run_tensor_reduce_scatter(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, uint32_t dim,
                              abi::DataType dtype, abi::MathOp redop, const std::string& algo,
                              const ccl::RunnerOptions& options, Cluster& cluster);
// weft run all_reduce --layout: every chip's tensor reduced into every chip's
// copy in place, through the flat all-reduce (`algo`) over the options'
// transport (tensor/tensor_flat.h), checked against the host reference.
// With --mesh-axis, every row (or column) of the mesh its own, at once.
int run_tensor_all_reduce(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype,
                          abi::MathOp redop, const std::string& algo, const ccl::RunnerOptions& options,
                          Cluster& cluster);

}  // namespace weft::cli
