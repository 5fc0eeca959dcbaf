// Where tensors that outlive ops live: interleaved over a board's DRAM
// banks, at the same offset into every bank on every chip, each clear of the
// others. An op among them keeps clear of what is taken (the tensor calls'
// `keep`, ccl::OpRequest::keep), so a tensor stays until it is given back.
#pragma once
#include <stdint.h>

#include <map>
#include <vector>

#include "driver/board.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

class TensorSpace {
public:
    // The banks from `from` bytes into each on: below it is left to tensors
    // placed without the space.
    explicit TensorSpace(const BoardInfo& board, uint64_t from = 0);
    // `t` interleaved over every bank at the lowest offset clear of the
    // tensors taken. Throws weft::Error naming the room left when no gap
    // holds it.
    abi::TensorAt take(const abi::TensorSpec& t);
    // Gives back what take returned; anything else is ignored.
    void give_back(const abi::TensorAt& at);
    // The tensors taken and not given back: what ops among them keep clear of.
    std::vector<abi::TensorAt> taken() const;
    // Bytes of each bank taken (whole pages).
    uint64_t bytes_taken() const;

private:
    const BoardInfo& board_;
    uint64_t from_;
    std::map<uint64_t, abi::TensorAt> taken_;  // by offset into a bank
};

}  // namespace weft::tensor
