#include "bridge/event_limiter.h"

namespace weft {

bool EventLimiter::admit(const std::string& key, uint64_t now_ms) {
    // Callers take expired() first, so a window found over here counted nothing.
    auto it = open_.find(key);
    if (it == open_.end() || now_ms - it->second.opened_ms >= window_ms_) {
        open_[key] = Window{now_ms, 0};
        return true;
    }
    ++it->second.suppressed;
    return false;
}

std::vector<std::pair<std::string, uint64_t>> EventLimiter::expired(uint64_t now_ms) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (auto it = open_.begin(); it != open_.end();) {
        if (now_ms - it->second.opened_ms < window_ms_) {
            ++it;
            continue;
        }
        if (it->second.suppressed) out.push_back({it->first, it->second.suppressed});
        it = open_.erase(it);
    }
    return out;
}

}  // namespace weft
