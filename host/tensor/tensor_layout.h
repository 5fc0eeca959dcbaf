// Tensors in the chips' layouts (include/weft/abi/tensor.h) from and to plain
// host arrays: a spec checked with errors that name what does not fit, the
// bytes each bank or core holds for given row-major data, and the data read
// back from them. Padding (tile rows and columns past the shape, the last
// page of a width shard) is zero going in and dropped coming back.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "weft/abi/tensor.h"

namespace weft::tensor {

// The bytes of each unit (bank or core, abi::tensor_units of them), each
// abi::tensor_unit_bytes long.
using UnitImages = std::vector<std::vector<uint8_t>>;

// Throws weft::Error naming the first thing wrong with `t` (an unknown dtype
// or layout, a shard that does not hold whole pages, more shards than cores).
void check_spec(const abi::TensorSpec& t);
// A matrix-shaped spec {1, 1, rows, cols} with the rest as given.
abi::TensorSpec matrix(uint32_t rows, uint32_t cols, abi::DataType dtype, abi::TensorLayout layout);
// Its elements, shape[0] * ... * shape[3].
uint64_t elements(const abi::TensorSpec& t);
// Its bytes as a row-major host array: elements(t) of its dtype's size.
uint64_t host_bytes(const abi::TensorSpec& t);
std::string describe(const abi::TensorSpec& t);

// `data`: the tensor's elements row-major, elements(t) of dtype_size each.
UnitImages place(const abi::TensorSpec& t, const void* data);
std::vector<uint8_t> gather(const abi::TensorSpec& t, const UnitImages& units);

// Row-major host arrays of tensors shaped `part`, concatenated along
// shape[dim] (what an all-gather's result holds, in the host's terms).
std::vector<uint8_t> concatenate(const abi::TensorSpec& part, uint32_t dim,
                                 const std::vector<std::vector<uint8_t>>& parts);

// The inverse: part k of `parts` equal ones that `whole` (row-major
// elements of its shape) cuts into along shape[dim]. Throws weft::Error if
// they do not divide it.
std::vector<uint8_t> cut(const abi::TensorSpec& whole, uint32_t dim, uint32_t parts, uint32_t k, const void* data);

// One 32x32 tile: row-major elements to the four-face order and back.
std::vector<uint8_t> tilize(const void* rows, uint32_t elem_bytes);
std::vector<uint8_t> untilize(const void* tile, uint32_t elem_bytes);

}  // namespace weft::tensor
