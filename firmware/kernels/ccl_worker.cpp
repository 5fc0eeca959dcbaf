// Runs one worker's part of a collective op: a program of EDM sends and
// receives, local copies, and waits/signals between the workers of this chip,
// built by the host op lowering (host/ccl/lowering.cpp).
// Arguments: program (u64), instruction count, signals base (u64: this
// worker's semaphores, one per producer worker), EDM connections (u64: a table
// of abi::EdmWorkerConnection addresses, one per cable the worker serves; 0:
// none) and their count.
// Returns the instructions run.
#include "edm/page_stream.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto* program = reinterpret_cast<const abi::CclInstr*>(a.u64(0));
    const uint32_t count = a.u32(2);
    const uint64_t signals = a.u64(3);
    const auto* table = reinterpret_cast<const uint64_t*>(a.u64(5));
    const uint32_t connections = table ? a.u32(7) : 0;
    if (connections > abi::kCclMaxConnections) mailbox::panic(abi::kPanicBadArgs, connections);
    edm::WorkerConnection conns[abi::kCclMaxConnections];
    for (uint32_t c = 0; c < connections; ++c)
        conns[c] = edm::WorkerConnection(*reinterpret_cast<const abi::EdmWorkerConnection*>(table[c]));
    for (uint32_t i = 0; i < count; ++i) {
        const abi::CclInstr& in = program[i];
        mailbox::set_progress(i);
        const bool needs_link = in.opcode == abi::kCclSend || in.opcode == abi::kCclRecv || in.opcode == abi::kCclRecvReduce;
        if (needs_link && in.connection >= connections) mailbox::panic(abi::kPanicBadArgs, i);
        edm::WorkerConnection& conn = conns[needs_link ? in.connection : 0];
        switch (in.opcode) {
        case abi::kCclSend: edm::stream_send(conn, in.src); break;
        case abi::kCclRecv: edm::stream_receive(conn, in.dst); break;
        case abi::kCclRecvReduce: edm::stream_receive_reduce(conn, in.src, in.dst, in.arg & 0xffff, in.arg >> 16); break;
        case abi::kCclCopy: edm::copy_pages(in.src, in.dst); break;
        case abi::kCclWait:
            if (in.arg >= abi::kCclMaxProducers) mailbox::panic(abi::kPanicBadArgs, i);
            noc::semaphore_wait_min(signals + 4ull * in.arg, in.count);
            break;
        case abi::kCclSignal: noc::semaphore_inc(in.dst.base, 1); break;
        default: mailbox::panic(abi::kPanicBadArgs, i);
        }
    }
    noc::barrier();
    math::barrier();
    return static_cast<int>(count);
}
