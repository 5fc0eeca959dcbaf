// weft up, down, link and reset: a cluster's life and its cables.
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/port_argument.h"
#include "common/error.h"
#include "common/knobs.h"
#include "driver/cluster_file.h"
#include "driver/control_client.h"
#include "driver/paths.h"
#include "driver/run_dir.h"
#include "transport/fabric/fabric.h"

namespace weft::cli {
namespace {

int up(const std::string& cluster, const std::string& run_dir) {
    const std::string file = paths::cluster_file(cluster);
    // Refuse a bad file or bridge setting before starting anything, naming what is wrong.
    ClusterSpec spec = load_cluster(file, paths::load_built_board);
    if (spec.fabric.line)  // settings the fabric can never run with are refused now, not at the first op
        transport::cluster_fabric(spec.board, ClusterTopology::from_spec(spec), spec.fabric,
                                  file + ":" + std::to_string(spec.fabric.line) + ": ");
    knobs::check(knobs::Reader::kBridge);
    const auto t0 = std::chrono::steady_clock::now();
    spawn_bridge(file, run_dir);
    std::printf("cluster '%s' up: %u chips of board %s, %zu link%s, in %.2f s (run dir %s)\n", spec.name.c_str(),
                spec.num_chips, spec.board_name.c_str(), spec.links.size(), spec.links.size() == 1 ? "" : "s",
                seconds_since(t0), run_dir.c_str());
    return 0;
}

// Its control socket gone (deleted), a bridge is still found through the pid
// its lock holds, and stopped with SIGTERM.
int stop_through_lock(const std::string& run_dir, int pid) {
    const auto t0 = std::chrono::steady_clock::now();
    if (kill(pid, SIGTERM) != 0 && errno != ESRCH)
        throw Error("cannot stop weft-bridge pid " + std::to_string(pid) + ": " + strerror(errno));
    if (!run_dir::wait_released(run_dir, 20000))
        throw Error("weft-bridge pid " + std::to_string(pid) + " did not stop within 20 s of SIGTERM");
    std::printf("cluster down in %.2f s (its control socket was gone: stopped weft-bridge pid %d through %s/bridge.lock)\n",
                seconds_since(t0), pid, run_dir.c_str());
    return 0;
}

int down(const std::string& run_dir) {
    std::unique_ptr<ControlClient> client;
    try {
        client = std::make_unique<ControlClient>(run_dir);
    } catch (const NoClusterError&) {
        if (const int pid = run_dir::holder(run_dir)) return stop_through_lock(run_dir, pid);
        std::printf("no cluster is up in %s: nothing to stop\n", run_dir.c_str());
        return 0;  // the state asked for holds already
    }
    ControlClient& c = *client;
    const auto t0 = std::chrono::steady_clock::now();
    c.request({{"cmd", "shutdown"}});
    // Down means the run directory is free for the next 'weft up': the bridge
    // lets go of its lock only as it exits, after its socket.
    if (!c.wait_closed(20000) || !run_dir::wait_released(run_dir, 20000))
        throw Error("weft-bridge did not stop within 20 s (see " + run_dir + "/bridge.log)");
    std::printf("cluster down in %.2f s\n", seconds_since(t0));
    return 0;
}

struct LinkArgs {
    PortWords end;
    std::string state;
};

int link(LinkArgs a, const std::string& run_dir) {
    // "weft link 0.E down": the port came with the chip, so PORT holds the state.
    if (a.state.empty() && a.end.chip.find('.') != std::string::npos) std::swap(a.state, a.end.port);
    if (a.state != "up" && a.state != "down") throw UsageError("STATE: must be up or down, not '" + a.state + "'");
    auto cluster = Cluster::attach(run_dir);
    const ChipPort at = resolve(a.end, cluster->board(), static_cast<uint32_t>(cluster->size()));
    cluster.reset();
    ControlClient c(run_dir);
    const auto reply = c.request({{"cmd", "link"}, {"chip", at.chip}, {"port", at.port}, {"up", a.state == "up"}});
    const auto& l = reply["link"];
    std::printf("link chip %d.%s <-> chip %d.%s is %s\n", l["a"]["chip"].get<int>(),
                l["a"]["name"].get<std::string>().c_str(), l["b"]["chip"].get<int>(),
                l["b"]["name"].get<std::string>().c_str(), l["state"].get<std::string>().c_str());
    return 0;
}

int reset(uint32_t chip, const std::string& run_dir) {
    ControlClient c(run_dir);
    const auto t0 = std::chrono::steady_clock::now();
    c.request({{"cmd", "reset"}, {"chip", chip}}, nullptr, 15000);
    std::printf("chip %u reset, all cores READY in %.2f s\n", chip, seconds_since(t0));
    return 0;
}

}  // namespace

namespace {
// The names clusters/ holds now, not a list written once and left behind.
std::string cluster_help() {
    const std::string names = paths::cluster_list();
    return names.empty() ? "a cluster file" : "a cluster file, or a name in clusters/: " + names;
}
}  // namespace

Command add_up(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("up", "start a cluster from a cluster file or a name in clusters/");
    auto cluster = std::make_shared<std::string>();
    add_word(
        *cmd, "CLUSTER", "", *cluster, [](const std::string& name) { paths::cluster_file(name); }, cluster_help())
        ->required();
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [cluster, &g] { return up(*cluster, g.run_dir); }};
}

Command add_down(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("down", "stop the running cluster");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [&g] { return down(g.run_dir); }};
}

Command add_link(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("link", "pull the cable at a chip's port, or plug it back in");
    auto a = std::make_shared<LinkArgs>();
    add_chip_port(*cmd, a->end);
    add_word(*cmd, "STATE", "", a->state, one_of({"up", "down"}), "up: plugged in, down: pulled");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return link(*a, g.run_dir); }};
}

Command add_reset(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("reset", "reset one chip through QMP; its cores come back READY");
    auto chip = std::make_shared<uint32_t>(0);
    add_whole(*cmd, "CHIP", "", *chip, kIds, "the chip")->required();
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [chip, &g] { return reset(*chip, g.run_dir); }};
}

CLI::Option* add_cluster(CLI::App& cmd, std::string& into) {
    return add_word(
        cmd, "--cluster", "C", into, [](const std::string& name) { paths::cluster_file(name); },
        "a temporary cluster from this file or name; default: the running one, else ring8");
}

std::unique_ptr<Cluster> attach_or_start(const std::string& run_dir, const std::string& cluster,
                                         const std::string& fallback) {
    bool up = false;
    try {
        auto attached = Cluster::attach(run_dir);
        if (cluster.empty()) return attached;
        up = true;
    } catch (const Error&) {
    }
    const std::string file = paths::cluster_file(cluster.empty() ? fallback : cluster);
    knobs::check(knobs::Reader::kBridge);  // as weft up does: a usage error, not a failed start
    for (const std::string& dir : run_dir::remove_stale_temporaries(run_dir))
        std::fprintf(stderr, "removed %s, a temporary cluster's run directory whose weft has ended\n", dir.c_str());
    if (up)
        std::fprintf(stderr, "a cluster is up in %s; --cluster %s runs on a temporary one beside it, from %s\n",
                     run_dir.c_str(), cluster.c_str(), file.c_str());
    else
        std::fprintf(stderr, "no cluster up in %s: starting a temporary one from %s\n", run_dir.c_str(), file.c_str());
    return Cluster::start(file, run_dir::temporary(run_dir, getpid()));
}

}  // namespace weft::cli
