#include "transport/fabric/packet_log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/error.h"

namespace weft::transport {
namespace {

std::string node_text(abi::FabricNodeId n) {
    return "mesh " + std::to_string(n.mesh) + " chip " + std::to_string(n.chip);
}

std::string path_text(const std::vector<std::pair<uint32_t, uint32_t>>& path) {
    if (path.empty()) return "none";
    std::string s;
    for (const auto& [chip, port] : path) s += (s.empty() ? "" : ", ") + std::to_string(chip) + "." + std::to_string(port);
    return s;
}

std::string packet_text(const PacketKey& k) {
    char addr[32];
    snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(k.dst_address));
    return "the packets from " + node_text(k.src) + " to " + node_text(k.dst) + " (command " +
           std::to_string(k.noc_command) + ", " + std::to_string(k.payload_bytes) + " bytes to " + addr + ")";
}

}  // namespace

PacketLog read_packet_log(Machine& machine, const FabricBuilder& fabric) {
    PacketLog log;
    if (!fabric.spec().record_packets) throw Error("the fabric keeps no packet log (FabricSpec::record_packets is 0)");
    for (const FabricRouterPlan& r : fabric.routers()) {
        if (!r.config.record_slots) continue;
        abi::FabricRouterStatus status{};
        machine.read(r.chip, r.config.status, &status, sizeof status);
        const uint32_t slots = r.config.record_slots, sent = status.recorded;
        const uint32_t kept = std::min(sent, slots);
        if (sent > slots)
            log.lost.push_back("chip " + std::to_string(r.chip) + " port " + std::to_string(r.port) + ": " +
                               std::to_string(sent) + " packets sent, the last " + std::to_string(slots) + " kept");
        std::vector<abi::FabricPacketRecord> records(kept);  // a log that wrapped fills every slot
        machine.read(r.chip, r.config.records, records.data(), records.size() * sizeof(abi::FabricPacketRecord));
        for (uint32_t i = sent - kept; i != sent; ++i)
            log.hops.push_back({r.chip, r.port, r.peer_chip, records[i % slots]});
    }
    return log;
}

PacketKey key_of(const abi::FabricPacketRecord& r) {
    PacketKey k;
    k.src = r.src, k.dst = r.dst;
    k.noc_command = r.noc_command, k.send_type = r.send_type;
    k.payload_bytes = r.payload_bytes, k.inc_value = r.inc_value;
    k.dst_address = r.dst_address, k.sem_address = r.sem_address;
    return k;
}

bool is_injection(const LoggedHop& h, const FabricBuilder& fabric) {
    const abi::FabricNodeId at = fabric.node(h.chip);
    return at.mesh == h.record.src.mesh && at.chip == h.record.src.chip;
}

MulticastCounts multicast_counts(const PacketLog& log, const FabricBuilder& fabric) {
    struct Seen {
        uint32_t crossings = 0, injections = 0, to_first = 0;
    };
    std::map<std::pair<PacketKey, uint32_t>, Seen> seen;
    for (const LoggedHop& h : log.hops) {
        if (h.record.send_type != abi::kFabricMulticast) continue;
        Seen& s = seen[{key_of(h.record), h.record.seq}];
        ++s.crossings;
        if (is_injection(h, fabric)) ++s.injections, s.to_first = h.record.hops;
    }
    MulticastCounts counts;
    for (const auto& [packet, s] : seen)
        if (s.injections && s.crossings / s.injections >= s.to_first)
            counts[packet] = s.crossings / s.injections - s.to_first + 1;
    return counts;
}

uint32_t multicast_count(const MulticastCounts& counts, const abi::FabricPacketRecord& r) {
    const auto it = counts.find({key_of(r), r.seq});
    if (it == counts.end())
        throw Error("the multicast packet " + std::to_string(r.seq) + " from mesh " + std::to_string(r.src.mesh) +
                    " chip " + std::to_string(r.src.chip) + ": the log does not say how many chips it reached "
                    "(its crossings do not start at its source or do not reach its first destination)");
    return it->second;
}

PacketPaths paths_of(const PacketLog& log) {
    PacketPaths paths;
    for (const LoggedHop& h : log.hops) paths[key_of(h.record)].emplace_back(h.chip, h.port);
    for (auto& [key, path] : paths) std::sort(path.begin(), path.end());
    return paths;
}

std::string paths_differ(const PacketPaths& a, const PacketPaths& b, const std::string& a_name,
                         const std::string& b_name) {
    static const std::vector<std::pair<uint32_t, uint32_t>> kNone;
    auto ia = a.begin();
    auto ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
        const bool take_a = ib == b.end() || (ia != a.end() && !(ib->first < ia->first));
        const bool take_b = ia == a.end() || (ib != b.end() && !(ia->first < ib->first));
        const PacketKey& key = take_a ? ia->first : ib->first;
        const auto& pa = take_a ? ia->second : kNone;
        const auto& pb = take_b ? ib->second : kNone;
        if (pa != pb)
            return packet_text(key) + " crossed, as chip.port: in " + a_name + " " + path_text(pa) + "; in " + b_name +
                   " " + path_text(pb);
        if (take_a) ++ia;
        if (take_b) ++ib;
    }
    return "";
}

