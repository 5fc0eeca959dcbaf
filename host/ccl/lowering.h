// Lowers an overlay plan (plan.h) to what the chips run: one program per
// worker core (firmware/kernels/ccl_worker) and the streams of messages
// between them, which a transport (host/transport/transport.h) then carries.
//
// Every transfer is cut into pieces (the tensor slicer: a piece fits a
// stream's buffering, so a chip forwards piece k while piece k+1 arrives),
// routed over the hops between workers the transport's routing names (where
// a worker on an intermediate chip forwards, through a scratch ring), and
// each hop becomes a send on the source chip's worker for that port and a
// receive on the destination chip's worker for its port. A hop direction may
// be striped over several lanes (lanes.h: a sender worker, a stream and a
// receiver worker each): piece k of a transfer takes lane k % lanes, on
// every hop of that direction.
// Workers of one chip order their accesses to shared memory with semaphores:
// an op waits for every earlier op of another worker whose bytes it reads
// over or writes over. Every worker runs its ops in one global order (round,
// piece, transfer, hop) and a send is only ever waited on by the receive at
// the same place in that order (a send short of room in its stream waits for
// receives earlier on the same stream), so no cycle of waits can form. Lanes only hand
// the ops out to more workers; no worker's ops change order, so this holds
// for any number of lanes.
#pragma once
#include <stdint.h>

#include <algorithm>
#include <map>
#include <vector>

#include "ccl/plan.h"
#include "common/error.h"
#include "transport/transport.h"
#include "weft/abi/ccl.h"

namespace weft::ccl {

using transport::Hop;

struct LoweringOptions {
    uint64_t piece_bytes = 64 * 1024;  // pipelining unit: a stream's buffering by default
    // The pieces of a transfer striped over several cables, where smaller
    // ones pay (0: piece_bytes). A worker serving a neighbour's cables in
    // turn sends a piece on one, then the next: a piece as large as a
    // stream's buffering blocks it on one cable's credits while the others
    // run dry.
    uint64_t stripe_piece_bytes = 0;
    uint32_t message_bytes = 16 * 1024;  // the transport's largest message (streams count in them)
    uint32_t element_size = 4;           // pieces of a reduced transfer cut on element boundaries
    uint32_t reduce_arg = 0;             // abi::ccl_reduce_arg(op, dtype) for reductions
    // Lanes per hop direction at most (lanes.h): each gets its own sender
    // and receiver worker and stream while spare worker cores allow.
    uint32_t workers_per_link = 1;
    // Cables per hop at most, where neighbours are joined by several (planes):
    // piece k of a transfer crosses a hop on cable k % planes, each cable with
    // its own workers and streams (so a transfer of one piece uses one cable).
    // 0: as many as the hop has and the worker cores at its ends allow (fewer
    // planes are tried until the workers fit).
    uint32_t planes = 0;
    Pages scratch;  // per chip: forwarding buffers (same addresses on every chip)
    // Last resort where a chip is short of worker cores: one sender serving
    // all its ports and one receiver (lower() says more). Off, the lowering
    // refuses instead, so that a caller with another transport may take it.
    bool fold = true;
};

// A stream of messages out of one chip port on one lane (it carries pieces
// k with k % lanes == lane).
using Stream = transport::StreamSpec;

struct WorkerProgram {
    uint32_t chip = 0, core = 0, index = 0;  // index: among this chip's workers (its signal slot)
    bool receives = false;
    uint32_t port = 0, lane = 0;  // the link and lane it serves (a copy-only worker: 0, 0)
    // Every port it serves, in the order of its channel table
    // (CclInstr::channel): `port` alone, or one per plane when a worker
    // serves all the cables to one neighbour.
    std::vector<uint32_t> ports;
    std::vector<abi::CclInstr> code;  // kCclSignal: arg = consumer's index, address patched by the runner
    // The channel (index into `ports`) that serves `port`; ports.size() if none.
    uint32_t channel_of(uint32_t port) const {
        return static_cast<uint32_t>(std::find(ports.begin(), ports.end(), port) - ports.begin());
    }
};

struct LoweredOp {
    std::vector<WorkerProgram> workers;
    std::vector<Stream> streams;
    uint64_t hops = 0, bytes_on_links = 0;
    uint32_t critical_path = 0;  // ops on the longest chain that must run one after another
    uint32_t planes = 1;         // cables each hop was striped over (at most)
};

// lower()'s error when a chip would need more worker cores than the board has.
struct WorkerShortage : Error {
    using Error::Error;
};

// worker_cores: the board's worker cores, in the order workers are handed out.
LoweredOp lower(const Plan& plan, const transport::Routing& routing, const std::vector<uint32_t>& worker_cores,
                const LoweringOptions& options);

}  // namespace weft::ccl
