#include "bridge/control_server.h"

#include <unistd.h>

#include <optional>

#include "bridge/event_log.h"
#include "common/error.h"
#include "driver/cluster_file.h"
#include "driver/cluster_topology.h"
#include "driver/paths.h"

namespace weft {

using nlohmann::json;

namespace {

// "state" is the cable (plugged or pulled), as firmware sees it in PortState;
// "link_state" is what TT-link makes of it right now (up, down, retraining).
// "down (chip 3 dead)" when an end's chip is gone: its cable is unplugged
// then, and the state says why rather than blaming the cable.
std::string state_name(Bridge& bridge, const Link& l) {
    for (const PortRef& end : l.end)
        if (!bridge.chips()[end.chip]->alive()) return "down (chip " + std::to_string(end.chip) + " dead)";
    return l.cable->plugged() ? "up" : "down";
}

json port_json(const ClusterSpec& spec, const PortRef& p) {
    return {{"chip", p.chip}, {"port", p.port}, {"name", port_name(spec.board, p.port)}};
}

json link_json(Bridge& bridge, size_t i, bool with_counters) {
    const Link& l = *bridge.ethernet().links()[i];
    json j = {{"index", i},
              {"a", port_json(bridge.spec(), l.end[0])},
              {"b", port_json(bridge.spec(), l.end[1])},
              {"state", state_name(bridge, l)},
              {"link_state", cable_state_name(l.cable->state())},
              // The cluster file's spelling; "mode_pending" while a change drains.
              {"mode", l.cable->compliance_mode() ? "compliance" : "ttlink"},
              {"mode_pending", l.cable->mode_change_pending()},
              {"line", l.line},
              // Whether the collectives see a silicon-like wire (ccl/runner.cpp's pieces).
              {"shaped", l.cable->faults().shaped()}};
    if (with_counters) {
        for (int d = 0; d < 2; ++d) {
            const CableDirectionCounters& c = l.cable->counters(d);
            j[d == 0 ? "a_to_b" : "b_to_a"] = {{"frames", c.frames.load()},
                                               {"bytes", c.bytes.load()},
                                               {"delivered", c.delivered.load()},
                                               {"retransmits", c.retransmits.load()},
                                               {"bytes_resent", c.bytes_resent.load()},
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
        j["shaping"] = {{"bandwidth_gbps", f.bandwidth_gbps}, {"latency_us", f.latency_us}};
    }
    return j;
}

// A request's id field: a whole number below `limit`, or weft::Error naming
// the field, its range and what came (never truncated: 4294967296 is not 0).
uint32_t id_field(const json& req, const char* key, uint64_t limit) {
    if (!req.contains(key)) throw Error(std::string("missing ") + key);
    const json& v = req[key];
    if (!v.is_number_unsigned() || v.get<uint64_t>() >= limit)
        throw Error(std::string(key) + " must be a whole number from 0 to " + std::to_string(limit - 1) + ", not " +
                    v.dump());
    return static_cast<uint32_t>(v.get<uint64_t>());
}

bool flag_field(const json& req, const char* key, bool fallback) {
    if (!req.contains(key)) return fallback;
    if (!req[key].is_boolean()) throw Error(std::string(key) + " must be true or false, not " + req[key].dump());
    return req[key].get<bool>();
}

// {"cmd": "fault", "chip", "port", and any of "drop_rate", "bit_error_rate",
// "flap_period_ms", "flap_down_ms", "bandwidth_gbps", "latency_us" (the rest
// of the link's faults and shaping stay),
// "mode": "ttlink" | "compliance", or "clear": true (all faults back to none,
// the cable plugged in; the mode and the shaping stay).
json apply_fault(Bridge& bridge, const json& req) {
    const uint32_t chip = id_field(req, "chip", bridge.chips().size()),
                   port = id_field(req, "port", bridge.spec().board.ports.size());
    const int li = bridge.ethernet().link_index(chip, port);
    if (li < 0)
        return {{"ok", false},
                {"error", "no link at chip " + std::to_string(chip) + " port " + std::to_string(port) +
                              " (weft status lists the links)"}};
    Link& link = *bridge.ethernet().links()[li];
    CableFaults f = link.cable->faults();
    if (flag_field(req, "clear", false)) {
        // Shaping is what the link is, not a fault: clear keeps it.
        const CableFaults shaping = f;
        f = CableFaults{};
        f.bandwidth_gbps = shaping.bandwidth_gbps;
        f.latency_us = shaping.latency_us;
    }
    try {
        for (const char* key : {"drop_rate", "bit_error_rate", "bandwidth_gbps", "latency_us"})
            if (req.contains(key) && !req[key].is_number()) throw Error(std::string(key) + " must be a number");
        for (const char* key : {"flap_period_ms", "flap_down_ms"})
            if (req.contains(key) && !req[key].is_number_unsigned())
                throw Error(std::string(key) + " must be a non-negative integer of milliseconds");
        f.drop_rate = req.value("drop_rate", f.drop_rate);
        f.bit_error_rate = req.value("bit_error_rate", f.bit_error_rate);
        f.flap_period_ms = req.value("flap_period_ms", f.flap_period_ms);
        f.flap_down_ms = req.value("flap_down_ms", f.flap_down_ms);
        f.bandwidth_gbps = req.value("bandwidth_gbps", f.bandwidth_gbps);
        f.latency_us = req.value("latency_us", f.latency_us);
        std::optional<bool> compliance;
        if (req.contains("mode")) {
            const json& m = req["mode"];
            if (m != "ttlink" && m != "compliance")
                throw Error("unknown link mode " + m.dump() + " (known modes: ttlink, compliance)");
            compliance = m == "compliance";
        }
        link.cable->set_faults(f);
        if (compliance) link.cable->set_mode(*compliance);
    } catch (const std::exception& e) {
        return {{"ok", false},
                {"error",
                 std::string("link chip ") + std::to_string(chip) + " port " + std::to_string(port) + ": " + e.what()}};
    }
    if (flag_field(req, "clear", false)) bridge.ethernet().set_link_up(static_cast<size_t>(li), true);
    return {{"ok", true}, {"link", link_json(bridge, static_cast<size_t>(li), true)}};
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
                         {"console", chip->console_path()},
                         {"qmp", chip->qmp_path()}});
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
            {"meshes", ClusterTopology::from_spec(spec).meshes_json()},
            {"links", links},
            {"fabric", spec.fabric.to_json()},
            {"systems", spec.systems.to_json()}};
}

namespace {

ControlReply dispatch(Bridge& bridge, EventLog& events, const json& req, const std::string& cmd) {
    ControlReply reply;
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
                             {"math_elements", c.math_elements.load()},
                             {"doorbell_rings", c.doorbell_rings.load()}});
        }
        reply.body = {{"ok", true}, {"links", links}, {"chips", chips}, {"engine_passes", bridge.engine_passes()}};
    } else if (cmd == "link") {
        const uint32_t chip = id_field(req, "chip", bridge.chips().size()),
                       port = id_field(req, "port", bridge.spec().board.ports.size());
        const bool up = flag_field(req, "up", true);
        int li = bridge.ethernet().link_index(chip, port);
        if (li < 0) {
            reply.body = {{"ok", false},
                          {"error", "no link at chip " + std::to_string(chip) + " port " + std::to_string(port)}};
        } else {
            bridge.ethernet().set_link_up(static_cast<size_t>(li), up);
            reply.body = {{"ok", true}, {"link", link_json(bridge, static_cast<size_t>(li), false)}};
            events.note(std::string("link at chip ") + std::to_string(chip) + " port " + std::to_string(port) +
                        (up ? ": cable plugged in" : ": cable pulled"));
        }
    } else if (cmd == "fault") {
        reply.body = apply_fault(bridge, req);
        if (reply.body.value("ok", false)) events.note("faults set: " + req.dump());
    } else if (cmd == "events") {
        events.drain();
        reply.body = events.recent();
        reply.body["ok"] = true;
    } else if (cmd == "reset") {
        const uint32_t chip = id_field(req, "chip", bridge.chips().size());
        try {
            bridge.reset_chip(chip, 10000);
            reply.body = {{"ok", true}};
            events.note("chip " + std::to_string(chip) + " reset by a client; its cores are ready");
        } catch (const std::exception& e) {
            reply.body = {{"ok", false}, {"error", e.what()}};
            events.note("chip " + std::to_string(chip) + " reset failed: " + e.what());
        }
    } else if (cmd == "shutdown") {
        reply.body = {{"ok", true}};
        reply.shutdown = true;
    } else {
        reply.body = {{"ok", false},
                      {"error",
                       "unknown command '" + cmd + "' (info, attach, counters, link, fault, events, reset, shutdown)"}};
    }
    return reply;
}

ControlReply refused(const std::string& why) {
    ControlReply reply;
    reply.body = {{"ok", false}, {"error", why}};
    return reply;
}

}  // namespace

ControlReply handle_control(Bridge& bridge, EventLog& events, const std::string& line) {
    const json req = json::parse(line, nullptr, false);
    if (req.is_discarded()) return refused("request is not JSON");
    if (!req.is_object()) return refused("a request is a JSON object, not " + std::string(req.type_name()));
    if (!req.contains("cmd") || !req["cmd"].is_string()) return refused("a request needs \"cmd\", a string");
    try {
        return dispatch(bridge, events, req, req["cmd"].get<std::string>());
    } catch (const std::exception& e) {
        return refused(e.what());
    }
}

}  // namespace weft
