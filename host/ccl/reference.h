// Inputs for a collective op and the host reference it is checked against,
// element by element: exact for integers and for max/min, and for float sums
// and products within gamma(n-1) = (n-1)u / (1 - (n-1)u) times the sum (or
// product) of |inputs|, u the type's unit roundoff: the bound on n - 1
// rounded steps, which any reduction order over n ranks takes. An all-reduce
// must also leave every rank with the same bits.
#pragma once
#include <stdint.h>

#include <span>
#include <string>
#include <vector>

#include "ccl/collective.h"

namespace weft::ccl {

struct OpData {
    std::vector<std::vector<uint8_t>> input;  // per chip: what goes in its input buffer
};

// Random values that keep every reduction in range (products near 1, i32 small).
OpData make_inputs(const OpRequest& r, const OpLayout& l, uint32_t seed);

struct CheckResult {
    uint64_t checked = 0, wrong = 0;
    std::string first_wrong;  // "chip 3 element 17: got 1.5, expected 2 (tolerance 1e-6)"
};

// outputs: per chip, its output buffer (output_bytes), where it lies: a
// chip's memory is checked in place, not copied first (16 MiB ops on 9
// chips spent seconds zeroing and copying). ring: the overlay order
// (send/recv receives from the previous chip in it).
CheckResult check_outputs(const OpRequest& r, const OpLayout& l, const OpData& in,
                          const std::vector<std::span<const uint8_t>>& outputs, const std::vector<uint32_t>& ring);
CheckResult check_outputs(const OpRequest& r, const OpLayout& l, const OpData& in,
                          const std::vector<std::vector<uint8_t>>& outputs, const std::vector<uint32_t>& ring);

}  // namespace weft::ccl