nlohmann::json packet_log_json(const PacketLog& log, const nlohmann::json& about) {
    nlohmann::json hops = nlohmann::json::array();
    for (const LoggedHop& h : log.hops) {
        const abi::FabricPacketRecord& r = h.record;
        hops.push_back({{"chip", h.chip},
                        {"port", h.port},
                        {"to_chip", h.to_chip},
                        {"src", {r.src.mesh, r.src.chip}},
                        {"dst", {r.dst.mesh, r.dst.chip}},
                        {"seq", r.seq},
                        {"command", r.noc_command},
                        {"send_type", r.send_type},
                        {"vc", r.vc},
                        {"hops", r.hops},
                        {"bytes", r.payload_bytes},
                        {"inc", r.inc_value},
                        {"dst_address", r.dst_address},
                        {"sem_address", r.sem_address},
                        {"ticks", r.sent_ticks}});
    }
    return {{"schema", kPacketLogSchema}, {"about", about}, {"hops", hops}, {"lost", log.lost}};
}

namespace {

// One whole-number field of a hop, refused when it does not fit where the
// record keeps it (a hand-edited log's -1 or 2^32 must not wrap into a chip
// or a size the replay then trusts).
template <typename T>
void take(T& field, const nlohmann::json& hop, const char* key, size_t index = 0, const char* part = nullptr) {
    const nlohmann::json& v = part ? hop.at(key).at(index) : hop.at(key);
    const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!whole || v.get<uint64_t>() > std::numeric_limits<T>::max())
        throw Error(std::string(key) + (part ? std::string(" ") + part : "") + " is " + v.dump() +
                    ", not a whole number from 0 to " + std::to_string(std::numeric_limits<T>::max()));
    field = static_cast<T>(v.get<uint64_t>());
}

LoggedHop hop_from_json(const nlohmann::json& h) {
    LoggedHop hop;
    take(hop.chip, h, "chip"), take(hop.port, h, "port"), take(hop.to_chip, h, "to_chip");
    abi::FabricPacketRecord& r = hop.record;
    take(r.src.mesh, h, "src", 0, "mesh"), take(r.src.chip, h, "src", 1, "chip");
    take(r.dst.mesh, h, "dst", 0, "mesh"), take(r.dst.chip, h, "dst", 1, "chip");
    take(r.seq, h, "seq"), take(r.noc_command, h, "command"), take(r.send_type, h, "send_type");
    take(r.vc, h, "vc"), take(r.hops, h, "hops"), take(r.payload_bytes, h, "bytes"), take(r.inc_value, h, "inc");
    take(r.dst_address, h, "dst_address"), take(r.sem_address, h, "sem_address"), take(r.sent_ticks, h, "ticks");
    return hop;
}

}  // namespace

PacketLog packet_log_from_json(const nlohmann::json& j) {
    if (!j.is_object() || j.value("schema", "") != kPacketLogSchema)
        throw Error(std::string("not a packet log: its schema is not ") + kPacketLogSchema);
    PacketLog log;
    size_t index = 0;
    try {
        for (const auto& h : j.at("hops")) {
            log.hops.push_back(hop_from_json(h));
            ++index;
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error("hop " + std::to_string(index) + " of the packet log is incomplete: " + e.what());
    } catch (const Error& e) {
        throw Error("hop " + std::to_string(index) + " of the packet log: " + e.what());
    }
    log.lost = j.at("lost").get<std::vector<std::string>>();  // its own type error is named by the caller
    return log;
}

PacketLog read_packet_log_file(const std::string& path, nlohmann::json* about) {
    if (std::filesystem::is_directory(path)) throw Error(path + " is a directory, not a packet log");
    std::ifstream in(path);
    if (!in) throw Error("cannot read the packet log " + path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(path + " is not JSON: " + e.what());
    }
    try {
        PacketLog log = packet_log_from_json(j);
        if (about) *about = j.is_object() ? j.value("about", nlohmann::json::object()) : nlohmann::json::object();
        return log;
    } catch (const Error& e) {
        throw Error(path + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {  // a field missing or of the wrong type
        throw Error(path + " is not a packet log (weft-packet-log/1): " + e.what());
    }
}

void write_packet_log_file(const std::string& path, const PacketLog& log, const nlohmann::json& about) {
    std::ofstream out(path);
    out << packet_log_json(log, about).dump() << "\n";
    if (!out) throw Error("cannot write the packet log to " + path);
}

}  // namespace weft::transport
