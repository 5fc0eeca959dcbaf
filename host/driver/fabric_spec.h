// The fabric's settings: the cluster file's fabric: section (defaults when
// absent), carried in the bridge's info, and what a fabric builder is built
// with. One struct from the file to the routers' configuration.
#pragma once
#include <stdint.h>

#include <string>

#include <nlohmann/json.hpp>

#include "weft/abi/fabric_router.h"

namespace weft {

struct FabricSpec {
    std::string topology = "auto";  // auto | line | ring | mesh | torus
    // Routing planes the collectives' fabric runs on, a fabric each (0: every
    // plane of the board, or 1 with fallback relays, which take the other
    // planes' cables).
    uint32_t planes = 0;
    uint32_t slots = 8;  // per channel
    // A packet's payload, a multiple of 64. 0 in a cluster file: the largest
    // up to 16 KiB with which the routers fit the board (transport::cluster_fabric);
    // a builder given 0 uses kDefaultPacketBytes.
    uint32_t packet_bytes = 0;
    uint32_t lanes = 4;                 // worker lanes per router (its sender channel 0)
    uint32_t router_timeout_ms = 2000;  // a head packet stuck this long is reported; 0: never
    // The fabric's routers get a fallback relay on another plane's cable
    // between the same chips (the same ways), where one exists: when their cable dies,
    // traffic moves onto it, nothing lost or sent twice (the spec's Ethernet
    // fallback channels). Those ports' cores are then the fabric's.
    bool fallback = false;
    // Flow control on a ring: false, the dateline VC; true, bubble flow
    // control (abi::kFabricBubble; 1D fabrics). The file's flow_control: dateline | bubble.
    bool bubble = false;
    uint32_t flags = 0;  // abi::FabricRouterFlags: tests and benches only, not in the file
    // Records each router keeps of the latest packets it sent over its cable
    // (abi::FabricPacketRecord): a packet log, as `weft run --record` asks
    // for and the fabric model replays. 0: none. Not in the file.
    uint32_t record_packets = 0;
    // The fabric model's: a chip's routers all read one copy of its tables,
    // its first router's, as flat host memory lets them; on silicon and QEMU
    // each router keeps its own in its L1. Not in the file.
    bool table_per_chip = false;
    int line = 0;        // of the file's section, 0: none

    static constexpr uint32_t kDefaultPacketBytes = 4096;
    uint32_t planes_on(uint32_t board_planes) const {
        if (planes) return planes;
        return fallback || board_planes == 0 ? 1 : board_planes;
    }
    uint32_t payload_bytes() const { return packet_bytes ? packet_bytes : kDefaultPacketBytes; }
    // A router slot: one packet, header included.
    uint32_t slot_bytes() const { return payload_bytes() + abi::kFabricHeaderBytes; }

    nlohmann::json to_json() const;  // as the bridge's info carries it
    static FabricSpec from_json(const nlohmann::json& j);
};

}  // namespace weft
