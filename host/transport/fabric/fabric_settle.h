// Whether a running fabric has settled: nothing moves in it any more,
// though packets may still wait (behind a dead cable, or in a worker lane
// the control plane holds). The control plane looks for this while it
// moves traffic round a dead cable (live_reroute.h): a packet that crossed
// the cable before it died has then landed, so one sent round after it
// cannot overtake it.
//
// A look reads every router's status: its count of polls and every count that changes when a packet moves (sent, taken
// in, handled, freed, delivered, the words the peer and the opposite router write). The fabric is settled when two
// looks in a row each found, against the one before: every router polled in between (so a router asleep through the
// look cannot hide work), no count moved, and no receiver's NoC write was in flight. The caller rings every router
// after each look (rings_due), so a sleeper polls before the next; until every router has, a look counts for
// nothing and rings none again: rung at every look, the routers of a big cluster kept every chip's QEMU awake,
// and a move took seconds to settle.
#pragma once
#include <stdint.h>

#include <functional>
#include <vector>

#include "driver/machine.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {

// On the fabric model's ranks, whether `here` holds on every rank (true in
// one process).
using AllRanks = std::function<bool(bool here)>;

class SettleWatch {
public:
    // One look at the fabric; true once the fabric is settled.
    bool look(Machine& machine, const FabricBuilder& fabric, const AllRanks& all = {});
    // Whether the last look counted: the caller rings every router for the next.
    bool rings_due() const { return rings_due_; }
    void reset();

private:
    std::vector<uint32_t> polls_;  // per router, at the last look that counted
    uint64_t counts_ = 0;          // every count at the last look that counted, folded
    int still_ = 0;                // looks in a row that found nothing moved
    bool rings_due_ = true;
};

}  // namespace weft::transport
