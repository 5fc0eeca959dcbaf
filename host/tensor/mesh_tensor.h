// A tensor over a cluster's one 2D mesh of chips, seen as one logical
// tensor: each chip holds a part in its DRAM banks, and the parts stay
// there from one op to the next (a TensorSpace holds them) until the mesh
// tensor is dropped. How the parts differ along each axis of the mesh is its
// placement there, as PyTorch's DTensor has it: cut along a dimension
// (shard), the same on every chip (replicate), or partial values whose
// element-wise reduction is the whole (partial). An op along an axis runs in
// every row (or column) at once, through the flat collectives, and changes
// that axis's placement: all-gather shard -> replicate, reduce-scatter
// partial -> shard, all-reduce partial -> replicate.
#pragma once
#include <stdint.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ccl/runner.h"
#include "driver/cluster.h"
#include "tensor/tensor_ops.h"
#include "tensor/tensor_space.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

struct MeshPlacement {
    enum Kind : uint8_t { kReplicate, kShard, kPartial };
    Kind kind = kReplicate;
    uint32_t dim = 0;                // kShard: the dimension cut
    abi::MathOp op = abi::kMathSum;  // kPartial: how the parts combine

    static MeshPlacement replicate() { return {}; }
    static MeshPlacement shard(uint32_t dim) { return {kShard, dim, abi::kMathSum}; }
    static MeshPlacement partial(abi::MathOp op = abi::kMathSum) { return {kPartial, 0, op}; }
};
// "replicate", "shard(2)", "partial(sum)".
std::string describe(const MeshPlacement& p);

// What mesh tensors' ops run on: the cluster's mesh, the space their parts
// take, and how the ops run. Mesh tensors hold it; closed(), their ops
// throw.
class Mesh {
public:
    // Throws weft::Error for a cluster that is not one 2D mesh or torus.
    // `from`: the kept tensors' space starts that far into each DRAM bank.
    Mesh(Cluster& cluster, ccl::RunnerOptions options, uint64_t from = 0);
    static std::shared_ptr<Mesh> over(Cluster& cluster, ccl::RunnerOptions options, uint64_t from = 0) {
        return std::make_shared<Mesh>(cluster, std::move(options), from);
    }

    // The cluster; throws weft::Error once closed.
    Cluster& cluster() const;
    // The chips of each row (west to east) or each column (north to south).
    const std::vector<std::vector<uint32_t>>& groups(MeshAxis axis) const;
    // The chip at row y, column x.
    uint32_t chip_at(uint32_t y, uint32_t x) const { return rows_.at(y).at(x); }
    uint32_t rows() const { return uint32_t(rows_.size()); }
    uint32_t cols() const { return uint32_t(rows_.at(0).size()); }
    TensorSpace& space() { return space_; }
    const ccl::RunnerOptions& options() const { return options_; }
    std::chrono::milliseconds timeout{60000};
    // The cluster goes away: ops on the mesh's tensors refuse from now on.
    void close() { cluster_ = nullptr; }
    bool closed() const { return cluster_ == nullptr; }

private:
    Cluster* cluster_;
    ccl::RunnerOptions options_;
    std::vector<std::vector<uint32_t>> rows_, columns_;
    TensorSpace space_;
};

class MeshTensor {
public:
    // The logical tensor `whole` (shape, dtype and page layout; `data` its
    // elements row-major) cut by the placements (partial refused: the host
    // has the whole) and each chip's part written to it. `by_row`: how parts
    // differ from one row of the mesh to the next; `by_col`: from one column
    // to the next. Throws weft::Error for a cut that does not divide the
    // dimension, both cutting one dimension, or parts that do not fit.
    static MeshTensor from_host(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& whole, const void* data,
                                MeshPlacement by_row, MeshPlacement by_col);
    // Each chip's part given (`parts[chip]`, row-major elements of `part`'s
    // shape), as the placements say they relate.
    static MeshTensor from_parts(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& part,
                                 const std::vector<const void*>& parts, MeshPlacement by_row, MeshPlacement by_col);
    MeshTensor(MeshTensor&& other) noexcept;
    MeshTensor& operator=(MeshTensor&& other) noexcept;
    MeshTensor(const MeshTensor&) = delete;
    MeshTensor& operator=(const MeshTensor&) = delete;
    ~MeshTensor();

    // Each chip's part, where it lies on every chip.
    const abi::TensorAt& at() const { return at_; }
    // The logical tensor's spec: the part's shape times the chips of each
    // axis it is cut over.
    abi::TensorSpec whole() const;
    const MeshPlacement& by_row() const { return by_row_; }
    const MeshPlacement& by_col() const { return by_col_; }

    // Chip `chip`'s part, row-major.
    std::vector<uint8_t> part(uint32_t chip) const;
    // The logical tensor, row-major: the parts put back together. Throws
    // weft::Error while an axis is partial (reduce it first).
    std::vector<uint8_t> to_host() const;

    // Along `axis` (each row, or each column, of chips its own group, all at
    // once): the axis's shard gathered (-> replicate); its partials reduced
    // and cut along `dim` (-> shard(dim)); its partials reduced (->
    // replicate). Each returns a new mesh tensor and leaves this one as it
    // was. Throws weft::Error for the wrong placement, TimeoutError or
    // FaultError if the op fails (the cluster stays usable).
    MeshTensor all_gather(MeshAxis axis) const;
    MeshTensor reduce_scatter(MeshAxis axis, uint32_t dim) const;
    MeshTensor all_reduce(MeshAxis axis) const;

private:
    MeshTensor(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& part, MeshPlacement by_row, MeshPlacement by_col);
    // The placement an op along `axis` works on: the one across its groups' chips.
    const MeshPlacement& along(MeshAxis axis) const { return axis == MeshAxis::kRows ? by_col_ : by_row_; }
    // along(axis), if partial; else throws naming `op`.
    const MeshPlacement& partial_along(MeshAxis axis, const char* op) const;
    // A new mesh tensor of `part`s, placed as this one but `p` along `axis`.
    MeshTensor with(MeshAxis axis, const abi::TensorSpec& part, MeshPlacement p) const;
    void release();

    std::shared_ptr<Mesh> mesh_;
    abi::TensorAt at_{};
    MeshPlacement by_row_, by_col_;
};

}  // namespace weft::tensor
