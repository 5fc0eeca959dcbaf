// weft status: chips, cores, links with their counters, and recent events.
#include <cstdio>
#include <iostream>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/link_text.h"

namespace weft::cli {
namespace {

// Each core's state as a letter: off, ready, running, done, fault, and S:
// stopped by the host (a failed op's kernels), which is no fault of their own.
std::string core_letters(Cluster& cluster, uint32_t chip) {
    static const char* states = "-RrDF";
    std::string cores;
    for (uint32_t k = 0; k < cluster.board().cores.size(); ++k)
        cores += cluster.chip(chip).stopped(k) ? 'S'
                                                : states[std::min<uint32_t>(uint32_t(cluster.chip(chip).status(k).state), 4u)];
    return cores;
}

void print_chips(Cluster& cluster) {
    const nlohmann::json& info = cluster.info();
    std::printf("cluster '%s' (%s), board %s, %zu chips, bridge pid %d\n", info["name"].get<std::string>().c_str(),
                info["cluster_file"].get<std::string>().c_str(), info["board"].get<std::string>().c_str(),
                cluster.size(), info["bridge_pid"].get<int>());
    for (const auto& c : info["chips"]) {
        const uint32_t id = c["id"];
        const std::string cores = core_letters(cluster, id);
        std::printf("  chip %u  pid %-7d %-8s cores [%s]\n", id, c["pid"].get<int>(),
                    c["alive"].get<bool>() ? "alive" : c["state"].get<std::string>().c_str(), cores.c_str());
    }
    std::printf("  cores: R ready, r running, D done, F fault, S stopped by the host\n");
}

// The link layer's state, unless an end's chip is dead: then that.
std::string link_state(const nlohmann::json& l) {
    const std::string state = l["state"].get<std::string>();
    return state.rfind("down (chip", 0) == 0 ? state : l["link_state"].get<std::string>();
}

void print_links(const nlohmann::json& counters) {
    std::printf("  %-14s %-14s %-10s %12s %14s %12s %14s %8s %8s %8s  %-10s %s\n", "link end a", "end b", "state",
                "frames a>b", "bytes a>b", "frames b>a", "bytes b>a", "retx", "crc err", "retrains", "mode", "faults");
    for (const auto& l : counters["links"]) {
        auto end = [](const nlohmann::json& e) {
            return "chip " + std::to_string(e["chip"].get<int>()) + "." + e["name"].get<std::string>();
        };
        const auto both = [&](const char* key) {
            return static_cast<unsigned long long>(l["a_to_b"][key].get<uint64_t>()) + l["b_to_a"][key].get<uint64_t>();
        };
        std::printf("  %-14s %-14s %-10s %12llu %14llu %12llu %14llu %8llu %8llu %8llu  %-10s %s\n",
                    end(l["a"]).c_str(), end(l["b"]).c_str(), link_state(l).c_str(),
                    (unsigned long long)l["a_to_b"]["frames"], (unsigned long long)l["a_to_b"]["bytes"],
                    (unsigned long long)l["b_to_a"]["frames"], (unsigned long long)l["b_to_a"]["bytes"],
                    both("retransmits"), both("crc_errors"), (unsigned long long)l["retrains"].get<uint64_t>(),
                    (l["mode"].get<std::string>() + (l["mode_pending"].get<bool>() ? "*" : "")).c_str(),
                    faults_and_shaping(l).c_str());
    }
}

// A firmware event's channel and detail, in words where its kind gives them
// a meaning: a rerouted router's way round (its fallback port, or new
// tables on its own) and the packets it sent again; a rejoined one's relay.
std::string event_fields(const nlohmann::json& e) {
    const auto detail = e["detail"].get<uint64_t>();
    if (e["kind"] == "rerouted") {
        const std::string onto = e.value("fallback_port_name", "");
        return (onto == e["port_name"] ? " round its cable by new tables, " : " onto port " + onto + ", ") +
               std::to_string(detail) + " packet(s) sent again";
    }
    if (e["kind"] == "rejoined") return " back on its cable, off port " + e.value("fallback_port_name", "");
    return " channel " + std::to_string(e["channel"].get<int>()) + " detail " + std::to_string(detail);
}

void print_events(const nlohmann::json& ev) {
    const auto& list = ev["events"];
    std::printf("  recent events (all in %s):%s\n", ev["log"].get<std::string>().c_str(), list.empty() ? " none" : "");
    for (size_t i = list.size() > 10 ? list.size() - 10 : 0; i < list.size(); ++i) {
        const auto& e = list[i];
        if (e["source"] == "bridge")
            std::printf("    %s  %s\n", e["when"].get<std::string>().c_str(), e["what"].get<std::string>().c_str());
        else
            std::printf("    %s  %s chip %d core %d port %s%s%s%s\n", e["when"].get<std::string>().c_str(),
                        e["kind"].get<std::string>().c_str(), e["chip"].get<int>(), e["core"].get<int>(),
                        e["port_name"].get<std::string>().c_str(), event_fields(e).c_str(),
                        e.contains("link") ? "  link " : "",
                        e.contains("link") ? e["link"].get<std::string>().c_str() : "");
    }
}

int status(const std::string& run_dir, bool json) {
    auto cluster = Cluster::attach(run_dir);
    const nlohmann::json counters = cluster->counters();
    if (json) {  // what the text shows, and more
        nlohmann::json out = cluster->info();
        for (auto& c : out["chips"]) c["cores"] = core_letters(*cluster, c["id"].get<uint32_t>());
        out["counters"] = counters;
        out["events"] = cluster->events();
        std::cout << out.dump(2) << "\n";
        return 0;
    }
    print_chips(*cluster);
    print_links(counters);
    print_events(cluster->events());
    return 0;
}

}  // namespace

Command add_status(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("status", "chips, cores, links and their counters, recent events");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json,
                  "everything the bridge knows, as JSON: chips (each with its cores' letters), links, counters, "
                  "recent events");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [json, &g] { return status(g.run_dir, *json); }};
}

}  // namespace weft::cli
