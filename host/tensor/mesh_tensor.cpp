#include "tensor/mesh_tensor.h"

#include <string>
#include <utility>

#include "common/error.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"

namespace weft::tensor {
namespace {

const char* axis_name(MeshAxis axis) { return axis == MeshAxis::kRows ? "rows" : "columns"; }

// The kernels run on the last worker: the parts live in DRAM, so it holds none.
uint32_t kernel_core(const Cluster& cluster) { return cluster.board().cores_with_role(CoreRole::kWorker).back(); }

// Throws unless the placements cut dimensions that exist, divide them among
// the mesh's rows (`by_row`) and columns (`by_col`), and cut different ones.
void check_cuts(const abi::TensorSpec& whole, const MeshPlacement& by_row, uint32_t rows, const MeshPlacement& by_col,
                uint32_t cols) {
    const auto check = [&](const MeshPlacement& p, uint32_t chips, const char* across) {
        if (p.kind != MeshPlacement::kShard) return;
        if (p.dim >= abi::kTensorDims)
            throw Error("a mesh tensor cut across the mesh's " + std::string(across) + " along dimension " +
                        std::to_string(p.dim) + " of a 4-D tensor (0-3)");
        if (whole.shape[p.dim] % chips)
            throw Error("a mesh tensor's dimension " + std::to_string(p.dim) + " of " +
                        std::to_string(whole.shape[p.dim]) + " does not cut evenly across the mesh's " +
                        std::to_string(chips) + " " + across);
    };
    check(by_row, rows, "rows");
    check(by_col, cols, "columns");
    if (by_row.kind == MeshPlacement::kShard && by_col.kind == MeshPlacement::kShard && by_row.dim == by_col.dim)
        throw Error("a mesh tensor cuts dimension " + std::to_string(by_row.dim) +
                    " across both the mesh's rows and its columns: cut two different dimensions");
}

// `parts` (row-major, each shaped `part`) joined as placement `p` says: a
// shard concatenated along its dimension, a replica taken once.
std::vector<uint8_t> join(const abi::TensorSpec& part, const MeshPlacement& p,
                          const std::vector<std::vector<uint8_t>>& parts) {
    return p.kind == MeshPlacement::kShard ? concatenate(part, p.dim, parts) : parts.at(0);
}

// What chip k of `chips` along an axis placed `p` holds of `t` (row-major
// `data`): its cut of a shard, all of a replica.
std::vector<uint8_t> piece(const abi::TensorSpec& t, const MeshPlacement& p, uint32_t chips, uint32_t k,
                           const void* data) {
    if (p.kind == MeshPlacement::kShard) return cut(t, p.dim, chips, k, data);
    const auto* bytes = static_cast<const uint8_t*>(data);
    return std::vector<uint8_t>(bytes, bytes + host_bytes(t));
}

abi::TensorSpec times(abi::TensorSpec t, const MeshPlacement& p, uint32_t chips) {
    if (p.kind == MeshPlacement::kShard) t.shape[p.dim] *= chips;
    return t;
}

}  // namespace

std::string describe(const MeshPlacement& p) {
    switch (p.kind) {
        case MeshPlacement::kShard: return "shard(" + std::to_string(p.dim) + ")";
        case MeshPlacement::kPartial: return "partial(" + ccl::redop_name(p.op) + ")";
        default: return "replicate";
    }
}

Mesh::Mesh(Cluster& cluster, ccl::RunnerOptions options, uint64_t from)
    : cluster_(&cluster),
      options_(std::move(options)),
      rows_(mesh_axis_groups(cluster.topology(), MeshAxis::kRows)),
      columns_(mesh_axis_groups(cluster.topology(), MeshAxis::kColumns)),
      space_(cluster.board(), from) {}

Cluster& Mesh::cluster() const {
    if (!cluster_) throw Error("the mesh tensor's cluster is closed");
    return *cluster_;
}

const std::vector<std::vector<uint32_t>>& Mesh::groups(MeshAxis axis) const {
    return axis == MeshAxis::kRows ? rows_ : columns_;
}

MeshTensor::MeshTensor(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& part, MeshPlacement by_row,
                       MeshPlacement by_col)
    : mesh_(std::move(mesh)), at_(mesh_->space().take(part)), by_row_(by_row), by_col_(by_col) {}

MeshTensor MeshTensor::from_host(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& whole, const void* data,
                                 MeshPlacement by_row, MeshPlacement by_col) {
    if (by_row.kind == MeshPlacement::kPartial || by_col.kind == MeshPlacement::kPartial)
        throw Error("a mesh tensor made from one host tensor is cut or replicated, not partial: give each "
                    "chip's partial values (from_parts)");
    const uint32_t rows = mesh->rows(), cols = mesh->cols();
    check_cuts(whole, by_row, rows, by_col, cols);
    abi::TensorSpec across = whole;  // what a row of the mesh holds
    if (by_row.kind == MeshPlacement::kShard) across.shape[by_row.dim] /= rows;
    abi::TensorSpec part = across;
    if (by_col.kind == MeshPlacement::kShard) part.shape[by_col.dim] /= cols;
    std::vector<std::vector<uint8_t>> bytes(size_t(rows) * cols);
    std::vector<const void*> parts(bytes.size());
    for (uint32_t y = 0; y < rows; ++y) {
        const std::vector<uint8_t> row = piece(whole, by_row, rows, y, data);
        for (uint32_t x = 0; x < cols; ++x) {
            const uint32_t chip = mesh->chip_at(y, x);
            bytes.at(chip) = piece(across, by_col, cols, x, row.data());
            parts[chip] = bytes[chip].data();
        }
    }
    return from_parts(std::move(mesh), part, parts, by_row, by_col);
}

MeshTensor MeshTensor::from_parts(std::shared_ptr<Mesh> mesh, const abi::TensorSpec& part,
                                  const std::vector<const void*>& parts, MeshPlacement by_row, MeshPlacement by_col) {
    Cluster& cluster = mesh->cluster();
    if (parts.size() != cluster.size())
        throw Error("a mesh tensor takes a part a chip: " + std::to_string(cluster.size()) + ", not " +
                    std::to_string(parts.size()));
    check_cuts(times(times(part, by_row, mesh->rows()), by_col, mesh->cols()), by_row, mesh->rows(), by_col,
               mesh->cols());
    MeshTensor t(std::move(mesh), part, by_row, by_col);
    for (uint32_t chip = 0; chip < cluster.size(); ++chip) write_tensor(cluster.chip(chip), t.at_, parts[chip]);
    return t;
}

MeshTensor::MeshTensor(MeshTensor&& other) noexcept
    : mesh_(std::move(other.mesh_)), at_(other.at_), by_row_(other.by_row_), by_col_(other.by_col_) {}

MeshTensor& MeshTensor::operator=(MeshTensor&& other) noexcept {
    if (this != &other) {
        release();
        mesh_ = std::move(other.mesh_);
        at_ = other.at_;
        by_row_ = other.by_row_;
        by_col_ = other.by_col_;
    }
    return *this;
}

MeshTensor::~MeshTensor() { release(); }

void MeshTensor::release() {
    if (mesh_) mesh_->space().give_back(at_);
    mesh_.reset();
}

abi::TensorSpec MeshTensor::whole() const {
    return times(times(at_.spec, by_row_, mesh_->rows()), by_col_, mesh_->cols());
}

std::vector<uint8_t> MeshTensor::part(uint32_t chip) const {
    Cluster& cluster = mesh_->cluster();
    if (chip >= cluster.size()) throw Error("chip " + std::to_string(chip) + " is not in the mesh");
    return read_tensor(cluster.chip(chip), at_);
}

std::vector<uint8_t> MeshTensor::to_host() const {
    if (by_row_.kind == MeshPlacement::kPartial || by_col_.kind == MeshPlacement::kPartial)
        throw Error("a mesh tensor partial across the mesh's " +
                    std::string(by_row_.kind == MeshPlacement::kPartial ? "rows" : "columns") +
                    " has no whole until its parts are reduced: all_reduce or reduce_scatter along that axis first");
    std::vector<std::vector<uint8_t>> rows;
    for (uint32_t y = 0; y < mesh_->rows(); ++y) {
        std::vector<std::vector<uint8_t>> row;
        for (uint32_t x = 0; x < (by_col_.kind == MeshPlacement::kShard ? mesh_->cols() : 1); ++x)
            row.push_back(part(mesh_->chip_at(y, x)));
        rows.push_back(join(at_.spec, by_col_, row));
        if (by_row_.kind != MeshPlacement::kShard) break;
    }
    return join(times(at_.spec, by_col_, mesh_->cols()), by_row_, rows);
}

MeshTensor MeshTensor::with(MeshAxis axis, const abi::TensorSpec& part, MeshPlacement p) const {
    return MeshTensor(mesh_, part, axis == MeshAxis::kRows ? by_row_ : p, axis == MeshAxis::kRows ? p : by_col_);
}

MeshTensor MeshTensor::all_gather(MeshAxis axis) const {
    const MeshPlacement& p = along(axis);
    if (p.kind != MeshPlacement::kShard)
        throw Error(std::string("all_gather along the mesh's ") + axis_name(axis) +
                    " gathers a shard, but the tensor is " + describe(p) + " there");
    Cluster& cluster = mesh_->cluster();
    const auto& groups = mesh_->groups(axis);
    MeshTensor out =
        with(axis, gathered(at_.spec, p.dim, uint32_t(groups[0].size()), at_.spec), MeshPlacement::replicate());
    const GroupRunners run = runners_over(cluster, groups, mesh_->options());
    tensor::all_gather(cluster, run.runners, at_, out.at_, p.dim, kernel_core(cluster), mesh_->timeout, "auto",
                       mesh_->space().taken());
    return out;
}

MeshTensor MeshTensor::reduce_scatter(MeshAxis axis, uint32_t dim) const {
    const MeshPlacement& p = partial_along(axis, "reduce_scatter");
    const MeshPlacement& other = axis == MeshAxis::kRows ? by_row_ : by_col_;
    if (other.kind == MeshPlacement::kShard && other.dim == dim)
        throw Error("reduce_scatter along the mesh's " + std::string(axis_name(axis)) + " cuts dimension " +
                    std::to_string(dim) + ", which the other axis already cuts: cut another");
    Cluster& cluster = mesh_->cluster();
    const auto& groups = mesh_->groups(axis);
    const auto n = uint32_t(groups[0].size());
    if (dim >= abi::kTensorDims || at_.spec.shape[dim] % n)
        throw Error("reduce_scatter along the mesh's " + std::string(axis_name(axis)) + ": dimension " +
                    std::to_string(dim) + " of " + describe(at_.spec) + " does not cut into " + std::to_string(n) +
                    " equal parts");
    abi::TensorSpec part = at_.spec;
    part.shape[dim] /= n;
    MeshTensor out = with(axis, part, MeshPlacement::shard(dim));
    const GroupRunners run = runners_over(cluster, groups, mesh_->options());
    tensor::reduce_scatter(cluster, run.runners, at_, out.at_, dim, p.op, kernel_core(cluster), mesh_->timeout, "auto",
                           mesh_->space().taken());
    return out;
}

MeshTensor MeshTensor::all_reduce(MeshAxis axis) const {
    const MeshPlacement& p = partial_along(axis, "all_reduce");
    Cluster& cluster = mesh_->cluster();
    MeshTensor out = with(axis, at_.spec, MeshPlacement::replicate());
    const uint32_t core = kernel_core(cluster);
    std::vector<Launch> copies;
    for (uint32_t chip = 0; chip < cluster.size(); ++chip)
        copies.push_back(reshard_launch(cluster.board(), chip, core, at_, out.at_));
    cluster.run(copies, mesh_->timeout);
    const GroupRunners run = runners_over(cluster, mesh_->groups(axis), mesh_->options());
    tensor::all_reduce(cluster, run.runners, out.at_, p.op, core, mesh_->timeout, "auto", mesh_->space().taken());
    return out;
}

const MeshPlacement& MeshTensor::partial_along(MeshAxis axis, const char* op) const {
    const MeshPlacement& p = along(axis);
    if (p.kind != MeshPlacement::kPartial)
        throw Error(std::string(op) + " along the mesh's " + axis_name(axis) +
                    " reduces partial values, but the tensor is " + describe(p) + " there");
    return p;
}

}  // namespace weft::tensor
