#include "fabric_model/occupancy.h"

#include <algorithm>

#include "common/error.h"
#include "fabric_model/ranks.h"
#include "fabric_model/stuck_channels.h"

namespace weft::fabric_model {

OccupancySampler::OccupancySampler(TimedFabric& engine, uint64_t every_ns, size_t max_columns)
    : engine_(engine), max_columns_(std::max<size_t>(2, max_columns & ~size_t(1))) {
    if (every_ns == 0) throw Error("occupancy samples need a spacing above 0 ns");
    model::FabricModel& m = engine.model();
    for (size_t r = 0; r < m.router_count(); ++r) {
        const transport::FabricRouterPlan& p = m.fabric().routers()[r];
        samples_.routers.push_back({p.chip, p.port});
    }
    samples_.every_ns = every_ns;
    next_ns_ = engine.now_ns();
    engine_.on_advance = [this](uint64_t from, uint64_t to) { advance(from, to); };
}

OccupancySampler::~OccupancySampler() { engine_.on_advance = nullptr; }

std::vector<uint32_t> OccupancySampler::held_now() { return slots_in_use(engine_.model()); }

// Nothing changes between events: every column due before the next event
// shows the fabric as it is now.
void OccupancySampler::advance(uint64_t, uint64_t to_ns) {
    if (next_ns_ >= to_ns) return;
    const std::vector<uint32_t> now = held_now();
    while (next_ns_ < to_ns) {
        if (samples_.held.size() == max_columns_) halve();
        samples_.held.push_back(now);
        next_ns_ += samples_.every_ns;
    }
}

void OccupancySampler::sample_end() {
    if (samples_.held.size() == max_columns_) halve();
    samples_.held.push_back(held_now());
    next_ns_ += samples_.every_ns;
}

void OccupancySampler::gather() {
    Ranks& ranks = engine_.ranks();
    if (ranks.size() == 1) return;
    std::vector<std::vector<uint32_t>>& h = samples_.held;
    const uint64_t every = ranks.max(samples_.every_ns);  // each rank's spacing is the asked one doubled k times
    while (samples_.every_ns < every) {
        if (h.size() % 2) h.push_back(h.back());
        halve();
    }
    const size_t columns = ranks.max(h.size());
    while (h.size() < columns) h.push_back(h.back());  // a rank that ended sooner stays as it ended
    std::vector<uint32_t> mine;                        // per router of this rank: its index, then its row
    for (size_t r = 0; r < samples_.routers.size(); ++r) {
        if (!engine_.owns(samples_.routers[r].chip)) continue;
        mine.push_back(uint32_t(r));
        for (size_t c = 0; c < columns; ++c) mine.push_back(h[c][r]);
    }
    const std::vector<uint32_t> words = values_from_every_rank(ranks, mine);
    for (size_t at = 0; at + columns < words.size(); at += columns + 1)
        for (size_t c = 0; c < columns; ++c) h[c][words[at]] = words[at + 1 + c];
}

// max_columns_ is even, so the next column's time stays on the new spacing.
void OccupancySampler::halve() {
    std::vector<std::vector<uint32_t>>& h = samples_.held;
    for (size_t c = 0; c < h.size() / 2; ++c) {
        h[c] = h[2 * c];
        for (size_t r = 0; r < h[c].size(); ++r) h[c][r] = std::max(h[c][r], h[2 * c + 1][r]);
    }
    h.resize(h.size() / 2);
    samples_.every_ns *= 2;
}

HeatMapSpec occupancy_heat_map(const OccupancySamples& samples, const std::string& title) {
    HeatMapSpec spec;
    spec.title = title.empty() ? "packets in each router's buffers" : title;
    spec.x_label = "virtual time (us)";
    spec.colour_label = "packets in its buffers";
    spec.x_start = 0;
    spec.x_step = double(samples.every_ns) / 1e3;
    // Rows by chip, then port: a chip's routers side by side.
    std::vector<size_t> order(samples.routers.size());
    for (size_t r = 0; r < order.size(); ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const auto& x = samples.routers[a];
        const auto& y = samples.routers[b];
        return std::pair{x.chip, x.port} < std::pair{y.chip, y.port};
    });
    for (size_t r : order) {
        spec.rows.push_back("chip " + std::to_string(samples.routers[r].chip) + " port " +
                            std::to_string(samples.routers[r].port));
        std::vector<double>& row = spec.cells.emplace_back(samples.held.size(), 0);
        for (size_t c = 0; c < samples.held.size(); ++c) row[c] = samples.held[c][r];
    }
    return spec;
}

void occupancy_heatmap(const OccupancySamples& samples, const std::string& png_path, const std::string& title) {
    if (samples.held.empty()) throw Error("no occupancy samples to draw into '" + png_path + "': the run was empty");
    write_heat_map_png(png_path, occupancy_heat_map(samples, title));
}

}  // namespace weft::fabric_model
