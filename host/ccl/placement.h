// Places a lowered op on the chips: its streams with the transport, each
// worker's program, signal semaphores and channel table in the worker's L1,
// and the launches of the transport's kernels and the workers. The result is
// plain data (what to write where, what to launch), so the runner applies it
// to a live cluster and a unit test inspects it with a fake transport.
#pragma once
#include <stdint.h>

#include <vector>

#include "ccl/lowering.h"
#include "driver/chip_writer.h"
#include "driver/cluster.h"
#include "driver/memory_image.h"
#include "transport/transport.h"

namespace weft::ccl {

using weft::MemoryImage;  // driver/memory_image.h

struct PlacedOp {
    MemoryImage memory;
    std::vector<Launch> launches;             // the transport's kernels first, then one ccl_worker per worker
    std::vector<transport::StreamEnds> ends;  // per stream of the op
};

// worker_kernel: the ccl_worker image every worker launch names. Throws
// weft::Error naming what does not fit (L1) or cannot be carried.
PlacedOp place_op(const LoweredOp& op, transport::Transport& transport, transport::L1Allocator& mem,
                  const KernelImage* worker_kernel);

}  // namespace weft::ccl
