// A CCL worker's program, as the host op builder writes it into the worker's
// L1 and firmware/kernels/ccl_worker runs it. A collective op is lowered on
// the host into one such program per worker core: EDM sends and receives,
// local copies, and waits/signals between the workers of one chip.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint32_t kCclMaxProducers = 8;  // workers of one chip that may signal one another
// EDM connections one worker may serve (one per cable to the same neighbour:
// a board's planes), named by CclInstr::connection.
inline constexpr uint32_t kCclMaxConnections = 4;

enum CclOpcode : uint32_t {
    kCclSend = 1,        // stream `src` (pages) into the EDM sender channel
    kCclRecv = 2,        // drain the EDM receiver channel into `dst` (pages)
    kCclRecvReduce = 3,  // dst = src op incoming, element-wise (src: no pages, dst itself; both contiguous)
    kCclCopy = 4,        // local copy src pages -> dst pages
    kCclWait = 5,        // wait until signals[producer] >= count
    kCclSignal = 6,      // add 1 to the semaphore at `dst.base` (a consumer's signals[my index])
};

// page i of a run: base + i * stride, page_size bytes each.
struct CclPages {
    uint64_t base;
    uint32_t page_size;
    uint32_t count;
    uint64_t stride;
};
static_assert(sizeof(CclPages) == 24, "CclPages layout");

struct CclInstr {
    uint32_t opcode;    // CclOpcode
    uint32_t arg;       // kCclWait: producer index; kCclRecvReduce: MathOp | DataType << 16
    uint32_t count;     // kCclWait: signal count awaited
    uint32_t connection;  // kCclSend / kCclRecv / kCclRecvReduce: index into the worker's EDM connections
    CclPages src;
    CclPages dst;
};
static_assert(sizeof(CclInstr) == 64, "CclInstr layout");

}  // namespace weft::abi
