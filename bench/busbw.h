// One collective op's bus bandwidth, as the bench tables print it: the better
// of two runs, the first checked (a wrong answer ends the bench).
#pragma once
#include <algorithm>
#include <string>

#include "ccl/op_case.h"
#include "common/error.h"

namespace weft::bench {

inline double best_busbw(ccl::CollectiveRunner& run, Cluster& c, uint64_t bytes, const std::string& algo = "ring",
                         ccl::Collective op = ccl::Collective::kAllGather) {
    ccl::OpRequest r;
    r.op = op;
    r.bytes = bytes;
    r.algo = algo;
    double best = 0;
    for (int i = 0; i < 2; ++i) {
        const ccl::CaseResult res = ccl::run_case(run, c, r, 1 + i, i == 0);
        if (i == 0 && res.check.wrong)
            throw Error(ccl::collective_name(op) + " " + algo + " over " + run.transport_name() +
                        " gave wrong results");
        const double algbw = double(bytes) / res.timing.seconds / 1e9;
        best = std::max(best, algbw * ccl::bus_factor(r.op, static_cast<uint32_t>(c.size())));
    }
    return best;
}

}  // namespace weft::bench
