#include "transport/fabric/replay_traffic.h"

#include <algorithm>
#include <map>
#include <thread>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "driver/stall_clock.h"
#include "transport/l1_allocator.h"

namespace weft::transport {
namespace {

constexpr uint64_t kLanding = 64 << 10;  // the last bytes of DRAM a replay writes into

std::string packet_name(const abi::FabricPacketRecord& r) {
    return "packet " + std::to_string(r.seq) + " from mesh " + std::to_string(r.src.mesh) + " chip " +
           std::to_string(r.src.chip) + " to mesh " + std::to_string(r.dst.mesh) + " chip " +
           std::to_string(r.dst.chip);
}

// The job that sends `r` again from `from` to `to` (a multicast: to its
// first destination and `count` chips on), into the replay's landing area.
abi::FabricTrafficJob job_for(const FabricBuilder& f, const BoardInfo& board, const abi::FabricPacketRecord& r,
                              uint32_t from, uint32_t to, uint32_t count) {
    const FabricRoute route = f.route(from, to);
    const uint64_t landing = board.dram.end() - kLanding;
    abi::FabricTrafficJob j{};
    j.command = r.noc_command;
    j.hops = static_cast<uint8_t>(route.hops);
    j.count = static_cast<uint8_t>(count);
    j.ttl = abi::kFabricDefaultTtl;
    j.direction = f.connection_slot(route.direction);
    j.route = route.route;
    j.dst_mesh = static_cast<uint8_t>(r.dst.mesh);
    j.dst_chip = r.dst.chip;
    j.bytes = r.payload_bytes;
    j.inc = r.inc_value;
    j.src = board.dram.base;
    j.dst = landing;
    // A write given a semaphore becomes a write-and-increment: only those that had one get one.
    const bool counts = r.noc_command == abi::kFabricWriteInc || r.noc_command == abi::kFabricAtomicInc;
    j.sem = counts ? board.dram.end() - 4 : 0;
    return j;
}

}  // namespace

ReplayPlan plan_replay(const FabricBuilder& fabric, const BoardInfo& board, const PacketLog& log) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> chip_of;  // (mesh, chip in it) -> chip
    for (uint32_t c : fabric.order()) chip_of[{fabric.node(c).mesh, fabric.node(c).chip}] = c;
    auto chip = [&](const abi::FabricNodeId& n, const abi::FabricPacketRecord& r) {
        const auto it = chip_of.find({n.mesh, n.chip});
        if (it == chip_of.end()) throw Error(packet_name(r) + ": mesh " + std::to_string(n.mesh) + " chip " +
                                             std::to_string(n.chip) + " is not a chip of this cluster's fabric");
        return it->second;
    };
    const MulticastCounts reach = multicast_counts(log, fabric);
    ReplayPlan plan;
    std::map<uint32_t, std::vector<abi::FabricTrafficJob>> jobs;  // by source chip
    for (const LoggedHop& h : log.hops) {
        const abi::FabricPacketRecord& r = h.record;
        const bool multicast = r.send_type == abi::kFabricMulticast;
        if (multicast && fabric.dims() != 1)
            throw Error(packet_name(r) + " is a multicast, which this 2D fabric does not carry");
        ++plan.hops;
        const uint32_t from = chip(r.src, r);
        if (h.chip != from) continue;  // a later hop of a packet sent again from its source
        if (r.payload_bytes > fabric.spec().payload_bytes())
            throw Error(packet_name(r) + " carries " + std::to_string(r.payload_bytes) +
                        " bytes: more than this fabric's packets (" + std::to_string(fabric.spec().payload_bytes()) +
                        ")");
        const uint32_t count = multicast ? multicast_count(reach, r) : 1;
        jobs[from].push_back(job_for(fabric, board, r, from, chip(r.dst, r), count));
        ++plan.packets;
        plan.multicast += multicast;
    }
    const uint32_t lanes = std::min<uint32_t>(fabric.spec().lanes,
                                              uint32_t(board.cores_with_role(CoreRole::kWorker).size()));
    const uint32_t per_round = lanes * abi::kFabricTrafficMaxJobs;
    for (const auto& [from, list] : jobs)
        for (size_t first = 0; first < list.size(); first += abi::kFabricTrafficMaxJobs) {
            const size_t round = first / per_round;
            if (plan.rounds.size() <= round) plan.rounds.resize(round + 1);
            ReplayKernel k;
            k.chip = from;
            k.lane = uint32_t(first / abi::kFabricTrafficMaxJobs % lanes);
            const size_t n = std::min<size_t>(abi::kFabricTrafficMaxJobs, list.size() - first);
            std::copy(list.begin() + long(first), list.begin() + long(first + n), k.args.jobs);
            k.args.job_count = uint32_t(n);
            plan.rounds[round].push_back(k);
        }
    return plan;
}

PacketLog as_replayed(PacketLog log) {
    for (LoggedHop& h : log.hops) h.record.dst_address = h.record.sem_address = 0;
    return log;
}

PacketLog replay_on(Cluster& cluster, Fabric& fabric, const ReplayPlan& plan, std::chrono::milliseconds timeout) {
    const FabricBuilder& f = fabric.builder();
    const BoardInfo& board = cluster.board();
    const KernelImage& image = kernel_named(board, "fabric_traffic");
    for (const std::vector<ReplayKernel>& round : plan.rounds) {
        L1Allocator l1(board);  // the kernels of one round at a time
        std::vector<Launch> launches;
        for (ReplayKernel k : round) {
            const uint32_t core = board.worker_core(k.lane);
            f.connect_every_way(cluster, l1, k.chip, k.lane, core, k.args.connection);
            launches.push_back({k.chip, core, &image, KernelArgWords::of(k.args)});
        }
        cluster.run(launches, timeout);
    }
    // The kernels end once their packets are on the cables; the last hops land soon after
    // (in the cluster's own time: a busy host only delays them).
    StallClock clock(cluster.processes());
    PacketLog log = read_packet_log(cluster, f);
    while (log.hops.size() < plan.hops && clock.total() < timeout) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        clock.look(false);
        log = read_packet_log(cluster, f);
    }
    return log;
}

}  // namespace weft::transport
