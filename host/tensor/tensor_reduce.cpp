#include "tensor/tensor_reduce.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"

namespace weft::tensor {
namespace {

// The DRAM bytes `at` holds in bank 0 (none where it lives in L1).
std::pair<uint64_t, uint64_t> in_bank0(const abi::TensorAt& at) {
    if (abi::tensor_sharded(at.spec)) return {0, 0};
    return {at.base, at.base + abi::tensor_unit_bytes(at.spec)};
}

}  // namespace

abi::TensorAt contiguous_at(const BoardInfo& board, abi::TensorSpec t, uint64_t offset) {
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

void all_reduce(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& at, abi::MathOp op,
                const abi::TensorAt& staging, uint32_t core, std::chrono::milliseconds timeout,
                const std::string& algo) {
    try {
        check_reshard(at, staging);
    } catch (const Error& e) {
        throw Error(std::string("a tensor's all_reduce runs its pages through one run of DRAM, page for page: ") +
                    e.what() + " (tiles line up in any memory, rows of the whole width in interleaved or height-sharded)");
    }
    const auto [a, z] = in_bank0(at);
    const uint64_t run = abi::tensor_unit_bytes(staging.spec);
    if (staging.base < z && a < staging.base + run)
        throw Error("the staging run of " + describe(staging.spec) + " overlaps the tensor's own bytes in DRAM");
    const BoardInfo& board = cluster.board();
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
    r.bytes = run;
    r.send = r.recv = staging.base;
    runner.run(r);
    cluster.run(back, timeout);
}

}  // namespace weft::tensor
