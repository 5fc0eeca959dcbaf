// Striping a cable direction over several workers (tt-metal's CCL developer guide, "(Ring) Reduce
// Scatter": "each worker takes alternating slices ... strided by the entire
// worker group worth of slices").
//
// A *lane* of a cable direction is one sender worker on the chip at its start,
// one EDM channel, and one receiver worker on the chip at its end. With L
// lanes, piece k of every transfer over that direction goes through lane
// k % L, so each worker sees every L-th piece. More lanes only help while
// spare worker cores let the per-piece work of several workers overlap; the
// cable itself is shared by all its lanes.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

namespace weft::ccl {

// One direction of a cable that carries pieces.
struct LinkDirection {
    uint32_t from_chip = 0, from_port = 0;  // the sending end
    uint32_t to_chip = 0;                   // the receiving end
    uint64_t pieces = 0;                    // the most pieces any one transfer sends over it
};

// Lanes for every direction (same order): as many as `workers_per_link`
// allows and the worker cores at both ends have spare, never more than a
// direction has pieces. `workers_in_use[chip]` are the workers each chip needs
// with one lane everywhere; spare cores are handed out one lane at a time
// round the directions, so no direction takes a third lane while another
// that could still use a second one has none.
std::vector<uint32_t> choose_lanes(const std::vector<LinkDirection>& directions,
                                   const std::vector<uint32_t>& workers_in_use, uint32_t worker_cores,
                                   uint32_t workers_per_link);

// Throws weft::Error naming the numbers if `workers_per_link` can never be
// met on a board with `worker_cores` worker cores: a chip that receives and
// passes on (every chip of a ring) needs a receiver and a sender per lane, and
// an EDM link holds abi::kEdmMaxChannels channels for both directions.
void check_workers_per_link(uint32_t workers_per_link, uint32_t worker_cores);

}  // namespace weft::ccl
