// Sending a packet log's traffic again on a QEMU cluster (weft replay): each
// packet the log saw leave its source chip goes out again from that chip, by
// the running fabric's own tables, from fabric_traffic kernels on the
// workers; the routers log what they send, so the two logs' paths compare
// (packet_log.h paths_differ). A log from the fabric model replayed here
// says whether QEMU's routers take every packet the model's way.
#pragma once
#include <chrono>

#include "driver/cluster.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/packet_log.h"

namespace weft::transport {

// One fabric_traffic kernel: on `chip`'s worker core of lane `lane`.
struct ReplayKernel {
    uint32_t chip = 0, lane = 0;
    abi::FabricTrafficArgs args{};  // its connections are set where it runs
};

struct ReplayPlan {
    std::vector<std::vector<ReplayKernel>> rounds;  // one after another; a round's kernels at once
    size_t packets = 0;                              // sent again
    size_t hops = 0;                                 // the cables they crossed in the log
    size_t multicast = 0;  // of the packets, multicasts (their reach counted from their crossings)
};

// The kernels that send `log`'s packets again over `fabric` (one job per
// packet, at most abi::kFabricTrafficMaxJobs a kernel, one kernel per worker
// lane a round). A path does not depend on where a packet's bytes land, and
// the recorded addresses may be any core's L1: every payload comes from the
// start of its chip's DRAM and lands in the last 64 KiB of the destination's
// DRAM (replay overwrites them), every increment there too. Throws
// weft::Error naming a packet whose ends are not chips of the fabric.
ReplayPlan plan_replay(const FabricBuilder& fabric, const BoardInfo& board, const PacketLog& log);

// The log as a replay repeats it: every packet, its addresses cleared. Two logs' paths compare on it: paths_of(as_replayed(a)) against
// paths_of(as_replayed(b)).
PacketLog as_replayed(PacketLog log);

// Runs the plan on `fabric` (started with a packet log) and returns what its
// routers logged once every packet has crossed its last cable (or `timeout`
// passed: the log then holds what crossed, and paths_differ says what did not).
PacketLog replay_on(Cluster& cluster, Fabric& fabric, const ReplayPlan& plan, std::chrono::milliseconds timeout);

}  // namespace weft::transport
