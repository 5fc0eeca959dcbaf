#include "transport/fabric/router_telemetry.h"

#include <algorithm>

#include "driver/resident.h"
#include "weft/abi/resident.h"

namespace weft::transport {

uint64_t RouterView::packets_sent() const {
    uint64_t n = 0;
    for (const abi::FabricChannelStatus& s : status.senders) n += s.done;
    return n;
}

uint64_t RouterView::packets_received() const {
    uint64_t n = 0;
    for (const abi::FabricChannelStatus& r : status.receivers) n += r.done;
    return n;
}

const char* router_state_name(uint32_t state) {
    switch (state) {
        case abi::kFabricRouterInitializing: return "initializing";
        case abi::kFabricRouterRunning: return "running";
        case abi::kFabricRouterPaused: return "paused";
        case abi::kFabricRouterDraining: return "draining";
        case abi::kFabricRouterRerouted: return "rerouted";
    }
    return "unknown";
}

std::string deadlock_avoidance(uint32_t flags) {
    if (flags & abi::kFabricBubble) return "bubble flow control (every packet on VC 0)";
    if (flags & abi::kFabricMeshClasses)
        return (flags & abi::kFabricEscapeVc)
                   ? "VC 1 for packets from another mesh, VC 2 for packets sent round a dead cable"
                   : "VC 1 for packets from another mesh";
    if ((flags & abi::kFabricEscapeVc) && (flags & abi::kFabricRingEscape))
        return "datelines (VC 1 past each ring's dateline cable), VC 2 for packets sent round a dead cable";
    if (flags & abi::kFabricEscapeVc) return "VC 1 for packets sent round a dead cable (one mesh)";
    if (flags & abi::kFabricNoDateline) return "no dateline: a ring can deadlock";
    if (flags & abi::kFabricRingEscape)
        return "datelines (VC 1 past each ring's dateline cable), VC 2 for packets sent back round a dead cable";
    return "datelines (VC 1 past each ring's dateline cable)";
}

std::vector<RouterView> read_routers(Machine& cluster) {
    std::vector<RouterView> out;
    for (const resident::Running& r : resident::list(cluster)) {
        if (r.name != "fabric_router") continue;
        abi::ResidentControl control{};
        cluster.read(r.chip, r.control, &control, sizeof control);
        if (control.magic != abi::kResidentMagic || !control.config) continue;
        abi::FabricRouterConfig config{};
        cluster.read(r.chip, control.config, &config, sizeof config);
        if (config.magic != abi::kFabricRouterMagic) continue;
        RouterView v;
        v.chip = r.chip;
        v.core = r.core;
        v.port = config.port;
        v.way = std::string(1, abi::fabric_letter(cluster.board().ports.at(config.port).direction));
        v.status_address = config.status;
        v.relay = (config.flags & abi::kFabricRelay) != 0;
        v.flags = config.flags;
        v.num_vcs = std::min(config.num_vcs, abi::kFabricMaxVcs);
        cluster.read(r.chip, config.status, &v.status, sizeof v.status);
        out.push_back(v);
    }
    return out;
}

size_t command_routers(Machine& cluster, uint32_t command) {
    const std::vector<RouterView> routers = read_routers(cluster);
    for (const RouterView& r : routers) {
        const uint64_t at = r.status_address + offsetof(abi::FabricRouterStatus, command);
        cluster.write(r.chip, at, &command, sizeof command);
        cluster.ring_core(r.chip, r.core);  // it may sleep on its doorbell
    }
    return routers.size();
}

}  // namespace weft::transport
