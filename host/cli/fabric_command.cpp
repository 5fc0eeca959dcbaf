// weft fabric: every running fabric router's state, counters and rates,
// sampled twice an interval apart; --pause, --drain and --resume command them.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "transport/fabric/router_telemetry.h"

namespace weft::cli {
namespace {

struct FabricArgs {
    double interval = 1.0;
    bool json = false;
    std::string command;  // pause | drain | resume | ""
};

using transport::RouterView;

// Rates over the interval from two samples of the same router.
struct Rates {
    double out_mbs = 0, in_mbs = 0, busy = 0;
    bool alive = false;  // its heartbeat moved
};

Rates rates_of(const RouterView& a, const RouterView& b, double seconds) {
    Rates r;
    r.out_mbs = double(b.status.bytes_sent - a.status.bytes_sent) / seconds / 1e6;
    r.in_mbs = double(b.status.bytes_received - a.status.bytes_received) / seconds / 1e6;
    const double busy = double(b.status.busy_ticks - a.status.busy_ticks);
    const double idle = double(b.status.idle_ticks - a.status.idle_ticks);
    r.busy = busy + idle > 0 ? busy / (busy + idle) : 0;
    r.alive = b.status.heartbeat != a.status.heartbeat;
    return r;
}

nlohmann::json per_vc(const RouterView& v) {
    nlohmann::json out = nlohmann::json::array();
    for (uint32_t vc = 0; vc < v.num_vcs; ++vc)
        out.push_back({{"vc", vc},
                       {"packets_sent", v.status.vc_packets_sent[vc]},
                       {"bytes_sent", v.status.vc_bytes_sent[vc]},
                       {"packets_received", v.status.receivers[vc].done},
                       {"bytes_received", v.status.vc_bytes_received[vc]}});
    return out;
}

nlohmann::json to_json(const RouterView& v, const Rates& r) {
    return {{"chip", v.chip},
            {"core", v.core},
            {"port", v.port},
            {"way", v.way},
            {"state", transport::router_state_name(v.status.state)},
            {"relay", v.relay},
            {"resent", v.status.resent},
            {"packets_sent", v.packets_sent()},
            {"packets_received", v.packets_received()},
            {"delivered", v.status.delivered},
            {"forwarded", v.status.forwarded},
            {"dropped", v.status.dropped},
            {"timeouts", v.status.timeouts},
            {"bytes_sent", v.status.bytes_sent},
            {"bytes_received", v.status.bytes_received},
            {"out_mb_per_s", r.out_mbs},
            {"in_mb_per_s", r.in_mbs},
            {"busy", r.busy},
            {"heartbeat_moved", r.alive},
            {"vcs", per_vc(v)},
            {"deadlock_avoidance", transport::deadlock_avoidance(v.flags)}};
}

int fabric(const std::string& run_dir, const FabricArgs& a) {
    auto cluster = Cluster::attach(run_dir);
    if (!a.command.empty()) {
        const uint32_t command = a.command == "pause"   ? abi::kFabricPause
                                 : a.command == "drain" ? abi::kFabricDrain
                                                        : abi::kFabricRun;
        const size_t n = transport::command_routers(*cluster, command);
        if (n == 0) {
            std::fprintf(stderr,
                         "weft fabric --%s: no fabric router is running to tell (a fabric runs during fabric ops)\n",
                         a.command.c_str());
            return kFailed;
        }
        std::printf("%s: %zu router(s) told\n", a.command.c_str(), n);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<RouterView> first = transport::read_routers(*cluster);
    if (first.empty() && !a.json) {  // nothing to wait an interval for
        std::printf("no fabric router is running (a fabric runs during fabric ops)\n");
        return 0;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(a.interval));
    const std::vector<RouterView> second = transport::read_routers(*cluster);
    const double seconds = seconds_since(t0);
    std::map<std::pair<uint32_t, uint32_t>, const RouterView*> before;
    for (const RouterView& v : first) before[{v.chip, v.core}] = &v;
    nlohmann::json out = nlohmann::json::array();
    if (!a.json) {
        if (second.empty()) {
            std::printf("no fabric router is running (a fabric runs during fabric ops)\n");
        } else {
            std::printf("%zu routers; deadlock avoidance: %s\n", second.size(),
                        transport::deadlock_avoidance(second.front().flags).c_str());
            std::printf("%-5s %-4s %-12s %10s %10s %9s %9s %7s %9s %9s %6s %s\n", "chip", "way", "state", "pkts out",
                        "pkts in", "delivered", "forwarded", "dropped", "MB/s out", "MB/s in", "busy", "heartbeat");
        }
    }
    for (const RouterView& v : second) {
        const auto it = before.find({v.chip, v.core});
        const Rates r = it == before.end() ? Rates{} : rates_of(*it->second, v, seconds);
        if (a.json) {
            out.push_back(to_json(v, r));
            continue;
        }
        // A relay is named by its role: it carries another router's traffic.
        const std::string state = v.relay ? std::string("relay") : transport::router_state_name(v.status.state);
        std::printf("%-5u %-4s %-12s %10llu %10llu %9u %9u %7u %9.2f %9.2f %5.0f%% %s\n", v.chip, v.way.c_str(),
                    state.c_str(), (unsigned long long)v.packets_sent(), (unsigned long long)v.packets_received(),
                    v.status.delivered, v.status.forwarded, v.status.dropped, r.out_mbs, r.in_mbs, 100 * r.busy,
                    r.alive ? "beating" : "SILENT");
    }
    if (a.json) std::cout << out.dump(2) << "\n";
    return kOk;
}

}  // namespace

Command add_fabric(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand(
        "fabric", "every running fabric router: its state, counters and rates over an interval; --pause, --drain, "
                  "--resume command them");
    auto a = std::make_shared<FabricArgs>();
    add_real(*cmd, "--interval", a->interval, 0.05, 60.0,
             "seconds between the two samples the rates come from (default 1)");
    cmd->add_flag("--json", a->json, "one object per router, as JSON");
    auto* group = cmd->add_option_group("command");
    group->add_flag_callback(
        "--pause", [a] { a->command = "pause"; }, "routers send nothing over their cables");
    group->add_flag_callback(
        "--drain", [a] { a->command = "drain"; },
        "routers send nothing from their workers; what passes through goes on");
    group->add_flag_callback(
        "--resume", [a] { a->command = "resume"; }, "routers run again");
    group->require_option(0, 1);
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return fabric(g.run_dir, *a); }};
}

}  // namespace weft::cli
