// Tensor ops in any layout through the flat collectives, so over any
// transport (the EDM too): all-reduce, reduce-scatter and all-gather. On each
// chip the tensor_reshard kernel moves the tensor's pages into one run of
// DRAM (the same tensor interleaved over a single bank: its pages in order,
// padding included), the collective runner reduces that run in place over
// whatever transport it uses, and the kernel moves the pages back. An
// element-wise op cares only that an element sits in the same place on every
// chip, and the padding is zero on all of them.
#pragma once
#include <stdint.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ccl/runner.h"
#include "driver/cluster.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

// A runner (a communicator) a group of chips, as the ops over several
// groups at once take them: `runners`, and those made here, `owned`.
struct GroupRunners {
    std::vector<std::unique_ptr<ccl::CollectiveRunner>> owned;
    std::vector<ccl::CollectiveRunner*> runners;
};
GroupRunners runners_over(Machine& machine, const std::vector<std::vector<uint32_t>>& groups,
                          const ccl::RunnerOptions& options);

// The flat op a tensor op runs through: `op` of `bytes` of `dtype` by
// `algo`, a reduction by `redop`. The tensor calls add where its vector
// lies; weft run checks against its reference.
ccl::OpRequest flat_op(ccl::Collective op, abi::DataType dtype, const std::string& algo, uint64_t bytes,
                       abi::MathOp redop = abi::kMathSum);

// The tensor at `at` on every chip of `runner` (the same place on each)
// reduced element-wise by `op` into every chip's copy, in place. Its pages
// run through DRAM bank 0, past the tensor's own share of it (row-major
// pages cut by width shards, which cannot line up in one run, go through
// shard by shard as they lie); the kernel runs on `core` of each chip (a
// worker holding no shard). `algo`: the flat all-reduce's algorithm (weft
// run's names, or auto). Throws weft::Error for a tensor the bank cannot
// hold twice, TimeoutError / FaultError if a step fails.
void all_reduce(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& at, abi::MathOp op, uint32_t core,
                std::chrono::milliseconds timeout, const std::string& algo = "auto");
// The same in several groups of chips at once, a runner each (a communicator
// a row, or a column, of a mesh: tensor::mesh_axis_groups), their flat ops
// started together. `keep`: tensors the op must leave alone (the flat op's
// buffers and the staging go round their DRAM), so they outlive it.
void all_reduce(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& at,
                abi::MathOp op, uint32_t core, std::chrono::milliseconds timeout, const std::string& algo = "auto",
                const std::vector<abi::TensorAt>& keep = {});

// Reduce-scatter of a tensor in any layout through the flat one: the tensor
// at `input` on every chip of `runner` reduced element-wise by `op` and cut
// into as many parts along shape[dim] as the runner has chips, part k into
// `output` on its k-th chip (the same place on each; `output`'s shape is the
// input's with shape[dim] divided by the chips, in any memory). On each chip
// the tensor_split kernel moves the input's parts into runs of their own,
// one after another in DRAM bank 0 past both tensors' share of it; the flat
// reduce-scatter reduces them in place as one vector whose blocks are the
// parts; the reshard kernel moves each chip's reduced part into `output`.
// Throws weft::Error for a part that does not cut out of the input page by
// page (check_reduce_scatter) or parts the bank cannot hold, TimeoutError /
// FaultError if a step fails.
void reduce_scatter(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& input,
                    const abi::TensorAt& output, uint32_t dim, abi::MathOp op, uint32_t core,
                    std::chrono::milliseconds timeout, const std::string& algo = "auto");
// The same in several groups of chips at once, a runner each (of one size),
// each group's part k going to its k-th chip; `keep` as all_reduce's.
void reduce_scatter(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& input,
                    const abi::TensorAt& output, uint32_t dim, abi::MathOp op, uint32_t core,
                    std::chrono::milliseconds timeout, const std::string& algo = "auto",
                    const std::vector<abi::TensorAt>& keep = {});

// All-gather of a tensor in any layout through the flat one, over any
// transport: each chip's part at `input` (the same place on each) is
// concatenated along shape[dim] with the others of its group into `output`
// (the part's shape with shape[dim] times the group's chips, in any memory),
// a runner a group, the groups at once. On each chip the reshard kernel
// moves the part into its rank's run in DRAM bank 0 (the runs one after
// another past both tensors); the flat all-gather fills every run in place;
// tensor_split, joining, moves the runs into `output`. Throws weft::Error
// for parts that do not land page by page in the whole (check_all_gather's
// rule), TimeoutError / FaultError if a step fails. `keep` as all_reduce's.
void all_gather(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& input,
                const abi::TensorAt& output, uint32_t dim, uint32_t core, std::chrono::milliseconds timeout,
                const std::string& algo = "auto", const std::vector<abi::TensorAt>& keep = {});

// Send/recv of a tensor in any layout through the flat one, over any
// transport: every chip's tensor at `input` to the next chip round the
// runner's ring (ring()), into `output` there (the same shape, dtype and
// page layout, in any memory). Each chip's tensor goes through two runs of
// DRAM bank 0, sent from one and received into the other. Throws
// weft::Error for tensors that do not move page for page
// (check_send_recv's rule), TimeoutError / FaultError if a step fails.
void send_recv(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& input, const abi::TensorAt& output,
               uint32_t core, std::chrono::milliseconds timeout, const std::string& algo = "auto");

}  // namespace weft::tensor
