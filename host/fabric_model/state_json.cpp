#include "fabric_model/state_json.h"

#include <string.h>

#include <map>

#include "driver/cluster_file.h"
#include "fabric_model/stuck_channels.h"

namespace weft::fabric_model {
namespace {

using nlohmann::json;
using transport::FabricDirection;

// Receivers and senders of a router in one map: senders' keys start here.
constexpr uint32_t kSenderBase = 1000;

std::string direction_name(FabricDirection d) {
    switch (d) {
        case FabricDirection::kForward: return "forward";
        case FabricDirection::kBackward: return "backward";
        default: return std::string(1, abi::fabric_letter(uint32_t(d)));
    }
}

const char* link_state_name(uint32_t state) {
    return state == abi::kLinkUp ? "up" : state == abi::kLinkDown ? "failed" : "unwired";
}

const char* router_state_name(uint32_t state) {
    static const char* const kNames[] = {"initializing", "running", "paused", "draining", "rerouted"};
    return state < std::size(kNames) ? kNames[state] : "unknown";
}

json chips_json(const ClusterTopology& t) {
    json chips = json::array();
    for (uint32_t c = 0; c < t.chips(); ++c) {
        const ChipCoord at = t.coord(c);
        chips.push_back({{"id", c}, {"mesh", at.mesh}, {"x", at.x}, {"y", at.y}});
    }
    return chips;
}

json meshes_json(const ClusterTopology& t) {
    json meshes = json::array();
    for (const Mesh& m : t.meshes())
        meshes.push_back({{"id", m.id},
                          {"width", m.width},
                          {"height", m.height},
                          {"topology", m.topology},
                          {"first_chip", m.first_chip}});
    return meshes;
}

// The ports' states come from the chips' control blocks, where a failed
// cable shows (the topology the model was made from has every cable up).
json cables_json(model::FabricModel& model, const ClusterTopology& t) {
    const BoardInfo& board = model.cluster().board();
    auto end = [&](uint32_t chip, uint32_t port) {
        return json{{"chip", chip}, {"port", port}, {"name", port_name(board, port)}};
    };
    json cables = json::array();
    for (const LinkInfo& l : t.links()) {
        const uint32_t a = model.cluster().memory(l.chip_a).control().port[l.port_a].state;
        const uint32_t b = model.cluster().memory(l.chip_b).control().port[l.port_b].state;
        const bool up = a == abi::kLinkUp && b == abi::kLinkUp;
        cables.push_back({{"a", end(l.chip_a, l.port_a)},
                          {"b", end(l.chip_b, l.port_b)},
                          {"state", up ? "up" : link_state_name(a == abi::kLinkUp ? b : a)},
                          {"exit", t.coord(l.chip_a).mesh != t.coord(l.chip_b).mesh}});
    }
    return cables;
}

json wait_json(const ChannelWait& w, uint32_t dims) {
    json j = {{"direction", dims == 2 ? std::string(1, abi::fabric_letter(w.direction)) : std::string("onward")},
              {"decided", w.decided}};
    if (w.to_router >= 0) j["receiver"] = {{"chip", w.to_chip}, {"port", w.to_port}, {"vc", w.to_vc}};
    return j;
}

json router_json(model::FabricModel& model, size_t r, const std::map<std::pair<size_t, uint32_t>, HeldChannel>& held,
                 const std::map<std::pair<size_t, uint32_t>, ChannelWait>& waits) {
    const transport::FabricRouterPlan& plan = model.fabric().routers()[r];
    const abi::FabricRouterConfig& c = model.router_config(r);
    const abi::FabricRouterStatus& s = model.router_status(r);
    json receivers = json::array();
    for (uint32_t v = 0; v < c.num_vcs; ++v) {
        const auto h = held.find({r, v});
        json rx = {{"vc", v}, {"slots", c.receivers[v].slots}, {"held", h == held.end() ? 0 : h->second.held}};
        if (h != held.end()) rx["head_dst"] = node_json(h->second.head_dst);
        if (const auto w = waits.find({r, v}); w != waits.end()) rx["waits_for"] = wait_json(w->second, c.dims);
        receivers.push_back(rx);
    }
    json senders = json::array();  // only those holding packets: a 2D router has up to a dozen
    for (uint32_t i = 0; i < c.num_senders; ++i)
        if (const auto h = held.find({r, kSenderBase + i}); h != held.end())
            senders.push_back({{"channel", i}, {"slots", h->second.slots}, {"held", h->second.held}});
    return {{"index", r},
            {"chip", plan.chip},
            {"port", plan.port},
            {"direction", direction_name(plan.direction)},
            {"peer_chip", plan.peer_chip},
            {"vcs", c.num_vcs},
            {"slot_bytes", c.slot_size},
            {"state", router_state_name(s.state)},
            {"delivered", s.delivered},
            {"forwarded", s.forwarded},
            {"dropped", s.dropped},
            {"bytes_sent", s.bytes_sent},
            {"bytes_received", s.bytes_received},
            {"receivers", receivers},
            {"senders", senders}};
}

json routers_json(model::FabricModel& model) {
    std::map<std::pair<size_t, uint32_t>, HeldChannel> held;  // (router, vc or kSenderBase + sender)
    for (const HeldChannel& h : held_channels(model))
        held[{h.router, h.receiver ? h.channel : kSenderBase + h.channel}] = h;
    std::map<std::pair<size_t, uint32_t>, ChannelWait> waits;
    for (const ChannelWait& w : channel_waits(model)) waits[{w.from.router, w.from.channel}] = w;
    json routers = json::array();
    for (size_t r = 0; r < model.router_count(); ++r) routers.push_back(router_json(model, r, held, waits));
    return routers;
}

json l0_json(const abi::FabricRouteTable& table, abi::FabricNodeId self) {
    json l0 = json::array();
    for (uint16_t to = 0; to < table.chips; ++to)
        l0.push_back(route_letters(abi::fabric_route_entry(table, self.mesh, {self.mesh, to})));
    return l0;
}

// The detour tables (live_reroute.h) the chip's routers of dead cables route
// their packets round them by, where they differ from the chip's own.
json detours_json(model::FabricModel& model, uint32_t chip, const abi::FabricRouteTable& own) {
    json detours = json::array();
    for (size_t r = 0; r < model.router_count(); ++r) {
        const abi::FabricRouterConfig& c = model.router_config(r);
        if (model.fabric().routers()[r].chip != chip || !c.detour_table) continue;
        const auto& d = model.at<abi::FabricRouteTable>(r, c.detour_table);
        if (d.chips == 0) continue;  // never written: another rank's router, no move round its cable
        if (d.chips == own.chips && std::memcmp(d.to, own.to, sizeof(abi::FabricRouteEntry) * own.chips) == 0) continue;
        detours.push_back({{"port", model.fabric().routers()[r].port}, {"l0", l0_json(d, model.fabric().node(chip))}});
    }
    return detours;
}

// L0: to each chip of its own mesh, by its number in the mesh; L1: out
// toward each mesh, by mesh id (the entry for its own mesh is ""). As the
// routers hold them now, with the detours of dead cables' routers.
json tables_json(model::FabricModel& model, const ClusterTopology& t) {
    const transport::FabricBuilder& f = model.fabric();
    json tables = json::array();
    if (f.dims() != 2) return tables;
    for (uint32_t chip = 0; chip < t.chips(); ++chip) {
        const abi::FabricNodeId self = f.node(chip);
        const abi::FabricRouteTable& table = live_table(model, chip);
        json l1 = json::array();
        for (uint16_t mesh = 0; mesh < table.meshes; ++mesh)
            l1.push_back(mesh == self.mesh ? "" : route_letters(abi::fabric_route_entry(table, self.mesh, {mesh, 0})));
        json entry = {{"chip", chip}, {"node", node_json(self)}, {"l0", l0_json(table, self)}, {"l1", l1}};
        if (json detours = detours_json(model, chip, table); !detours.empty()) entry["detours"] = std::move(detours);
        tables.push_back(std::move(entry));
    }
    return tables;
}

}  // namespace

json node_json(abi::FabricNodeId n) { return {{"mesh", n.mesh}, {"chip", n.chip}}; }

const abi::FabricRouteTable& live_table(model::FabricModel& model, uint32_t chip) {
    for (size_t r = 0; r < model.router_count(); ++r) {
        if (model.fabric().routers()[r].chip != chip || !model.router_config(r).route_table) continue;
        const auto& t = model.at<abi::FabricRouteTable>(r, model.router_config(r).route_table);
        // Never written (another rank's router, no move rewrote it): the builder's.
        if (t.chips) return t;
    }
    return model.fabric().table(chip);
}

nlohmann::json state_json(model::FabricModel& model, uint64_t now_ns, const StateOptions& options) {
    const ClusterTopology t = model.cluster().topology();
    const transport::FabricBuilder& f = model.fabric();
    json state = {{"schema", kStateSchema},
                  {"time_ns", now_ns},
                  {"cluster", model.cluster().spec().name},
                  {"fabric", {{"dims", f.dims()}, {"ring", f.ring()}, {"packet_bytes", f.spec().packet_bytes}}},
                  {"meshes", meshes_json(t)},
                  {"chips", chips_json(t)},
                  {"cables", cables_json(model, t)},
                  {"routers", routers_json(model)}};
    if (options.tables) state["tables"] = tables_json(model, t);
    return state;
}

nlohmann::json state_json(Simulation& sim, const StateOptions& options) {
    return state_json(sim.model(), sim.engine().now_ns(), options);
}

}  // namespace weft::fabric_model
