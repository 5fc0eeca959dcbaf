// Send/recv of a tensor in any layout over the fabric: a sender writes each
// page of its tensor, by the shared accessor, to its place in its peer's
// tensor (resharding in flight: the two may lie in different memories); its
// last page increments the peer's semaphore, the one thing a receiver waits
// for. A chip may send and receive (a shift round a ring): it sends first,
// so no chip waits on one that waits. Arguments: abi::TensorSendRecvArgs.
#include "fabric/connection.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "kernels/tensor_peer.h"
#include "weft/abi/tensor.h"

using namespace weft;

namespace {

void send(const abi::TensorSendRecvArgs& args) {
    fabric::Connections ways(args.connection);
    const abi::TensorPeerRoute& p = args.peer;
    if (!ways.has(p.direction)) mailbox::panic(abi::kPanicBadArgs, 1000 + p.direction);
    const fabric::Route to = kernels::route_to(p);
    const uint64_t pages = abi::tensor_pages(args.input.spec);
    for (uint64_t k = 0; k < pages; ++k) {
        const abi::GatheredPage g = abi::gathered_page(args.input.spec, args.output.spec, 0, 0, k);
        const uint64_t dst = abi::tensor_page_address(args.output, g.page) + g.offset;
        ways[p.direction].write(to, dst, abi::tensor_page_address(args.input, k), g.bytes,
                                k + 1 == pages ? args.peer_sem : 0, 1);
    }
    if (pages == 0) ways[p.direction].atomic_inc(to, args.peer_sem, 1);
    noc::barrier();
    ways.close();
}

}  // namespace

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::TensorSendRecvArgs>();
    if (args.role == 0 || args.role > (abi::kTensorSend | abi::kTensorReceive))
        mailbox::panic(abi::kPanicBadArgs, args.role);
    if (args.role & abi::kTensorSend) send(args);
    if (args.role & abi::kTensorReceive) noc::semaphore_wait(args.done_sem, 1);
    return 0;
}
