#include "bridge/control_server.h"

#include <unistd.h>

#include "driver/cluster_file.h"
#include "driver/paths.h"

namespace weft {

using nlohmann::json;

namespace {

// "state" is the cable (plugged or pulled), as firmware sees it in PortState;
// "link_state" is what TT-link makes of it right now (up, down, retraining).
const char* state_name(const Link& l) { return l.cable->plugged() ? "up" : "down"; }

json port_json(const ClusterSpec& spec, const PortRef& p) {
    return {{"chip", p.chip}, {"port", p.port}, {"name", port_name(spec.board, p.port)}};
}

json link_json(Bridge& bridge, size_t i, bool with_counters) {
    const Link& l = *bridge.ethernet().links()[i];
    json j = {{"index", i},
              {"a", port_json(bridge.spec(), l.end[0])},
              {"b", port_json(bridge.spec(), l.end[1])},
              {"state", state_name(l)},
              {"link_state", cable_state_name(l.cable->state())},
              {"mode", l.cable->compliance_mode() ? "compliance" : "tt-link"},
              {"line", l.line}};
    if (with_counters) {
        for (int d = 0; d < 2; ++d) {
            const CableDirectionCounters& c = l.cable->counters(d);
            j[d == 0 ? "a_to_b" : "b_to_a"] = {{"frames", c.frames.load()},
                                               {"bytes", c.bytes.load()},
                                               {"delivered", c.delivered.load()},
                                               {"retransmits", c.retransmits.load()},
                                               {"crc_errors", c.crc_errors.load()},
                                               {"dropped", c.dropped.load()},
                                               {"timeouts", c.timeouts.load()}};
        }
        j["retrains"] = l.cable->retrains();
        j["misaddressed"] = l.misaddressed.load();
        const CableFaults f = l.cable->faults();
        j["faults"] = {{"drop_rate", f.drop_rate},
                       {"bit_error_rate", f.bit_error_rate},
                       {"flap_period_ms", f.flap_period_ms},
                       {"flap_down_ms", f.flap_down_ms}};
    }
    return j;
}

}  // namespace

json cluster_info(Bridge& bridge) {
    const ClusterSpec& spec = bridge.spec();
    json chips = json::array();
    for (auto& chip : bridge.chips()) {
        chips.push_back({{"id", chip->id()},
                         {"pid", chip->pid()},
                         {"alive", chip->alive()},
                         {"state", chip->describe_exit()},
                         {"console", chip->console_path()}});
    }
    json links = json::array();
    for (size_t i = 0; i < bridge.ethernet().links().size(); ++i) links.push_back(link_json(bridge, i, false));
    return {{"ok", true},
            {"name", spec.name},
            {"cluster_file", bridge.options().cluster_file},
            {"board", spec.board_name},
            {"board_dtb", paths::board_dtb(spec.board_name)},
            {"run_dir", bridge.options().run_dir},
            {"bridge_pid", getpid()},
            {"chips", chips},
            {"links", links}};
}

ControlReply handle_control(Bridge& bridge, const std::string& line) {
    ControlReply reply;
    json req;
    try {
        req = json::parse(line);
    } catch (const json::exception& e) {
        reply.body = {{"ok", false}, {"error", std::string("request is not JSON: ") + e.what()}};
        return reply;
    }
    const std::string cmd = req.value("cmd", "");
    if (cmd == "info") {
        reply.body = cluster_info(bridge);
    } else if (cmd == "attach") {
        reply.body = cluster_info(bridge);
        for (auto& chip : bridge.chips()) reply.fds.push_back(chip->memfd());
    } else if (cmd == "counters") {
        json links = json::array();
        for (size_t i = 0; i < bridge.ethernet().links().size(); ++i) links.push_back(link_json(bridge, i, true));
        json chips = json::array();
        for (auto& chip : bridge.chips()) {
            const DeviceCounters& c = bridge.counters(chip->id());
            chips.push_back({{"id", chip->id()},
                             {"noc_commands", c.noc_commands.load()},
                             {"noc_bytes", c.noc_bytes.load()},
                             {"math_commands", c.math_commands.load()},
                             {"math_elements", c.math_elements.load()}});
        }
        reply.body = {{"ok", true}, {"links", links}, {"chips", chips}, {"engine_passes", bridge.engine_passes()}};
    } else if (cmd == "link") {
        const uint32_t chip = req.value("chip", ~0u), port = req.value("port", ~0u);
        int li = bridge.ethernet().link_index(chip, port);
        if (li < 0) {
            reply.body = {{"ok", false},
                          {"error", "no link at chip " + std::to_string(chip) + " port " + std::to_string(port)}};
        } else {
            bridge.ethernet().set_link_up(static_cast<size_t>(li), req.value("up", true));
            reply.body = {{"ok", true}, {"link", link_json(bridge, static_cast<size_t>(li), false)}};
        }
    } else if (cmd == "reset") {
        const uint32_t chip = req.value("chip", ~0u);
        try {
            bridge.reset_chip(chip, 10000);
            reply.body = {{"ok", true}};
        } catch (const std::exception& e) {
            reply.body = {{"ok", false}, {"error", e.what()}};
        }
    } else if (cmd == "shutdown") {
        reply.body = {{"ok", true}};
        reply.shutdown = true;
    } else {
        reply.body = {{"ok", false}, {"error", "unknown command '" + cmd + "' (info, attach, counters, link, reset, shutdown)"}};
    }
    return reply;
}

}  // namespace weft
