// A CCL worker's program, as the host op builder writes it into the worker's
// L1 and firmware/kernels/ccl_worker runs it. A collective op is lowered on
// the host into one such program per worker core: sends and receives on the
// streams of a transport (abi/channel.h), local copies, and waits/signals
// between the workers of one chip.
#pragma once
#include <stdint.h>

#include "weft/abi/channel.h"
#include "weft/abi/kernel_args.h"
#include "weft/abi/pages.h"

namespace weft::abi {

inline constexpr uint32_t kCclMaxProducers = 8;  // workers of one chip that may signal one another
// Stream ends one worker may serve (one per cable to the same neighbour: a
// board's planes; or one per peer behind one fabric router), named by
// CclInstr::channel. Over the fabric a root that trades with every chip
// (gather, scatter, the direct broadcast and reduce) deals its peers over its
// four workers: 35 on 4mesh3x3 need nine a worker, and a full mesh's worker
// for one direction serves 33 there. 64 is the width of the worker's mask of
// channels it sent on; each costs ~110 bytes of its stack (7 KB of 16).
inline constexpr uint32_t kCclMaxChannels = 64;

enum CclOpcode : uint32_t {
    kCclSend = 1,        // stream `src` (pages) into the sending end of a channel
    kCclRecv = 2,        // drain the receiving end of a channel into `dst` (pages)
    kCclRecvReduce = 3,  // dst = src op incoming, element-wise (src: no pages, dst itself; both contiguous)
    kCclCopy = 4,        // local copy src pages -> dst pages
    kCclWait = 5,        // wait until signals[producer] >= count
    kCclSignal = 6,      // add 1 to the semaphore at `dst.base` (a consumer's signals[my index])
    kCclReduce = 7,      // dst = dst op src, element-wise, locally (both contiguous)
};

using CclPages [[deprecated("use abi::Pages (weft/abi/pages.h)")]] = Pages;

struct CclInstr {
    uint32_t opcode;   // CclOpcode
    uint32_t arg;      // kCclWait: producer index; kCclRecvReduce, kCclReduce: MathOp | DataType << 16
    uint32_t count;    // kCclWait: signal count awaited
    uint32_t channel;  // kCclSend / kCclRecv / kCclRecvReduce: index into the worker's channel table
    Pages src;
    Pages dst;
};
static_assert(sizeof(CclInstr) == 80, "CclInstr layout");

// kCclRecvReduce's and kCclReduce's arg: the reduction (MathOp) in the low
// half, the element type (DataType) in the high half.
constexpr uint32_t ccl_reduce_arg(uint32_t math_op, uint32_t dtype) { return math_op | dtype << 16; }
constexpr uint32_t ccl_reduce_op(uint32_t arg) { return arg & 0xffff; }
constexpr uint32_t ccl_reduce_dtype(uint32_t arg) { return arg >> 16; }

// firmware/kernels/ccl_worker's arguments.
struct CclWorkerArgs {
    uint64_t program;   // CclInstr[instructions]
    uint64_t signals;   // this worker's semaphores: signals[producer index], 4 bytes each
    uint64_t channels;  // ChannelRef[channel_count]; 0 with no channels
    uint32_t instructions;
    uint32_t channel_count;
};
static_assert(sizeof(CclWorkerArgs) == 32 && kIsKernelArgs<CclWorkerArgs>, "CclWorkerArgs layout");

}  // namespace weft::abi
