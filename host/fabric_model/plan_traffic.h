// The collectives' own plans in the model: an op lowered exactly as `weft
// run --transport fabric` lowers it (ccl/algorithm_table.h, ccl/lowering.h:
// the same algorithms, pieces, streams and worker programs), each worker's
// program stepped by a poll() on its core while the routers carry its
// streams. A stream is what the fabric transport makes of it on QEMU: its
// messages go as fabric writes into a ring of slots on the receiving chip,
// and each slot freed goes back to the sender as a credit over the fabric.
// Bytes move for real and reductions run on the chips' math engines, as the
// firmware's: the outputs are checked element by element against the host
// reference weft run checks against (while every chip's buffers fit in
// 256 MiB of host memory at once; OpTime::checked says whether they did).
#pragma once
#include <stdint.h>

#include <string>

#include "fabric_model/traffic.h"

namespace weft::fabric_model {

// `op` (any of weft run's) with `algo` ("" : the op's first algorithm that
// runs on this cluster) over `sim`, which carries no traffic yet; the
// fabric's own multicast algorithms run as the fabric_multicast kernel does
// (multicast_worker.h). Throws weft::Error for an unknown op or algorithm,
// multicast on a 2D fabric, a plan that does not fit, or an output that
// differs from the host reference.
OpTime planned_collective(Simulation& sim, const std::string& op, const std::string& algo, uint64_t bytes);

// The ops and algorithms the model runs, for help texts.
std::string planned_algorithms();

}  // namespace weft::fabric_model
