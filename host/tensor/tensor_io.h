// Tensors on a chip: where one goes (interleaved over the board's DRAM banks,
// or sharded over its worker cores' L1), writing host data into it and
// reading it back, and moving it to another memory on the chip with the
// tensor_reshard kernel. Every address is checked against the board.
#pragma once
#include <stdint.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/board.h"
#include "driver/chip.h"
#include "driver/cluster.h"
#include "weft/abi/pages.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

// `t` interleaved over every DRAM bank of `board`, `offset` bytes into each.
// Throws weft::Error if a bank's share does not fit.
abi::TensorAt interleaved_at(const BoardInfo& board, abi::TensorSpec t, uint64_t offset);
// `t` sharded over the board's worker cores (grid unit k on worker k), at the
// same L1 address in each, `offset` bytes into the first's free L1. Throws
// weft::Error if the grid has more cores than the board's workers or a shard
// overruns a core's free L1.
abi::TensorAt sharded_at(const BoardInfo& board, const abi::TensorSpec& t, uint64_t offset);

// "interleaved", "height", "width" or "block"; nullopt for another name.
std::optional<abi::TensorMemory> parse_memory(const std::string& name);
// A grid of worker cores: columns, rows.
using CoreGrid = std::pair<uint16_t, uint16_t>;
// `t` in `memory` over `grid` (sharded memories), its shards as even as
// whole pages allow; interleaved memory ignores the grid.
abi::TensorSpec in_memory(abi::TensorSpec t, abi::TensorMemory memory, CoreGrid grid);
// "" where shards over `grid` leave a worker core of `board` for `op`'s
// kernel; else why they do not.
std::string kernel_core_shortfall(const BoardInfo& board, CoreGrid grid, const std::string& op);
// `t` where its memory says: interleaved_at or sharded_at.
abi::TensorAt placed(const BoardInfo& board, const abi::TensorSpec& t, uint64_t offset);
// An op's input and output on every chip: the output after the input, in
// the banks past the input's share, or in L1 past its shards.
struct PlacedPair {
    abi::TensorAt in, out;
};
PlacedPair place_both(const BoardInfo& board, const abi::TensorSpec& in, const abi::TensorSpec& out);

// The DRAM `at` takes, a range a bank (none where it lives in L1): what an
// op that must leave the tensor alone keeps clear of (ccl::OpRequest::keep).
std::vector<abi::Pages> dram_ranges(const abi::TensorAt& at);
// Every tensor's, one after another.
std::vector<abi::Pages> dram_ranges(const std::vector<abi::TensorAt>& tensors);

void write_tensor(Chip& chip, const abi::TensorAt& at, const void* data);
std::vector<uint8_t> read_tensor(Chip& chip, const abi::TensorAt& at);

// Throws weft::Error unless `to` holds the same tensor as `from` in the same
// grid of pages (so a reshard is a copy per page), naming what differs.
void check_reshard(const abi::TensorAt& from, const abi::TensorAt& to);
// The tensor_reshard kernel on `core` of `chip`, moving `from` to `to`.
Launch reshard_launch(const BoardInfo& board, uint32_t chip, uint32_t core, const abi::TensorAt& from,
                      const abi::TensorAt& to);

}  // namespace weft::tensor
