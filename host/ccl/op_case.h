// One collective op end to end on a live cluster: random inputs written to
// every chip, outputs poisoned, the op run, outputs read back and checked
// against the host reference. What `weft run`, `weft bench` and the tests use.
#pragma once
#include <functional>
#include "ccl/reference.h"
#include "ccl/runner.h"

namespace weft::ccl {

// What the cables and the bridge counted while the op ran (the checked run
// only): Machine::Traffic's payload bytes carried once and doorbells.
using CaseTraffic = Machine::Traffic;

struct CaseResult {
    OpLayout layout;
    OpTiming timing;
    CheckResult check;
    CaseTraffic traffic;
};

// The bridge's totals now, for differences around an op.
CaseTraffic traffic_now(Machine& machine);

// check = false: skip reading and checking the outputs (the bench's timed repeats).
CaseResult run_case(CollectiveRunner& runner, Machine& machine, const OpRequest& r, uint32_t seed, bool check = true);
// The same, with `meanwhile` run once the op has started and before it is
// waited for (a fault injected under a running op).
CaseResult run_case(CollectiveRunner& runner, Machine& machine, const OpRequest& r, uint32_t seed,
                    const std::function<void()>& meanwhile);

}  // namespace weft::ccl
