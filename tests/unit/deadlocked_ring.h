// The fabric model's deadlock on purpose, which the model's tests and its
// pictures' tests both build.
#pragma once
#include <stdint.h>

#include "fabric_model/traffic.h"

namespace weft::test {

// ring8 without its dateline (one VC), two slots a channel, and every chip
// writing to the chip three on, all round the same way: the buffers fill in
// a circle of eight cables and nothing moves.
inline fabric_model::ModelOptions ring_without_dateline() {
    fabric_model::ModelOptions o;
    o.cluster = "ring8";
    o.fabric.flags = abi::kFabricNoDateline;
    o.fabric.slots = 2;
    return o;
}

inline void queue_circle_of_writes(fabric_model::Simulation& sim) {
    model::FabricModel& m = sim.model();
    for (uint32_t c = 0; c < 8; ++c)
        sim.write(c, (c + 3) % 8, m.dram(8 << 20), m.dram(4 << 20), 256 * sim.max_payload(), m.dram(0));
}

}  // namespace weft::test
