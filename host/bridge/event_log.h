// The control plane's side of the status mailboxes (the TT-Fabric architecture spec, "Fabric Node
// Status Mailbox"): drains every chip's EventRing, archives each event as one
// line of <run dir>/events.log (kept across the run: the persistent record),
// and keeps the latest in memory for `weft status`. The bridge's own link
// events (cable pulled or plugged, faults set, a link retrained) go into the
// same log.
// Main thread only (the control socket's), like everything that calls it.
#pragma once
#include <stdint.h>

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bridge/event_limiter.h"
#include "bridge/rotating_file.h"
#include "driver/cluster_file.h"

namespace weft {

class Bridge;

// events.log is rotated to events.log.1 (one old file kept) past this size.
inline constexpr uint64_t kEventLogMaxBytes = 4 << 20;

class EventLog {
public:
    EventLog(Bridge& bridge, const std::string& path);

    // Takes every event posted since the last call, and notes every link that
    // retrained since. Returns how many events that made.
    uint32_t drain();
    // A line from the bridge itself (source "bridge").
    void note(const std::string& what);
    const std::string& path() const { return path_; }
    // The latest events, oldest first, and the log's path.
    nlohmann::json recent() const;

private:
    void record(nlohmann::json event);
    uint32_t note_retrains();
    uint32_t note_repeats(uint64_t now_ms);

    Bridge& bridge_;
    std::string path_;
    RotatingFile file_;
    EventLimiter limiter_;
    std::deque<nlohmann::json> recent_;
    std::vector<uint64_t> retrains_seen_;  // per link, as of the last drain
};

// "chip 0.E <-> chip 1.W": a link as events and reports name it, from the end `from`.
std::string link_name(Bridge& bridge, size_t link, const PortRef& from);

const char* event_kind_name(uint32_t kind);

}  // namespace weft
