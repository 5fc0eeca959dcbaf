#include "bridge/event_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <chrono>

#include "bridge/bridge.h"
#include "common/error.h"

namespace weft {
namespace {

constexpr size_t kRecent = 64;

std::string wall_clock() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t;
    localtime_r(&ts.tv_sec, &t);
    char buf[48];
    const size_t n = strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &t);
    snprintf(buf + n, sizeof buf - n, ".%03ld", ts.tv_nsec / 1000000);
    return buf;
}

}  // namespace

const char* event_kind_name(uint32_t kind) {
    switch (kind) {
        case abi::kEventLinkDown: return "link_down";
        case abi::kEventDroppedPacket: return "dropped_packet";
        case abi::kEventTimeout: return "timeout";
        case abi::kEventRoutingError: return "routing_error";
        case abi::kEventRerouted: return "rerouted";
        case abi::kEventRejoined: return "rejoined";
    }
    return "unknown";
}

// The file is never opened through a link planted in the run directory (run_dir.h).
EventLog::EventLog(Bridge& bridge, const std::string& path)
    : bridge_(bridge), path_(path), file_(path, kEventLogMaxBytes) {}

void EventLog::record(nlohmann::json event) {
    event["when"] = wall_clock();
    file_.append(event.dump() + "\n");
    recent_.push_back(std::move(event));
    if (recent_.size() > kRecent) recent_.pop_front();
}

uint32_t EventLog::drain() {
    const uint64_t now_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
    uint32_t n = note_repeats(now_ms);
    for (auto& chip : bridge_.chips()) {
        abi::EventRing& ring = chip->control().events;
        const uint32_t tail = ring.tail;  // volatile; the fence below orders the slot reads after it
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint32_t head = ring.head;
        if (tail - head > abi::kEventSlots) head = tail - abi::kEventSlots;  // a wild tail: read what exists
        for (; head != tail; ++head) {
            const abi::StatusEvent e = ring.slots[head % abi::kEventSlots];
            const std::string key = std::string(event_kind_name(e.kind)) + " chip " + std::to_string(chip->id()) +
                                    " core " + std::to_string(e.core) + " port " + std::to_string(e.port) +
                                    " channel " + std::to_string(e.channel);
            if (!limiter_.admit(key, now_ms)) continue;  // counted, logged later as a repeat
            nlohmann::json j = {{"source", "firmware"}, {"kind", event_kind_name(e.kind)},
                                {"chip", chip->id()},   {"core", e.core},
                                {"port", e.port},       {"port_name", port_name(bridge_.spec().board, e.port)},
                                {"channel", e.channel}, {"detail", e.detail},
                                {"chip_time", e.time}};
            if (e.kind == abi::kEventRerouted || e.kind == abi::kEventRejoined)
                j["fallback_port_name"] = port_name(bridge_.spec().board, e.channel);
            if (const int li = bridge_.ethernet().link_index(chip->id(), e.port); li >= 0)
                j["link"] = link_name(bridge_, static_cast<size_t>(li), PortRef{chip->id(), e.port});
            record(std::move(j));
            ++n;
        }
        __atomic_store_n(const_cast<uint32_t*>(&ring.head), head, __ATOMIC_RELEASE);
    }
    return n + note_retrains();
}

uint32_t EventLog::note_repeats(uint64_t now_ms) {
    uint32_t n = 0;
    for (const auto& [key, count] : limiter_.expired(now_ms)) {
        record({{"source", "bridge"},
                {"kind", "repeated"},
                {"count", count},
                {"what", key + ": " + std::to_string(count) + " more like it within a second, not logged one by one"}});
        ++n;
    }
    return n;
}

// Retrains happen in the engine thread, many per second on a flapping link;
// polling the counters here turns them into at most one line per link per
// drain, with the count since the last one.
uint32_t EventLog::note_retrains() {
    const auto& links = bridge_.ethernet().links();
    if (retrains_seen_.size() != links.size()) retrains_seen_.assign(links.size(), 0);
    uint32_t n = 0;
    for (size_t i = 0; i < links.size(); ++i) {
        const uint64_t total = links[i]->cable->retrains();
        if (total == retrains_seen_[i]) continue;
        const uint64_t fresh = total - retrains_seen_[i];
        retrains_seen_[i] = total;
        const std::string name = link_name(bridge_, i, links[i]->end[0]);
        record({{"source", "bridge"},
                {"kind", "retrain"},
                {"link", name},
                {"retrains", total},
                {"what", "link " + name + " retrained" + (fresh > 1 ? " " + std::to_string(fresh) + " times" : "") +
                             " (" + std::to_string(total) + " in all)"}});
        ++n;
    }
    return n;
}

std::string link_name(Bridge& bridge, size_t link, const PortRef& from) {
    const Link& l = *bridge.ethernet().links().at(link);
    const int near = l.end[0].chip == from.chip && l.end[0].port == from.port ? 0 : 1;
    const auto end = [&](const PortRef& p) {
        return "chip " + std::to_string(p.chip) + "." + port_name(bridge.spec().board, p.port);
    };
    return end(l.end[near]) + " <-> " + end(l.end[1 - near]);
}

void EventLog::note(const std::string& what) { record({{"source", "bridge"}, {"kind", "note"}, {"what", what}}); }

nlohmann::json EventLog::recent() const {
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : recent_) events.push_back(e);
    return {{"log", path_}, {"events", events}};
}

}  // namespace weft
