// weft fault CHIP PORT COMMAND: wire faults, the cable, the mode and the
// shaping of one link, each action a command of its own with its arguments.
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/link_text.h"
#include "cli/port_argument.h"
#include "driver/cluster_file.h"

namespace weft::cli {
namespace {

// What an action asks of the link: fault settings, and for up/down the cable.
struct Change {
    nlohmann::json faults = nlohmann::json::object();
    std::optional<bool> plugged;
};
using Action = std::function<Change()>;
using Actions = std::map<const CLI::App*, Action>;

struct FaultArgs {
    PortWords end;
    double rate = 0, gbps = 0, latency_us = 0;
    uint32_t period_ms = 0, down_ms = 0;
    std::string mode;
    Actions actions;
};

void print_link(const nlohmann::json& l) {
    const nlohmann::json& f = l["faults"];
    const nlohmann::json& shape = l["shaping"];
    // The cable's state, then the link layer's over it (which notices a pull a little later).
    std::printf("link chip %d.%s <-> chip %d.%s: %s (link layer %s), drop %g, ber %g, flap %u/%u ms, %s, mode %s%s\n",
                l["a"]["chip"].get<int>(), l["a"]["name"].get<std::string>().c_str(), l["b"]["chip"].get<int>(),
                l["b"]["name"].get<std::string>().c_str(), l["state"].get<std::string>().c_str(),
                l["link_state"].get<std::string>().c_str(), f["drop_rate"].get<double>(),
                f["bit_error_rate"].get<double>(), f["flap_period_ms"].get<unsigned>(),
                f["flap_down_ms"].get<unsigned>(),
                describe_shaping(shape["bandwidth_gbps"].get<double>(), shape["latency_us"].get<double>()).c_str(),
                l["mode"].get<std::string>().c_str(),
                l["mode_pending"].get<bool>() ? " (switching once the link drains)" : "");
}

int fault(const FaultArgs& a, const Change& change, const std::string& run_dir) {
    auto cluster = Cluster::attach(run_dir);
    const ChipPort at = resolve(a.end, cluster->board(), static_cast<uint32_t>(cluster->size()));
    if (change.plugged) cluster->set_link(at.chip, at.port, *change.plugged);
    // Also with no faults to set: the reply is the link as it now is.
    print_link(cluster->set_fault(at.chip, at.port, change.faults));
    return 0;
}

Change faults(nlohmann::json f) { return Change{std::move(f), std::nullopt}; }
Change cable(bool plugged) { return Change{nlohmann::json::object(), plugged}; }

void add_wire_actions(CLI::App& fault, FaultArgs& a) {
    CLI::App* drop = fault.add_subcommand("drop", "the wire loses this share of frames");
    add_real(*drop, "RATE", a.rate, 0, 1, "frames lost, e.g. 0.01")->required();
    a.actions[drop] = [&a] { return faults({{"drop_rate", a.rate}}); };
    CLI::App* ber = fault.add_subcommand("ber", "the wire flips this share of bits");
    add_real(*ber, "RATE", a.rate, 0, 1, "bits flipped, e.g. 1e-6")->required();
    a.actions[ber] = [&a] { return faults({{"bit_error_rate", a.rate}}); };
    CLI::App* flap = fault.add_subcommand("flap", "a flapping carrier: down DOWN_MS of every PERIOD_MS");
    add_whole(*flap, "PERIOD_MS", "", a.period_ms, {0, UINT32_MAX}, "the period in ms (0: no flapping)")->required();
    add_whole(*flap, "DOWN_MS", "", a.down_ms, {0, UINT32_MAX}, "the time down in each period, in ms")->required();
    a.actions[flap] = [&a] { return faults({{"flap_period_ms", a.period_ms}, {"flap_down_ms", a.down_ms}}); };
    a.actions[fault.add_subcommand("clear", "remove every fault and plug the cable in; the mode and shaping stay")] =
        [] {
            return faults({{"clear", true}});
        };
}

void add_link_actions(CLI::App& fault, FaultArgs& a) {
    a.actions[fault.add_subcommand("down", "pull the cable")] = [] { return cable(false); };
    a.actions[fault.add_subcommand("up", "plug the cable back in")] = [] { return cable(true); };
    CLI::App* mode = fault.add_subcommand("mode", "how the link's MACs treat a bad frame");
    add_word(*mode, "MODE", "", a.mode, one_of({"ttlink", "compliance"}),
             "ttlink: Go-Back-N, every frame resent until it lands; compliance: a bad frame is lost")
        ->required();
    a.actions[mode] = [&a] { return faults({{"mode", a.mode}}); };
    CLI::App* shape = fault.add_subcommand("shape", "each direction at GB_PER_S, each frame LATENCY_US on the wire");
    add_real(*shape, "GB_PER_S", a.gbps, 0, kMaxLinkGBps,
             "GB/s each way (0: as fast as the bridge copies; 0 alone: unshaped, the latency cleared too)")
        ->required();
    const CLI::Option* latency =
        add_real(*shape, "LATENCY_US", a.latency_us, 0, kMaxLinkLatencyUs, "us per frame (default: unchanged)");
    a.actions[shape] = [&a, latency] {
        Change c = faults({{"bandwidth_gbps", a.gbps}});
        if (latency->count()) c.faults["latency_us"] = a.latency_us;
        else if (a.gbps == 0)
            c.faults["latency_us"] = 0.0;  // `shape 0` means unshaped, not "full speed plus the old latency"
        return c;
    };
}

}  // namespace

Command add_fault(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("fault", "faults, cable, mode and shaping of the link at CHIP PORT");
    auto a = std::make_shared<FaultArgs>();
    add_chip_port(*cmd, a->end);
    add_wire_actions(*cmd, *a);
    add_link_actions(*cmd, *a);
    for (CLI::App* action : cmd->get_subcommands({})) action->group("Commands");
    cmd->require_subcommand(1, 1);
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [cmd, a, &g] { return fault(*a, a->actions.at(cmd->get_subcommands().front())(), g.run_dir); }};
}

}  // namespace weft::cli
