// The op matrix the CCL tests walk, on QEMU (tests/system/test_ccl.cpp) and
// on the host model (tests/unit/test_model_runner.cpp): its data types and
// the requests of one of its cells.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "ccl/collective.h"
#include "weft/abi/ccl.h"

namespace weft::test {

inline constexpr abi::DataType kMatrixTypes[] = {abi::kF32, abi::kBF16, abi::kF16, abi::kI32};

// `elements` of `t` under `op` and `algo`, summed, and for a reduction past
// one element a rank also by max, min or prod (taking turns by `seed`).
// Request i is rooted at (seed + i) % ranks, a different root each time: its
// caller runs it with seed + i.
inline std::vector<ccl::OpRequest> matrix_cell(ccl::Collective op, const std::string& algo, abi::DataType t,
                                               uint64_t elements, uint32_t ranks, uint32_t seed) {
    std::vector<abi::MathOp> redops{abi::kMathSum};
    if (ccl::reduces(op) && elements > ranks) redops.push_back(abi::MathOp(abi::kMathMax + seed % 3));
    std::vector<ccl::OpRequest> cell;
    for (abi::MathOp redop : redops) {
        ccl::OpRequest r;
        r.op = op;
        r.algo = algo;
        r.dtype = t;
        r.redop = redop;
        r.bytes = elements * ccl::dtype_size(t);
        r.root = static_cast<uint32_t>((seed + cell.size()) % ranks);
        cell.push_back(r);
    }
    return cell;
}

}  // namespace weft::test
