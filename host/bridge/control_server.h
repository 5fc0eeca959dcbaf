// The bridge's control socket: newline-delimited JSON requests, one answer
// each. "attach" also passes the chips' memory fds (the PCIe BAR windows).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "bridge/bridge.h"

namespace weft {

struct ControlReply {
    nlohmann::json body;
    std::vector<int> fds;
    bool shutdown = false;
};

class EventLog;
// events: where link changes are noted and recent events come from.
ControlReply handle_control(Bridge& bridge, EventLog& events, const std::string& request_line);
nlohmann::json cluster_info(Bridge& bridge);

}  // namespace weft
