// weft replay: a packet log's traffic (weft run --record, or the fabric
// model's) sent again over the cluster's fabric, packet by packet from where
// each started, and whether every packet crossed the same cables here.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "transport/fabric/replay_traffic.h"

namespace weft::cli {
namespace {

struct ReplayArgs {
    std::string file, cluster, out;
    double timeout = 30;
};

int replay(const std::string& run_dir, const ReplayArgs& a) {
    nlohmann::json about;
    const transport::PacketLog recorded = transport::read_packet_log_file(a.file, &about);
    if (!recorded.lost.empty())
        throw Error(a.file + " is not whole (" + recorded.lost.front() + "): its packets cannot all be sent again");
    // The log's own cluster, unless one runs or --cluster names another.
    const std::string logged = about.value("cluster", "");
    auto cluster = attach_or_start(run_dir, a.cluster, logged.empty() ? "ring8" : logged);
    FabricSpec spec = cluster->fabric_spec();
    spec.record_packets = transport::kDefaultRecordedPackets;
    auto fabric = transport::Fabric::start(
        *cluster, transport::cluster_fabric(cluster->board(), cluster->topology(), spec), std::chrono::seconds(10));
    const transport::ReplayPlan plan = transport::plan_replay(fabric->builder(), cluster->board(), recorded);
    std::printf("replaying %zu packets (%zu cable crossings) of %s on %s", plan.packets, plan.hops, a.file.c_str(),
                cluster->info().value("name", std::string("the cluster")).c_str());
    if (plan.multicast) std::printf(" (%zu of them multicast)", plan.multicast);
    std::printf("\n");
    const auto timeout = std::chrono::milliseconds(int64_t(a.timeout * 1000));
    const transport::PacketLog got = transport::replay_on(*cluster, *fabric, plan, timeout);
    fabric->stop();
    const std::string name = cluster->info().value("name", std::string());
    if (!a.out.empty()) transport::write_packet_log_file(a.out, got, {{"cluster", name}, {"replay_of", a.file}});
    const std::string differs =
        transport::paths_differ(transport::paths_of(transport::as_replayed(recorded)),
                                transport::paths_of(transport::as_replayed(got)), a.file, "this cluster");
    if (!differs.empty()) {
        std::printf("DIFFERENT: %s\n", differs.c_str());
        return kFailed;
    }
    std::printf("every packet crossed the same cables as in %s\n", a.file.c_str());
    return kOk;
}

}  // namespace

Command add_replay(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand(
        "replay", "send a packet log's traffic (weft run --record, weft-fabric-model) again over the fabric and "
                  "say whether every packet crossed the same cables");
    auto a = std::make_shared<ReplayArgs>();
    cmd->add_option("FILE", a->file, "a weft-packet-log/1 JSON file")->required()->check(CLI::ExistingFile);
    add_cluster(*cmd, a->cluster);
    cmd->add_option("--out", a->out, "this cluster's own log of the replay, as JSON of the same schema");
    add_real(*cmd, "--timeout", a->timeout, 1.0, 3600.0, "seconds each round of packets may take (default 30)");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return replay(g.run_dir, *a); }};
}

}  // namespace weft::cli
