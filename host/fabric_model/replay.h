// A QEMU cluster's packet log (transport/fabric/packet_log.h, `weft run
// --record`) replayed in the model: the same packets leave the same chips,
// in the order each chip sent them, and the model's routers, running the
// same firmware over the same tables, log where they went. On the same
// cluster every packet must cross the same cables.
#pragma once
#include <stdint.h>

#include <string>

#include "fabric_model/traffic.h"
#include "transport/fabric/packet_log.h"

namespace weft::fabric_model {

struct Replay {
    uint64_t packets = 0;     // sent again, one per packet that left its source chip
    RunResult run;            // the model's run, in virtual time
    transport::PacketLog log;  // the model's routers' own log
    std::string differs;      // transport::paths_differ of the two: "" when they agree
};

// Replays `recorded` on `sim`, whose fabric keeps a packet log at least as
// long (ModelOptions::fabric.record_packets) and carries no traffic yet.
// Payloads come from the model's own memory: the log keeps no bytes.
// Throws weft::Error when the log lost records, or a source or destination
// is not in the model's fabric.
Replay replay_log(Simulation& sim, const transport::PacketLog& recorded);

// weft-fabric-model replay FILE: replays a log written by `weft run
// --record` on the cluster it names (or `options.cluster` when
// `cluster_given`), prints whether every packet crossed the same cables, and
// writes the model's own log to `out` ("" : none). Returns the exit code: 0
// when they agree, 1 when not.
int replay_command(ModelOptions options, bool cluster_given, const std::string& log_file, const std::string& out);

}  // namespace weft::fabric_model
