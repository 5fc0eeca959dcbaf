// One collective op end to end on a live cluster: random inputs written to
// every chip, outputs poisoned, the op run, outputs read back and checked
// against the host reference. What `weft run`, `weft bench` and the tests use.
#pragma once
#include "ccl/reference.h"
#include "ccl/runner.h"

namespace weft::ccl {

struct CaseResult {
    OpLayout layout;
    OpTiming timing;
    CheckResult check;
};

// check = false: skip reading and checking the outputs (the bench's timed repeats).
CaseResult run_case(CollectiveRunner& runner, Cluster& cluster, const OpRequest& r, uint32_t seed, bool check = true);

}  // namespace weft::ccl
