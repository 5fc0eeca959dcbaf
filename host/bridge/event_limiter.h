// Rate limit for status events: the first event of a kind from one place
// (chip, core, port, channel) is logged; the same again within the window is
// counted instead, and once the window is over the count is logged as one
// line. Every link flapping posts tens of events a second; the log keeps
// their number, not their lines.
#pragma once
#include <stdint.h>

#include <map>
#include <string>
#include <vector>

namespace weft {

class EventLimiter {
public:
    explicit EventLimiter(uint64_t window_ms = 1000) : window_ms_(window_ms) {}

    // True: log this event now. False: it was counted.
    bool admit(const std::string& key, uint64_t now_ms);
    // Keys whose window has ended with events counted, and how many; forgets them.
    std::vector<std::pair<std::string, uint64_t>> expired(uint64_t now_ms);

private:
    struct Window {
        uint64_t opened_ms = 0;
        uint64_t suppressed = 0;
    };
    uint64_t window_ms_;
    std::map<std::string, Window> open_;
};

}  // namespace weft
