#include "ccl/op_case.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace weft::ccl {
namespace {

// The inputs depend only on these and the seed. A bench repeats the same case
// many times; at 64 MiB on 8 ranks, making the inputs afresh costs the host
// more than the op it times.
struct InputKey {
    uint32_t dtype, redop, ranks, seed;
    uint64_t input_bytes, element;
    bool operator==(const InputKey&) const = default;
};

// Shared, not a reference to the cache: a case run while another waits (a
// communicator's op started in another's `meanwhile`) makes its own inputs,
// and the first still checks against its own.
std::shared_ptr<const OpData> inputs_for(const OpRequest& r, const OpLayout& l, uint32_t seed) {
    static InputKey last_key{};
    static std::shared_ptr<const OpData> last;
    const InputKey key{uint32_t(r.dtype), uint32_t(r.redop), l.ranks, seed, l.input_bytes, l.element};
    if (!last || !(key == last_key)) {
        last = std::make_shared<const OpData>(make_inputs(r, l, seed));
        last_key = key;
    }
    return last;
}

}  // namespace

CaseTraffic traffic_now(Machine& machine) { return machine.traffic(); }

namespace {

void poison(Machine& machine, uint32_t chip, uint64_t address, uint64_t bytes) {
    constexpr uint64_t kRun = 1 << 20;
    const std::vector<uint8_t> run(std::min(bytes, kRun), 0x7f);
    for (uint64_t at = 0; at < bytes; at += kRun)
        machine.write(chip, address + at, run.data(), std::min(kRun, bytes - at));
}

CaseResult run_case_with(CollectiveRunner& runner, Machine& cluster, const OpRequest& r, uint32_t seed, bool check,
                         const std::function<void()>& meanwhile) {
    cluster.claim(collective_name(r.op));  // before its inputs go in: nobody else's op writes there meanwhile
    CaseResult res;
    res.layout = runner.layout(r);
    const OpLayout& l = res.layout;
    const std::shared_ptr<const OpData> inputs = inputs_for(r, l, seed);
    const OpData& data = *inputs;
    for (uint32_t c = 0; c < l.ranks; ++c) {
        const uint32_t chip = runner.chip_of(c);
        // Poison: 0x7f bytes are ~3e38 or NaN in every float type and 2139062143 as
        // i32, none of them a value an op can produce here: a byte the op forgot
        // to write fails. In place, the input goes in over the poison.
        const Pages out = l.output_of(c), in = l.input_of(c);
        if (check && !l.output_in_input) poison(cluster, chip, out.base, out.bytes());
        cluster.write(chip, in.base, data.input[c].data(), in.bytes());
    }
    auto run = [&] {
        if (!meanwhile) return runner.run(r);
        PendingOp op = runner.start(r);
        meanwhile();
        return runner.wait(op);
    };
    if (!check) {
        res.timing = run();
        return res;
    }
    const CaseTraffic before = traffic_now(cluster);
    res.timing = run();
    const CaseTraffic after = traffic_now(cluster);
    res.traffic = {after.wire_bytes - before.wire_bytes, after.doorbells - before.doorbells};
    std::vector<std::vector<uint8_t>> read(l.ranks);
    std::vector<std::span<const uint8_t>> out;
    for (uint32_t c = 0; c < l.ranks; ++c) {
        const Pages o = l.output_of(c);
        read[c].resize(o.bytes());
        cluster.read(runner.chip_of(c), o.base, read[c].data(), o.bytes());
        out.emplace_back(read[c]);
    }
    res.check = check_outputs(r, l, data, out, runner.ring());
    return res;
}

}  // namespace

CaseResult run_case(CollectiveRunner& runner, Machine& cluster, const OpRequest& r, uint32_t seed, bool check) {
    return run_case_with(runner, cluster, r, seed, check, {});
}

CaseResult run_case(CollectiveRunner& runner, Machine& cluster, const OpRequest& r, uint32_t seed,
                    const std::function<void()>& meanwhile) {
    return run_case_with(runner, cluster, r, seed, true, meanwhile);
}

}  // namespace weft::ccl
