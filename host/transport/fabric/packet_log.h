// The routers' packet logs (FabricSpec::record_packets): every packet each
// router sent over its cable, read off the chips of a QEMU cluster or of the
// fabric model alike, and grouped into each packet's path. Two runs of the
// same traffic on the same cluster agree packet for packet when every
// packet's path is the same (paths_differ).
#pragma once
#include <stdint.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "driver/machine.h"
#include "transport/fabric/fabric_builder.h"

namespace weft::transport {

// What `weft run --record` asks each router to keep, and the model's replay
// too (a log changes the routers' L1, so both size their packets alike):
// the packets of a 1 MiB op on the clusters in clusters/, in 192 KiB of L1.
inline constexpr uint32_t kDefaultRecordedPackets = 4096;

// One cable crossing: `chip` sent the packet out of `port` to `to_chip`.
struct LoggedHop {
    uint32_t chip = 0, port = 0, to_chip = 0;
    abi::FabricPacketRecord record{};
};

struct PacketLog {
    std::vector<LoggedHop> hops;  // router after router, each in the order it sent
    // Routers whose log wrapped and lost its oldest records ("chip 3 port 1:
    // 70000 packets sent, the last 65536 kept"); empty: the log is whole.
    std::vector<std::string> lost;
};

// Reads every router's log. Throws weft::Error when the fabric keeps none.
PacketLog read_packet_log(Machine& machine, const FabricBuilder& fabric);

// What tells one packet from another without its sequence number (which
// depends on how the sender spread its packets over lanes): its ends, what
// it does and where. Packets alike in all of it are interchangeable.
struct PacketKey {
    abi::FabricNodeId src{}, dst{};
    uint8_t noc_command = 0, send_type = 0;
    uint32_t payload_bytes = 0, inc_value = 0;
    uint64_t dst_address = 0, sem_address = 0;
    auto tie() const {
        return std::tie(src.mesh, src.chip, dst.mesh, dst.chip, noc_command, send_type, payload_bytes, inc_value,
                        dst_address, sem_address);
    }
    bool operator<(const PacketKey& o) const { return tie() < o.tie(); }
    bool operator==(const PacketKey& o) const { return tie() == o.tie(); }
};
PacketKey key_of(const abi::FabricPacketRecord& r);

// How many chips each multicast packet of `log` was delivered to (its
// header's count, which the record does not keep): its cable crossings, less
// those before its first destination, plus one. By the packet's key and
// sequence number; packets alike in both count as one each.
using MulticastCounts = std::map<std::pair<PacketKey, uint32_t>, uint32_t>;
MulticastCounts multicast_counts(const PacketLog& log, const FabricBuilder& fabric);
// The count of the multicast `r` in `counts`; throws weft::Error naming the
// packet where the log does not say it (its first cable's record missing,
// or fewer crossings than cables to its first destination).
uint32_t multicast_count(const MulticastCounts& counts, const abi::FabricPacketRecord& r);
// Whether `h` is a packet leaving its source chip (its first cable).
bool is_injection(const LoggedHop& h, const FabricBuilder& fabric);

// Each kind of packet's cable crossings, as (chip, port), sorted: equal for
// two runs exactly when packets alike crossed the same cables as often.
using PacketPaths = std::map<PacketKey, std::vector<std::pair<uint32_t, uint32_t>>>;
PacketPaths paths_of(const PacketLog& log);

// "" when both runs moved every packet over the same cables; else the
// first packet that differs, its ends and both paths, for a person to read.
std::string paths_differ(const PacketPaths& a, const PacketPaths& b, const std::string& a_name = "the first run",
                         const std::string& b_name = "the second");

// The log as JSON of schema "weft-packet-log/1" (docs/fabric-model.md):
// `about` (the cluster, the op) first, then every hop, then what was lost.
inline constexpr const char* kPacketLogSchema = "weft-packet-log/1";
nlohmann::json packet_log_json(const PacketLog& log, const nlohmann::json& about = nlohmann::json::object());
// Throws weft::Error naming what is missing or of the wrong schema.
PacketLog packet_log_from_json(const nlohmann::json& j);
// A log's file (weft run --record, weft replay --out, weft-fabric-model
// replay --out) and its `about` (an empty object if it has none). Throw
// weft::Error naming a file that cannot be read or written, is not JSON or
// not of the schema.
PacketLog read_packet_log_file(const std::string& path, nlohmann::json* about = nullptr);
void write_packet_log_file(const std::string& path, const PacketLog& log, const nlohmann::json& about);

}  // namespace weft::transport
