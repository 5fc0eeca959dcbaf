#include "tensor/tensor_layout.h"

#include <cstring>

#include "common/error.h"

namespace weft::tensor {
namespace {

const char* memory_name(uint8_t m) {
    switch (m) {
        case abi::kInterleaved: return "interleaved";
        case abi::kHeightSharded: return "height-sharded";
        case abi::kWidthSharded: return "width-sharded";
        case abi::kBlockSharded: return "block-sharded";
        default: return "unknown memory";
    }
}

void check_shard_side(const abi::TensorSpec& t, const char* side, uint32_t elements) {
    if (elements == 0) throw Error(describe(t) + ": a shard needs at least one element of " + side);
    if (t.layout == abi::kTilePages && elements % abi::kTileSide)
        throw Error(describe(t) + ": shard " + side + " " + std::to_string(elements) +
                    " is not a multiple of 32, so its shards would cut tiles");
}

void check_shards(const abi::TensorSpec& t) {
    if (t.grid_x == 0 || t.grid_y == 0) throw Error(describe(t) + ": the core grid is empty");
    if (t.memory != abi::kWidthSharded) check_shard_side(t, "rows", t.shard_rows);
    if (t.memory != abi::kHeightSharded) check_shard_side(t, "columns", t.shard_cols);
    const uint64_t cores = uint64_t(t.grid_x) * t.grid_y;
    const uint64_t down = abi::shards_down(t), across = abi::shards_across(t);
    if (t.memory == abi::kBlockSharded ? down > t.grid_y || across > t.grid_x : down * across > cores)
        throw Error(describe(t) + ": it cuts into " + std::to_string(down) + " x " + std::to_string(across) +
                    " shards, more than the " + std::to_string(t.grid_x) + " x " + std::to_string(t.grid_y) +
                    " core grid holds; make the shards larger or the grid wider");
}

// The logical element at row r, column c of the padded 2-D view, or -1 for padding.
int64_t element_at(const abi::TensorSpec& t, uint64_t r, uint64_t c) {
    const uint32_t h = t.shape[2], w = t.shape[3];
    const uint64_t per_slice = t.layout == abi::kTilePages ? abi::tensor_round_up(h, abi::kTileSide) : h;
    const uint64_t slice = r / per_slice, row = r % per_slice;
    if (row >= h || c >= w) return -1;
    return int64_t((slice * h + row) * w + c);
}

// Calls f(element or -1, byte offset in the page) for every element of page p.
template <typename F>
void each_element(const abi::TensorSpec& t, uint64_t p, F f) {
    const uint32_t eb = abi::dtype_size(t.dtype);
    const uint64_t row = p / abi::page_grid_cols(t) * abi::page_rows(t);
    const uint64_t col = uint64_t(p % abi::page_grid_cols(t)) * abi::page_cols(t);
    for (uint32_t i = 0; i < abi::page_rows(t); ++i)
        for (uint32_t j = 0; j < abi::page_cols(t); ++j) {
            const uint32_t at = t.layout == abi::kTilePages ? abi::tile_index(i, j) : j;
            f(element_at(t, row + i, col + j), uint64_t(at) * eb);
        }
}

}  // namespace

std::string describe(const abi::TensorSpec& t) {
    std::string s = "tensor [";
    for (uint32_t d = 0; d < abi::kTensorDims; ++d) s += (d ? "," : "") + std::to_string(t.shape[d]);
    s += std::string("] ") + (t.layout == abi::kTilePages ? "tiles" : "row-major") + " " + memory_name(t.memory);
    return s;
}

void check_spec(const abi::TensorSpec& t) {
    if (abi::dtype_size(t.dtype) == 0) throw Error("tensor: unknown dtype " + std::to_string(t.dtype));
    if (t.layout > abi::kTilePages) throw Error("tensor: unknown layout " + std::to_string(t.layout));
    if (t.memory > abi::kBlockSharded) throw Error("tensor: unknown memory " + std::to_string(t.memory));
    for (uint32_t d = 0; d < abi::kTensorDims; ++d)
        if (t.shape[d] == 0) throw Error(describe(t) + ": dimension " + std::to_string(d) + " is 0");
    if (!abi::tensor_sharded(t)) {
        if (t.banks == 0) throw Error(describe(t) + ": interleaved over no banks");
        return;
    }
    check_shards(t);
}

abi::TensorSpec matrix(uint32_t rows, uint32_t cols, abi::DataType dtype, abi::TensorLayout layout) {
    abi::TensorSpec t{};
    t.shape[0] = t.shape[1] = 1;
    t.shape[2] = rows;
    t.shape[3] = cols;
    t.dtype = dtype;
    t.layout = layout;
    t.banks = 1;
    return t;
}

uint64_t elements(const abi::TensorSpec& t) {
    return uint64_t(t.shape[0]) * t.shape[1] * t.shape[2] * t.shape[3];
}

uint64_t host_bytes(const abi::TensorSpec& t) { return elements(t) * abi::dtype_size(t.dtype); }

UnitImages place(const abi::TensorSpec& t, const void* data) {
    check_spec(t);
    const uint32_t eb = abi::dtype_size(t.dtype);
    const auto* in = static_cast<const uint8_t*>(data);
    UnitImages units(abi::tensor_units(t), std::vector<uint8_t>(abi::tensor_unit_bytes(t), 0));
    for (uint64_t p = 0; p < abi::tensor_pages(t); ++p) {
        const abi::TensorPlace at = abi::tensor_page_place(t, p);
        uint8_t* page = units.at(at.unit).data() + at.offset;
        each_element(t, p, [&](int64_t e, uint64_t off) {
            if (e >= 0) std::memcpy(page + off, in + uint64_t(e) * eb, eb);
        });
    }
    return units;
}

std::vector<uint8_t> gather(const abi::TensorSpec& t, const UnitImages& units) {
    check_spec(t);
    const uint32_t eb = abi::dtype_size(t.dtype);
    if (units.size() != abi::tensor_units(t))
        throw Error(describe(t) + ": " + std::to_string(units.size()) + " units given, it is held by " +
                    std::to_string(abi::tensor_units(t)));
    std::vector<uint8_t> out(elements(t) * eb);
    for (uint64_t p = 0; p < abi::tensor_pages(t); ++p) {
        const abi::TensorPlace at = abi::tensor_page_place(t, p);
        const uint8_t* page = units[at.unit].data() + at.offset;
        each_element(t, p, [&](int64_t e, uint64_t off) {
            if (e >= 0) std::memcpy(out.data() + uint64_t(e) * eb, page + off, eb);
        });
    }
    return out;
}

namespace {

// `t` row-major seen along `dim`: `outer` blocks, one per index of the
// dimensions before it, each of shape[dim] steps of `step` bytes.
struct AlongDim {
    uint64_t outer = 1, step;
};
AlongDim along_dim(const abi::TensorSpec& t, uint32_t dim) {
    AlongDim a{1, abi::dtype_size(t.dtype)};
    for (uint32_t d = dim + 1; d < abi::kTensorDims; ++d) a.step *= t.shape[d];
    for (uint32_t d = 0; d < dim; ++d) a.outer *= t.shape[d];
    return a;
}

}  // namespace

std::vector<uint8_t> concatenate(const abi::TensorSpec& part, uint32_t dim,
                                 const std::vector<std::vector<uint8_t>>& parts) {
    if (dim >= abi::kTensorDims) throw Error("concatenate: dimension " + std::to_string(dim) + " of a 4-D tensor");
    const auto [outer, step] = along_dim(part, dim);
    const uint64_t block = step * part.shape[dim];
    for (const std::vector<uint8_t>& p : parts)
        if (p.size() != outer * block) throw Error("concatenate: a part is not " + describe(part));
    std::vector<uint8_t> out;
    out.reserve(outer * block * parts.size());
    for (uint64_t o = 0; o < outer; ++o)
        for (const std::vector<uint8_t>& p : parts) out.insert(out.end(), p.begin() + o * block, p.begin() + (o + 1) * block);
    return out;
}

std::vector<uint8_t> cut(const abi::TensorSpec& whole, uint32_t dim, uint32_t parts, uint32_t k, const void* data) {
    if (dim >= abi::kTensorDims) throw Error("cut: dimension " + std::to_string(dim) + " of a 4-D tensor");
    if (parts == 0 || k >= parts || whole.shape[dim] % parts)
        throw Error("cut: " + describe(whole) + " does not cut into " + std::to_string(parts) +
                    " equal parts along dimension " + std::to_string(dim));
    const auto [outer, step] = along_dim(whole, dim);
    const uint64_t block = step * (whole.shape[dim] / parts);
    const auto* in = static_cast<const uint8_t*>(data);
    std::vector<uint8_t> out;
    out.reserve(outer * block);
    for (uint64_t o = 0; o < outer; ++o) {
        const uint8_t* from = in + o * block * parts + k * block;
        out.insert(out.end(), from, from + block);
    }
    return out;
}

std::vector<uint8_t> tilize(const void* rows, uint32_t elem_bytes) {
    std::vector<uint8_t> tile(abi::kTileSide * abi::kTileSide * elem_bytes);
    const auto* in = static_cast<const uint8_t*>(rows);
    for (uint32_t r = 0; r < abi::kTileSide; ++r)
        for (uint32_t c = 0; c < abi::kTileSide; ++c)
            std::memcpy(&tile[abi::tile_index(r, c) * elem_bytes], in + (r * abi::kTileSide + c) * elem_bytes,
                        elem_bytes);
    return tile;
}

std::vector<uint8_t> untilize(const void* tile, uint32_t elem_bytes) {
    std::vector<uint8_t> rows(abi::kTileSide * abi::kTileSide * elem_bytes);
    const auto* in = static_cast<const uint8_t*>(tile);
    for (uint32_t r = 0; r < abi::kTileSide; ++r)
        for (uint32_t c = 0; c < abi::kTileSide; ++c)
            std::memcpy(&rows[(r * abi::kTileSide + c) * elem_bytes], in + abi::tile_index(r, c) * elem_bytes,
                        elem_bytes);
    return rows;
}

}  // namespace weft::tensor
