#include "fabric_model/replay.h"

#include <algorithm>

#include <map>
#include <unordered_map>

#include "common/error.h"

namespace weft::fabric_model {
namespace {

// The packets that left their source chip: each one's first cable.
std::vector<transport::LoggedHop> injections(const transport::PacketLog& log, const transport::FabricBuilder& fabric) {
    std::vector<transport::LoggedHop> first;
    for (const transport::LoggedHop& h : log.hops)
        if (transport::is_injection(h, fabric)) first.push_back(h);
    std::stable_sort(first.begin(), first.end(), [](const transport::LoggedHop& a, const transport::LoggedHop& b) {
        return a.chip != b.chip ? a.chip < b.chip : a.record.sent_ticks < b.record.sent_ticks;
    });
    return first;
}

// Each fabric node's chip id, to find a packet's destination by its header.
class ChipOfNode {
public:
    explicit ChipOfNode(const transport::FabricBuilder& fabric) {
        for (uint32_t chip : fabric.order()) chips_[key(fabric.node(chip))] = chip;
    }
    uint32_t operator()(abi::FabricNodeId node) const {
        const auto it = chips_.find(key(node));
        if (it == chips_.end())
            throw Error("the log names mesh " + std::to_string(node.mesh) + " chip " + std::to_string(node.chip) +
                        ", which the model's fabric does not have: replay it on the cluster it was recorded on");
        return it->second;
    }

private:
    static uint32_t key(abi::FabricNodeId n) { return uint32_t(n.mesh) << 16 | n.chip; }
    std::unordered_map<uint32_t, uint32_t> chips_;
};

// A recorded packet the model can carry: its payload fits a packet of this
// fabric, and what it writes lies in the memory the destination chip keeps
// (a log edited by hand or from another board must not send the NoC to an
// address no chip has).
void check_packet(const abi::FabricPacketRecord& r, Simulation& sim, uint32_t to, size_t index) {
    const std::string which = "packet " + std::to_string(index) + " of the log";
    if (r.payload_bytes > sim.max_payload())
        throw Error(which + " carries " + std::to_string(r.payload_bytes) +
                    " bytes; this fabric's packets carry at most " + std::to_string(sim.max_payload()) +
                    " (--packet-bytes)");
    const HostChip& chip = sim.model().cluster().memory(to);
    const uint8_t c = r.noc_command;
    if (c < abi::kFabricWrite || c > abi::kFabricScatterWrite)
        throw Error(which + " has NoC command " + std::to_string(c) + ", which no router carries out");
    try {
        if (c != abi::kFabricAtomicInc)
            chip.to_host(r.dst_address, c == abi::kFabricInlineWrite ? 4 : std::max<uint64_t>(1, r.payload_bytes));
        if (c == abi::kFabricAtomicInc || c == abi::kFabricWriteInc) chip.to_host(r.sem_address, 4);
    } catch (const Error& e) {
        throw Error(which + " writes to chip " + std::to_string(to) + " where it has no memory: " + e.what());
    }
}

model::ModelPacket packet_of(const abi::FabricPacketRecord& r, uint64_t payload) {
    model::ModelPacket p;
    p.command = r.noc_command;
    p.dst = r.dst_address;
    p.sem = r.sem_address;
    p.src = payload;
    p.bytes = r.payload_bytes;
    p.inc = r.inc_value;
    return p;
}

}  // namespace

Replay replay_log(Simulation& sim, const transport::PacketLog& recorded) {
    if (!recorded.lost.empty())
        throw Error("the packet log lost records (" + recorded.lost.front() +
                    "): record with more packets per router to replay it");
    model::FabricModel& model = sim.model();
    const transport::FabricBuilder& fabric = model.fabric();
    const ChipOfNode chip_of(fabric);
    const transport::MulticastCounts reach = transport::multicast_counts(recorded, fabric);
    Replay out;
    for (const transport::LoggedHop& h : injections(recorded, fabric)) {
        check_packet(h.record, sim, chip_of(h.record.dst), out.packets);
        model::ModelPacket p = packet_of(h.record, model.dram(0));
        if (h.record.send_type == abi::kFabricMulticast) {
            if (fabric.dims() != 1) throw Error("the log holds a multicast packet on a 2D fabric, which has none");
            p.route.count = static_cast<uint8_t>(transport::multicast_count(reach, h.record));
        }
        model.send(h.chip, chip_of(h.record.dst), p);  // a multicast: to its first destination, then on
        ++out.packets;
    }
    out.run = sim.finish();
    out.log = transport::read_packet_log(model.cluster(), fabric);
    out.differs = transport::paths_differ(transport::paths_of(recorded), transport::paths_of(out.log), "the record",
                                          "the model");
    return out;
}

namespace {

uint32_t most_per_router(const transport::PacketLog& log) {
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> per;
    uint32_t most = 0;
    for (const transport::LoggedHop& h : log.hops) most = std::max(most, ++per[{h.chip, h.port}]);
    return most;
}

}  // namespace

int replay_command(ModelOptions options, bool cluster_given, const std::string& log_file, const std::string& out) {
    nlohmann::json about;
    const transport::PacketLog recorded = transport::read_packet_log_file(log_file, &about);
    if (!cluster_given) {
        options.cluster = about.value("cluster_file", "");
        if (options.cluster.empty()) options.cluster = about.value("cluster", "");
        if (options.cluster.empty()) throw Error(log_file + " names no cluster: give --cluster");
    }
    options.fabric.record_packets = std::max(transport::kDefaultRecordedPackets, most_per_router(recorded));
    Simulation sim(options);
    const Replay r = replay_log(sim, recorded);
    if (!out.empty())
        transport::write_packet_log_file(out, r.log, {{"cluster", options.cluster}, {"replay_of", log_file}});
    printf("replayed %llu packets (%zu cable crossings recorded) on %s: %.3f us virtual, %llu events\n",
           (unsigned long long)r.packets, recorded.hops.size(), options.cluster.c_str(), double(r.run.end_ns) / 1e3,
           (unsigned long long)r.run.events);
    if (!r.differs.empty()) {
        printf("the model differs: %s\n", r.differs.c_str());
        return 1;
    }
    printf("every packet crossed the same cables as recorded (%zu crossings)\n", r.log.hops.size());
    return 0;
}

}  // namespace weft::fabric_model
