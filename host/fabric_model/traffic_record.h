// A record of the packet traffic of a fabric model's run: each packet's
// injection, every cable it crossed and its arrival, in virtual time. It
// attaches to a TimedFabric (its on_packet_hop) and groups the hops it sees
// into packets; written as JSON of schema "weft-fabric-trace/1"
// (docs/fabric-model.md).
#pragma once
#include <stdint.h>

#include <iosfwd>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabric_model/timed_fabric.h"

namespace weft::fabric_model {

inline constexpr const char* kTraceSchema = "weft-fabric-trace/1";

struct RecordedHop {
    uint64_t left_ns = 0, landed_ns = 0;
    uint32_t chip = 0, port = 0, to_chip = 0;  // from `chip` out of `port`, onto `to_chip`
};

struct RecordedPacket {
    abi::FabricNodeId src{}, dst{};
    uint8_t command = 0, send_type = 0;
    uint32_t payload_bytes = 0, seq = 0;
    uint64_t dst_address = 0, sem_address = 0;
    uint32_t repeat = 0;   // earlier packets alike in every field above
    bool arrived = false;  // a hop landed on its destination chip
    std::vector<RecordedHop> hops;

    uint64_t injected_ns() const { return hops.front().left_ns; }
    // The last hop's landing: on its destination chip once arrived (the NoC
    // write into the destination's memory that follows is not counted).
    uint64_t delivered_ns() const { return hops.back().landed_ns; }
};

class TrafficRecorder {
public:
    // Records from now on, at most `max_packets` packets: hops of packets
    // beyond them are counted, not kept.
    explicit TrafficRecorder(TimedFabric& engine, size_t max_packets = 1'000'000);
    ~TrafficRecorder();
    TrafficRecorder(const TrafficRecorder&) = delete;
    TrafficRecorder& operator=(const TrafficRecorder&) = delete;

    // On MPI ranks each rank sees the hops that land on its own chips: every
    // rank calls gather() once the run is over, and then each holds every
    // packet (hops put in order of landing). One rank: nothing to do.
    void gather();
    const std::vector<RecordedPacket>& packets() const { return packets_; }
    bool truncated() const { return unrecorded_hops_ != 0; }
    uint64_t unrecorded_hops() const { return unrecorded_hops_; }

    // The whole record; `about` (the run: its op, size, ...) goes in first.
    nlohmann::json as_json(const nlohmann::json& about = nlohmann::json::object()) const;
    // The same, written packet by packet: a million packets need not be one
    // JSON value in memory.
    void write(std::ostream& out, const nlohmann::json& about = nlohmann::json::object()) const;

private:
    // What a packet keeps from hop to hop. Two packets alike in all of it
    // (the same bytes written twice) are told apart by where each one is.
    struct Key {
        uint32_t src, dst, payload_bytes, seq;
        uint64_t dst_address, sem_address;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const;
    };
    struct Alike {
        uint32_t seen = 0;           // packets with this key so far
        std::vector<uint32_t> open;  // those not yet at their destination, oldest first
    };

    // A hop as the engine saw it, kept until gather() on ranks.
    struct Hop {
        Key key;
        uint64_t left_ns, landed_ns;
        uint32_t from_chip, port, to_chip;
        abi::FabricNodeId src, dst;
        uint8_t command, send_type;
    };

    void record(const PacketHop& hop);
    void stitch(const Hop& hop);
    nlohmann::json header_json(const nlohmann::json& about) const;

    TimedFabric& engine_;
    size_t max_packets_;
    std::vector<uint32_t> node_of_chip_;  // mesh << 16 | chip of each cluster chip
    std::vector<RecordedPacket> packets_;
    std::unordered_map<Key, Alike, KeyHash> alike_;
    std::vector<Hop> unstitched_;  // on ranks, until gather()
    uint64_t unrecorded_hops_ = 0;
};

nlohmann::json packet_json(const RecordedPacket& p, uint32_t id);

}  // namespace weft::fabric_model
