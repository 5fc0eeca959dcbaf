// Buffer occupancy over virtual time: every so many ns, the packets in each
// router's buffers (its channels' slots in use, stuck_channels.h), and the
// heat map of it (x: virtual time, y: the routers, colour: packets), drawn
// by gnuplot.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "common/heat_map.h"
#include "fabric_model/timed_fabric.h"

namespace weft::fabric_model {

struct OccupancySamples {
    struct Router {
        uint32_t chip = 0, port = 0;
    };
    std::vector<Router> routers;              // by router index
    uint64_t every_ns = 0;                    // column c is the fabric at c * every_ns
    std::vector<std::vector<uint32_t>> held;  // [column][router]: packets in its buffers
};

// Attaches to the engine's on_advance. A long run keeps at most
// `max_columns`: at that many, each pair of columns becomes one (the larger
// of the two, so a short burst still shows) and the spacing doubles.
class OccupancySampler {
public:
    OccupancySampler(TimedFabric& engine, uint64_t every_ns, size_t max_columns = 2048);
    ~OccupancySampler();
    OccupancySampler(const OccupancySampler&) = delete;
    OccupancySampler& operator=(const OccupancySampler&) = delete;

    const OccupancySamples& samples() const { return samples_; }
    // One more column: the fabric as the run left it (after its last event,
    // which no later advance of time samples), e.g. stuck.
    void sample_end();
    // On MPI ranks, after sample_end: every rank's samples of its own routers
    // (its copy of another's never ran), at one spacing and length, in the
    // samples of every rank (all ranks call it).
    void gather();

private:
    void advance(uint64_t from_ns, uint64_t to_ns);
    std::vector<uint32_t> held_now();
    void halve();

    TimedFabric& engine_;
    size_t max_columns_;
    uint64_t next_ns_ = 0;  // the next column's time
    OccupancySamples samples_;
};

// The heat map of the samples (what occupancy_heatmap draws).
HeatMapSpec occupancy_heat_map(const OccupancySamples& samples, const std::string& title = "");

// Writes it as a PNG. Throws weft::Error as write_heat_map_png does (no
// samples, gnuplot missing or failing).
void occupancy_heatmap(const OccupancySamples& samples, const std::string& png_path, const std::string& title = "");

}  // namespace weft::fabric_model
