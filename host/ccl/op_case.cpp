#include "ccl/op_case.h"

#include <cstring>

namespace weft::ccl {

CaseResult run_case(CollectiveRunner& runner, Cluster& cluster, const OpRequest& r, uint32_t seed, bool check) {
    CaseResult res;
    res.layout = runner.layout(r);
    const OpLayout& l = res.layout;
    const OpData data = make_inputs(r, l, seed);
    for (uint32_t c = 0; c < l.ranks; ++c) {
        Chip& chip = cluster.chip(c);
        chip.write(l.input, data.input[c].data(), l.input_bytes);
        // Poison: 0x7f bytes are ~3e38 or NaN in every float type and 2139062143 as
        // i32, none of them a value an op can produce here: a byte the op forgot to write fails.
        if (check) std::memset(chip.host_ptr(l.output, l.output_bytes), 0x7f, l.output_bytes);
    }
    res.timing = runner.run(r);
    if (!check) return res;
    std::vector<std::vector<uint8_t>> out(l.ranks, std::vector<uint8_t>(l.output_bytes));
    for (uint32_t c = 0; c < l.ranks; ++c) cluster.chip(c).read(l.output, out[c].data(), l.output_bytes);
    res.check = check_outputs(r, l, data, out, runner.ring());
    return res;
}

}  // namespace weft::ccl
