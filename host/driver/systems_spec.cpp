#include "driver/systems_spec.h"

#include <algorithm>

namespace weft {

nlohmann::json SystemsSpec::to_json() const {
    if (empty()) return nlohmann::json::object();
    return {{"topology", topology}, {"w", w}, {"h", h}};
}

SystemsSpec SystemsSpec::from_json(const nlohmann::json& j) {
    SystemsSpec s;
    s.topology = j.value("topology", "");
    s.w = j.value("w", 0u);
    s.h = j.value("h", 0u);
    return s;
}

std::vector<std::pair<uint32_t, uint32_t>> system_neighbours(const SystemsSpec& s) {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    const bool wraps = s.topology != "mesh_2d_no_wrap";
    auto join = [&](uint32_t a, uint32_t b) {
        if (a == b) return;
        const std::pair<uint32_t, uint32_t> p{std::min(a, b), std::max(a, b)};
        if (std::find(pairs.begin(), pairs.end(), p) == pairs.end()) pairs.push_back(p);
    };
    for (uint32_t y = 0; y < s.h; ++y)
        for (uint32_t x = 0; x < s.w; ++x) {
            const uint32_t at = y * s.w + x;
            if (x + 1 < s.w || (wraps && s.w > 2)) join(at, y * s.w + (x + 1) % s.w);
            if (y + 1 < s.h || (wraps && s.h > 2)) join(at, ((y + 1) % s.h) * s.w + x);
        }
    return pairs;
}

}  // namespace weft
