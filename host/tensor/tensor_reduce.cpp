#include "tensor/tensor_reduce.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"

namespace weft::tensor {
namespace {

// `at`'s pages in order in one run of DRAM bank 0, past what `at` itself
// holds of the bank (nothing where it lives in L1).
abi::TensorAt staging_for(const BoardInfo& board, const abi::TensorAt& at) {
    abi::TensorSpec t = at.spec;
    const uint64_t offset = abi::tensor_sharded(t) ? 0 : (abi::tensor_unit_bytes(t) + 4095) & ~4095ull;
    t.memory = abi::kInterleaved;
    t.banks = 1;
    check_spec(t);
    const Region bank = board.dram_bank(0);
    if (offset > bank.size || abi::tensor_unit_bytes(t) > bank.size - offset)
        throw Error(describe(t) + " does not fit one run of board " + board.name + "'s DRAM bank 0: it takes " +
                    std::to_string(abi::tensor_unit_bytes(t)) + " bytes from byte " + std::to_string(offset) +
                    " of a bank of " + std::to_string(bank.size));
    return {t, bank.base + offset, bank.size};
}

}  // namespace

void all_reduce(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& at, abi::MathOp op, uint32_t core,
                std::chrono::milliseconds timeout, const std::string& algo) {
    const BoardInfo& board = cluster.board();
    const abi::TensorAt staging = staging_for(board, at);
    try {
        check_reshard(at, staging);
    } catch (const Error& e) {
        throw Error(std::string("a tensor's all_reduce runs its pages through one run of DRAM, page for page: ") +
                    e.what() + " (tiles line up in any memory, rows of the whole width in interleaved or height-sharded)");
    }
    std::vector<Launch> there, back;
    for (uint32_t chip : runner.chips()) {
        there.push_back(reshard_launch(board, chip, core, at, staging));
        back.push_back(reshard_launch(board, chip, core, staging, at));
    }
    cluster.run(there, timeout);
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.dtype = abi::DataType(at.spec.dtype);
    r.redop = op;
    r.algo = algo;
    r.bytes = abi::tensor_unit_bytes(staging.spec);
    r.send = r.recv = staging.base;
    runner.run(r);
    cluster.run(back, timeout);
}

}  // namespace weft::tensor
