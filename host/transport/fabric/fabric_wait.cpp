#include "transport/fabric/fabric_wait.h"

#include <sstream>

#include "driver/cluster_file.h"
#include "driver/wait_decoders.h"
#include "transport/fabric/router_telemetry.h"
#include "weft/abi/fabric_router.h"

namespace weft::transport {
namespace {

const char* command_name(uint8_t c) {
    switch (c) {
        case abi::kFabricWrite: return "write";
        case abi::kFabricAtomicInc: return "atomic inc";
        case abi::kFabricWriteInc: return "write+inc";
        case abi::kFabricInlineWrite: return "inline write";
        case abi::kFabricScatterWrite: return "scatter write";
    }
    return "bad command";
}

std::string describe_packet(const MachineChip& chip, uint64_t slot, uint32_t dims) {
    abi::FabricPacketHeader h;
    chip.read(slot, &h, sizeof h);
    std::ostringstream o;
    o << "head packet #" << h.seq << " from chip " << h.src.chip << " (mesh " << h.src.mesh << ") to chip "
      << h.dst.chip << ": " << command_name(h.noc_command) << ", " << h.payload_bytes << " B, "
      << (h.send_type == abi::kFabricMulticast ? "multicast to " + std::to_string(h.mcast_count) + " chips, " : "")
      << int(h.hops) << " hop(s) to go, TTL " << int(h.ttl) << ", VC " << int(h.vc);
    if (dims == 2 && h.hops > 1) {
        o << ", then";
        for (uint32_t k = 0, r = h.route; k + 1 < h.hops && k < 16; ++k, r >>= 2) o << " " << abi::fabric_letter(r);
    }
    return o.str();
}

uint64_t slot_at(const abi::FabricRing& r, uint32_t slot_size, uint32_t n) {
    return r.buffer + uint64_t(slot_size) * (n % r.slots);
}

// Senders are the lanes, then the pass-through channels by group
// (abi::fabric_pass_groups): 1D one per VC; 2D one per VC from each of the
// chip's other routers, in compass order (and from itself, between meshes).
std::string sender_name(const abi::FabricRouterConfig& c, uint32_t i) {
    const uint32_t lanes = abi::fabric_lanes(c);
    if (i < lanes) return "worker lane " + std::to_string(i);
    const uint32_t k = i - lanes, vc = k % c.num_vcs;
    if (c.flags & abi::kFabricRelay) return "fallback VC " + std::to_string(vc);
    if (c.dims != 2) return "pass-through VC " + std::to_string(vc);
    uint32_t from = k / c.num_vcs;
    if (!(c.flags & abi::kFabricMeshClasses) && from >= c.compass) ++from;
    if (from == c.compass) return "loopback VC " + std::to_string(vc);
    return std::string("pass-through from the ") + abi::fabric_letter(from) + " router, VC " + std::to_string(vc);
}

}  // namespace

std::string fabric_channel_name(const abi::FabricRouterConfig& c, uint32_t channel) {
    if (channel < c.num_senders) return sender_name(c, channel);
    return "receiver VC " + std::to_string(channel - c.num_senders);
}

namespace {

// How long sender i's head packet has waited; a router paused (or draining,
// for a worker lane) holds it by command, which is no wait for room.
std::string held_for(const abi::FabricRouterConfig& c, const abi::FabricRouterStatus& st, uint32_t i) {
    if (!abi::fabric_router_sends(st.state, i < abi::fabric_lanes(c)))
        return std::string(", held: the router is ") +
               (st.state == abi::kFabricRouterPaused ? "paused" : "draining its worker lanes");
    return ", still for " + std::to_string(st.senders[i].stuck_us) + " us";
}

std::string describe_senders(const MachineChip& chip, const abi::FabricRouterConfig& c, const abi::FabricLinkWords& lw,
                             const abi::FabricRouterStatus& st) {
    std::ostringstream o;
    for (uint32_t i = 0; i < c.num_senders && i < abi::kFabricMaxSenders; ++i) {
        const abi::FabricRing& r = c.senders[i];
        const uint32_t written = chip.read32(r.written), sent = st.senders[i].done;
        if (written == sent && sent == st.senders[i].freed) continue;  // idle
        o << "\n        " << sender_name(c, i) << ": " << written - st.senders[i].freed << "/" << r.slots
          << " slots used, " << written << " written, " << sent << " sent";
        if (written != sent)
            o << "; " << describe_packet(chip, slot_at(r, c.slot_size, sent), c.dims) << held_for(c, st, i);
    }
    for (uint32_t v = 0; v < c.num_vcs; ++v)
        o << "\n        credits for the peer's VC " << v << " receiver: " << lw.acked[v] << " released by it";
    return o.str();
}

std::string describe_receivers(const MachineChip& chip, const abi::FabricRouterConfig& c,
                               const abi::FabricLinkWords& lw, const abi::FabricRouterStatus& st) {
    std::ostringstream o;
    for (uint32_t v = 0; v < c.num_vcs && v < abi::kFabricMaxVcs; ++v) {
        const uint32_t filled = lw.filled[v], handled = st.receivers[v].done, freed = st.receivers[v].freed;
        // Signed, as the router reads them: back on its cable from detours,
        // it reads on from the peer's count, which `filled` trails until
        // the peer's next packet (what the dead cable never brought went round).
        if (static_cast<int32_t>(filled - freed) <= 0) continue;
        o << "\n        receiver VC " << v << ": " << filled - freed << "/" << c.receivers[v].slots << " slots used, "
          << filled << " arrived, " << handled << " handled";
        if (static_cast<int32_t>(filled - handled) > 0)
            o << "; " << describe_packet(chip, slot_at(c.receivers[v], c.slot_size, handled), c.dims) << ", still for "
              << st.receivers[v].stuck_us << " us";
        if (const uint32_t w = st.receivers[v].waits_for)  // its route is decided: where it waits for room
            o << ", waiting to go "
              << (c.dims == 2 ? std::string(1, abi::fabric_letter((w & 0xff) - 1)) : std::string("on")) << " on VC "
              << (w >> 8);
    }
    return o.str();
}

std::string describe_router(const MachineChip& chip, const abi::HartStatus& status) {
    abi::FabricRouterConfig c;
    abi::FabricLinkWords lw;
    abi::FabricRouterStatus st;
    try {
        chip.read(status.wait_addr, &c, sizeof c);
        chip.read(c.link_words, &lw, sizeof lw);
        chip.read(c.status, &st, sizeof st);
    } catch (...) {
        return "fabric router with an unreadable configuration";
    }
    std::ostringstream o;
    o << "fabric router on port " << port_name(chip.board(), c.port) << (c.dateline ? " (dateline)" : "");
    // Paused or draining, it holds traffic on purpose (weft fabric --pause,
    // the control plane): the first thing to know of an op that timed out.
    if (st.state != abi::kFabricRouterRunning) o << ", " << router_state_name(st.state);
    o << ": " << st.delivered << " delivered, " << st.forwarded << " forwarded, " << st.dropped << " dropped, " << st.timeouts
      << " timeouts";
    try {
        o << describe_senders(chip, c, lw, st) << describe_receivers(chip, c, lw, st);
    } catch (...) {
        o << " (channels unreadable)";
    }
    return o.str();
}

}  // namespace

void register_fabric_wait_decoder() {
    static const bool done = [] {
        register_wait_decoder(abi::kWaitFabricRouter, "fabric", describe_router);
        return true;
    }();
    (void)done;
}

}  // namespace weft::transport
