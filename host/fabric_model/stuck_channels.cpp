#include "fabric_model/stuck_channels.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "fabric/route.h"
#include "fabric_model/ranks.h"
#include "fabric_model/timed_fabric.h"

namespace weft::fabric_model {
namespace {

using transport::FabricDirection;

uint32_t word_at(uint64_t host_address) { return *reinterpret_cast<const volatile uint32_t*>(host_address); }

std::string receiver_name(const HeldChannel& c) {
    return "chip " + std::to_string(c.chip) + " port " + std::to_string(c.port) + " vc" + std::to_string(c.channel);
}

// The router on `chip` a packet leaving toward `next` (2D: a compass
// direction) goes out of; 1D: the one opposite the router it came in by.
int next_router(const transport::FabricBuilder& f, uint32_t chip, const transport::FabricRouterPlan& in,
                uint32_t next) {
    if (in.config.dims == 2) return f.router_index(chip, transport::compass_direction(next));
    const FabricDirection back = in.direction == FabricDirection::kForward ? FabricDirection::kBackward
                                                                           : FabricDirection::kForward;
    return f.router_index(chip, back);
}

// The receiver (router, vc) at the far end of router `out`'s cable.
std::pair<int, uint32_t> across(model::FabricModel& model, int out, uint32_t vc) {
    const transport::FabricRouterPlan& p = model.fabric().routers()[size_t(out)];
    if (abi::fabric_crosses_dateline(p.config.dateline, p.config.flags, vc)) vc = 1;
    const abi::PortState& far = model.cluster().memory(p.chip).control().port[p.port];
    for (size_t r = 0; r < model.router_count(); ++r) {
        const transport::FabricRouterPlan& q = model.fabric().routers()[r];
        if (q.chip == far.peer_chip && q.port == far.peer_port) return {int(r), vc};
    }
    return {-1, vc};
}

}  // namespace

std::vector<HeldChannel> held_channels(model::FabricModel& model) {
    std::vector<HeldChannel> out;
    for (size_t r = 0; r < model.router_count(); ++r) {
        if (!model.holds_router(r)) continue;  // another rank's: it holds nothing here
        const abi::FabricRouterConfig& c = model.router_config(r);
        const abi::FabricRouterStatus& s = model.router_status(r);
        const auto& link = *reinterpret_cast<const abi::FabricLinkWords*>(c.link_words);
        const uint32_t chip = model.fabric().routers()[r].chip;
        for (uint32_t v = 0; v < c.num_vcs; ++v) {
            // Signed, as the router reads it: back on its cable after the
            // control plane routed round it, a receiver reads on from the
            // peer's count, past packets the dead cable never brought, so
            // the count trails until the peer's next packet.
            const int32_t ahead = static_cast<int32_t>(link.filled[v] - s.receivers[v].done);
            if (ahead <= 0) continue;
            const uint32_t held = static_cast<uint32_t>(ahead);
            const abi::FabricRing& ring = c.receivers[v];
            const uint64_t head = ring.buffer + uint64_t(c.slot_size) * (s.receivers[v].done % ring.slots);
            const auto& h = *reinterpret_cast<const abi::FabricPacketHeader*>(head);
            out.push_back({uint32_t(r), chip, c.port, true, v, held, ring.slots, h.dst});
        }
        for (uint32_t i = 0; i < c.num_senders; ++i) {
            const abi::FabricRing& ring = c.senders[i];
            if (!ring.slots) continue;
            const uint32_t held = word_at(ring.written) - s.senders[i].done;
            if (held) out.push_back({uint32_t(r), chip, c.port, false, i, held, ring.slots, {}});
        }
    }
    return out;
}

uint64_t held_packets(model::FabricModel& model) {
    uint64_t n = 0;
    for (const HeldChannel& c : held_channels(model)) n += c.held;
    return n;
}

std::vector<uint32_t> slots_in_use(model::FabricModel& model) {
    std::vector<uint32_t> in_use(model.router_count(), 0);
    for (size_t r = 0; r < model.router_count(); ++r) in_use[r] = model.slots_in_use(r);
    return in_use;
}

std::vector<ChannelWait> channel_waits(model::FabricModel& model) {
    const transport::FabricBuilder& f = model.fabric();
    std::vector<ChannelWait> waits;
    for (const HeldChannel& c : held_channels(model)) {
        if (!c.receiver) continue;
        const abi::FabricRouterConfig& config = model.router_config(c.router);
        const abi::FabricRouterStatus& s = model.router_status(c.router);
        ChannelWait w{c};
        // The router decided where its head goes (and changed the header
        // for the next router): it says so; else decide as it will.
        uint32_t vc = c.channel;
        if (const uint32_t word = s.receivers[c.channel].waits_for) {
            w.direction = (word & 0xff) - 1, vc = word >> 8, w.decided = true;
        } else {
            const abi::FabricRing& ring = config.receivers[c.channel];
            abi::FabricPacketHeader h = *reinterpret_cast<const abi::FabricPacketHeader*>(
                ring.buffer + uint64_t(config.slot_size) * (s.receivers[c.channel].done % ring.slots));
            const auto* table = config.route_table ? reinterpret_cast<const abi::FabricRouteTable*>(config.route_table)
                                                   : nullptr;
            const fabric::Decision d =
                fabric::on_receive(h, fabric::Hop{config.dims, config.compass, config.self, table});
            if (!d.forward) continue;  // delivered here: it waits for no other channel
            w.direction = d.next;
            if (config.dims == 2) vc = fabric::vc_after_turn(c.channel, d.next, config.compass, config.flags);
        }
        const int out = next_router(f, c.chip, f.routers()[c.router], w.direction);
        if (out < 0) continue;
        const auto [to, to_vc] = across(model, out, vc);
        w.to_router = to, w.to_vc = to_vc;
        if (to >= 0) w.to_chip = f.routers()[size_t(to)].chip, w.to_port = f.routers()[size_t(to)].port;
        waits.push_back(w);
    }
    return waits;
}

std::vector<ChannelWait> wait_cycle_waits(model::FabricModel& model) { return wait_cycle_of(channel_waits(model)); }

std::vector<ChannelWait> wait_cycle_of(const std::vector<ChannelWait>& waits) {
    using Channel = std::pair<int, uint32_t>;  // (router, vc)
    std::map<Channel, ChannelWait> wait_of;
    for (const ChannelWait& w : waits) wait_of[{int(w.from.router), w.from.channel}] = w;
    auto next = [&](const Channel& at) { return Channel{wait_of.at(at).to_router, wait_of.at(at).to_vc}; };
    // Each channel waits for one other: follow the waits from each until one repeats.
    for (const auto& [start, _] : wait_of) {
        std::map<Channel, size_t> seen;
        std::vector<Channel> path;
        for (Channel at = start; wait_of.count(at); at = next(at)) {
            if (seen.count(at)) {
                std::vector<ChannelWait> cycle;
                for (size_t i = seen[at]; i < path.size(); ++i) cycle.push_back(wait_of.at(path[i]));
                return cycle;
            }
            seen[at] = path.size();
            path.push_back(at);
        }
    }
    return {};
}

std::string drop_report(model::FabricModel& model, const TimedFabric& engine) {
    std::string text;
    for (size_t r = 0; r < model.router_count(); ++r) {
        if (!engine.owns(model.fabric().routers()[r].chip)) continue;
        const abi::FabricRouterStatus& s = model.router_status(r);
        if (!s.dropped && !s.resent) continue;
        const transport::FabricRouterPlan& p = model.fabric().routers()[r];
        text += "  chip " + std::to_string(p.chip) + " port " + std::to_string(p.port) + ": " +
                std::to_string(s.dropped) + " dropped, " + std::to_string(s.resent) + " sent again\n";
    }
    return text;
}

namespace {

// Of `mine`, what lies on the chips this rank runs; then every rank's, in rank order.
template <typename T, typename ChipOf>
std::vector<T> from_owners(TimedFabric& engine, std::vector<T> mine, ChipOf chip_of) {
    if (engine.ranks().size() == 1) return mine;
    mine.erase(std::remove_if(mine.begin(), mine.end(), [&](const T& x) { return !engine.owns(chip_of(x)); }),
               mine.end());
    return values_from_every_rank(engine.ranks(), mine);
}

std::string report_of(const std::vector<HeldChannel>& held, const std::vector<ChannelWait>& cycle) {
    std::string text;
    for (const HeldChannel& c : held) {
        text += "  chip " + std::to_string(c.chip) + " port " + std::to_string(c.port) +
                (c.receiver ? " receiver vc" : " sender ") + std::to_string(c.channel) + ": " + std::to_string(c.held) +
                "/" + std::to_string(c.slots) + " slots held";
        if (c.receiver)
            text += ", head to chip " + std::to_string(c.head_dst.chip) + " of mesh " + std::to_string(c.head_dst.mesh);
        text += "\n";
    }
    if (!cycle.empty()) {
        text += "  cycle of waits:";
        for (const ChannelWait& w : cycle) text += " " + receiver_name(w.from) + " ->";
        text += " " + receiver_name(cycle.front().from) + "\n";
    }
    return text;
}

}  // namespace

std::vector<HeldChannel> held_channels(model::FabricModel& model, TimedFabric& engine) {
    std::vector<HeldChannel> held =
        from_owners(engine, held_channels(model), [](const HeldChannel& c) { return c.chip; });
    // In held_channels' own order, as one rank lists them.
    std::stable_sort(held.begin(), held.end(), [](const HeldChannel& a, const HeldChannel& b) {
        return std::tuple{a.router, !a.receiver, a.channel} < std::tuple{b.router, !b.receiver, b.channel};
    });
    return held;
}

std::vector<ChannelWait> channel_waits(model::FabricModel& model, TimedFabric& engine) {
    return from_owners(engine, channel_waits(model), [](const ChannelWait& w) { return w.from.chip; });
}

std::vector<std::string> wait_cycle(model::FabricModel& model) {
    std::vector<std::string> names;
    for (const ChannelWait& w : wait_cycle_waits(model)) names.push_back(receiver_name(w.from));
    return names;
}

std::string stuck_report(model::FabricModel& model, TimedFabric& engine) {
    const std::vector<HeldChannel> held = held_channels(model, engine);  // every rank calls both, in this order
    return report_of(held, wait_cycle_of(channel_waits(model, engine)));
}

}  // namespace weft::fabric_model
