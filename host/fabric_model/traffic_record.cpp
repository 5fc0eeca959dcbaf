#include "fabric_model/traffic_record.h"

#include <algorithm>
#include <ostream>
#include <tuple>

#include "fabric_model/ranks.h"
#include "fabric_model/state_json.h"

namespace weft::fabric_model {
namespace {

using nlohmann::json;

uint32_t node_word(abi::FabricNodeId n) { return uint32_t(n.mesh) << 16 | n.chip; }

const char* command_name(uint8_t command) {
    switch (command) {
        case abi::kFabricWrite: return "write";
        case abi::kFabricAtomicInc: return "atomic_inc";
        case abi::kFabricWriteInc: return "write_inc";
        case abi::kFabricInlineWrite: return "inline_write";
        case abi::kFabricScatterWrite: return "scatter_write";
        default: return "unknown";
    }
}

}  // namespace

size_t TrafficRecorder::KeyHash::operator()(const Key& k) const {
    uint64_t h = k.src * 0x9e3779b97f4a7c15ull;
    for (uint64_t v : {uint64_t(k.dst), uint64_t(k.payload_bytes), uint64_t(k.seq), k.dst_address, k.sem_address})
        h = (h ^ v) * 0x100000001b3ull + (h >> 29);
    return size_t(h);
}

TrafficRecorder::TrafficRecorder(TimedFabric& engine, size_t max_packets) : engine_(engine), max_packets_(max_packets) {
    const transport::FabricBuilder& f = engine.model().fabric();
    for (uint32_t c = 0; c < engine.model().chips(); ++c) node_of_chip_.push_back(node_word(f.node(c)));
    engine_.on_packet_hop = [this](const PacketHop& hop) { record(hop); };
}

TrafficRecorder::~TrafficRecorder() { engine_.on_packet_hop = nullptr; }

void TrafficRecorder::record(const PacketHop& hop) {
    const abi::FabricPacketHeader& h = *hop.header;
    // Between two routers: no one's traffic.
    if (h.send_type == abi::kFabricFallbackSync || h.send_type == abi::kFabricRejoinMark) return;
    const Hop kept{{node_word(h.src), node_word(h.dst), h.payload_bytes, h.seq, h.dst_address, h.sem_address},
                   hop.left_ns,
                   hop.landed_ns,
                   hop.from_chip,
                   hop.port,
                   hop.to_chip,
                   h.src,
                   h.dst,
                   h.noc_command,
                   h.send_type};
    if (engine_.ranks().size() > 1) unstitched_.push_back(kept);
    else
        stitch(kept);
}

void TrafficRecorder::gather() {
    Ranks& ranks = engine_.ranks();
    if (ranks.size() == 1) return;
    std::vector<Hop> hops = values_from_every_rank(ranks, unstitched_);
    // A packet's hop lands before its next one leaves: in order of landing
    // each hop finds the packet it continues.
    std::stable_sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) {
        return std::tie(a.landed_ns, a.to_chip, a.from_chip, a.port, a.left_ns) <
               std::tie(b.landed_ns, b.to_chip, b.from_chip, b.port, b.left_ns);
    });
    for (const Hop& h : hops) stitch(h);
    unstitched_.clear();
}

void TrafficRecorder::stitch(const Hop& hop) {
    const Key& key = hop.key;
    Alike& alike = alike_[key];
    // The packet alike that is where this hop starts; none: a new one.
    const auto on_chip = std::find_if(alike.open.begin(), alike.open.end(),
                                      [&](uint32_t p) { return packets_[p].hops.back().to_chip == hop.from_chip; });
    uint32_t index;
    if (on_chip != alike.open.end()) {
        index = *on_chip;
    } else if (packets_.size() < max_packets_) {
        index = uint32_t(packets_.size());
        RecordedPacket& p = packets_.emplace_back();
        p.src = hop.src, p.dst = hop.dst, p.command = hop.command, p.send_type = hop.send_type;
        p.payload_bytes = key.payload_bytes, p.seq = key.seq, p.dst_address = key.dst_address,
        p.sem_address = key.sem_address;
        p.repeat = alike.seen++;
        alike.open.push_back(index);
    } else {
        ++unrecorded_hops_;
        return;
    }
    RecordedPacket& p = packets_[index];
    p.hops.push_back({hop.left_ns, hop.landed_ns, hop.from_chip, hop.port, hop.to_chip});
    // A multicast goes on past its first destination: it stays open.
    if (node_of_chip_[hop.to_chip] == key.dst) {
        p.arrived = true;
        if (hop.send_type == abi::kFabricUnicast)
            alike.open.erase(std::find(alike.open.begin(), alike.open.end(), index));
    }
}

json packet_json(const RecordedPacket& p, uint32_t id) {
    json hops = json::array();
    for (const RecordedHop& h : p.hops)
        hops.push_back(
            {{"chip", h.chip}, {"port", h.port}, {"to_chip", h.to_chip}, {"left_ns", h.left_ns}, {"t", h.landed_ns}});
    return {{"id", id},
            {"src", node_json(p.src)},
            {"dst", node_json(p.dst)},
            {"from_chip", p.hops.front().chip},
            {"command", command_name(p.command)},
            {"multicast", p.send_type == abi::kFabricMulticast},
            {"payload_bytes", p.payload_bytes},
            {"dst_address", p.dst_address},
            {"sem_address", p.sem_address},
            {"seq", p.seq},
            {"repeat", p.repeat},
            {"injected_ns", p.injected_ns()},
            {"delivered_ns", p.delivered_ns()},
            {"arrived", p.arrived},
            {"hops", hops}};
}

json TrafficRecorder::header_json(const json& about) const {
    json j = {{"schema", kTraceSchema}};
    for (const auto& [k, v] : about.items()) j[k] = v;
    j["time_ns"] = engine_.now_ns();
    j["packets_recorded"] = packets_.size();
    j["max_packets"] = max_packets_;
    j["truncated"] = truncated();
    if (truncated())
        j["note"] = "the record holds the first " + std::to_string(max_packets_) + " packets; " +
                    std::to_string(unrecorded_hops_) + " hops of later packets were not recorded";
    return j;
}

json TrafficRecorder::as_json(const nlohmann::json& about) const {
    nlohmann::json j = header_json(about);
    j["packets"] = nlohmann::json::array();
    for (size_t i = 0; i < packets_.size(); ++i) j["packets"].push_back(packet_json(packets_[i], uint32_t(i)));
    return j;
}

void TrafficRecorder::write(std::ostream& out, const nlohmann::json& about) const {
    std::string head = header_json(about).dump();
    head.pop_back();  // the closing brace: the packets follow
    out << head << (head.size() > 1 ? "," : "") << "\"packets\":[";
    for (size_t i = 0; i < packets_.size(); ++i)
        out << (i ? ",\n" : "\n") << packet_json(packets_[i], uint32_t(i)).dump();
    out << "\n]}\n";
}

}  // namespace weft::fabric_model
