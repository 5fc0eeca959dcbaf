#include "tensor/tensor_space.h"

#include <string>

#include "common/error.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"

namespace weft::tensor {
namespace {

// A bank's share of `t`, in whole host pages: neighbours never share a page.
uint64_t share_of(const abi::TensorSpec& t) { return (abi::tensor_unit_bytes(t) + 4095) & ~uint64_t(4095); }

}  // namespace

TensorSpace::TensorSpace(const BoardInfo& board, uint64_t from) : board_(board), from_((from + 4095) & ~4095ull) {}

abi::TensorAt TensorSpace::take(const abi::TensorSpec& t) {
    abi::TensorSpec spec = t;
    spec.memory = abi::kInterleaved;
    spec.banks = board_.dram_banks;
    check_spec(spec);
    const uint64_t need = share_of(spec);
    const uint64_t bank = board_.dram_bank(0).size;
    uint64_t at = from_;
    for (const auto& [offset, held] : taken_) {
        if (offset >= at && offset - at >= need) break;
        at = std::max(at, offset + share_of(held.spec));
    }
    if (at > bank || need > bank - at)
        throw Error(describe(spec) + " does not fit beside the " + std::to_string(taken_.size()) +
                    " tensor(s) kept on the chips: it needs " + std::to_string(need) + " bytes of each DRAM bank, " +
                    std::to_string(bytes_taken()) + " of the " + std::to_string(bank - from_) +
                    " the kept tensors may take are taken");
    const abi::TensorAt placed = interleaved_at(board_, spec, at);
    taken_.emplace(at, placed);
    return placed;
}

void TensorSpace::give_back(const abi::TensorAt& at) {
    const uint64_t offset = at.base - board_.dram_bank(0).base;
    const auto it = taken_.find(offset);
    if (it != taken_.end() && it->second.base == at.base) taken_.erase(it);
}

std::vector<abi::TensorAt> TensorSpace::taken() const {
    std::vector<abi::TensorAt> all;
    for (const auto& [offset, at] : taken_) all.push_back(at);
    return all;
}

uint64_t TensorSpace::bytes_taken() const {
    uint64_t bytes = 0;
    for (const auto& [offset, at] : taken_) bytes += share_of(at.spec);
    return bytes;
}

}  // namespace weft::tensor
