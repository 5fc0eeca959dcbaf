// All-gather of a tensor in any layout over the fabric: every page of this
// chip's part goes, by the shared accessor, to its place in the gathered
// tensor on every chip (its own by the NoC), resharding as it goes: the
// gathered tensor's memory may differ from the part's. The last page to each
// peer carries an increment of that peer's done semaphore; the kernel ends
// once every peer's pages have landed here. Arguments: abi::TensorAllGatherArgs.
#include "fabric/connection.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/abi/tensor.h"

using namespace weft;

namespace {

fabric::Route route_of(const abi::TensorPeerRoute& p) {
    fabric::Route to;
    to.dst = {p.mesh, p.chip};
    to.hops = p.hops;
    to.count = 1;
    to.ttl = p.ttl;
    to.route = p.route;
    return to;
}

}  // namespace

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::TensorAllGatherArgs>();
    if (args.ranks > abi::kTensorMaxPeers || args.rank >= args.ranks || args.dim >= abi::kTensorDims)
        mailbox::panic(abi::kPanicBadArgs, args.ranks);
    static const abi::FabricWorkerConnection none{};
    auto connection = [&](uint32_t d) -> const abi::FabricWorkerConnection& {
        return args.connection[d] ? *reinterpret_cast<const abi::FabricWorkerConnection*>(args.connection[d]) : none;
    };
    fabric::Connection ways[4] = {fabric::Connection(connection(0)), fabric::Connection(connection(1)),
                                  fabric::Connection(connection(2)), fabric::Connection(connection(3))};
    for (uint32_t k = 0; k < args.ranks; ++k)
        if (k != args.rank && (args.peers[k].direction >= 4 || !args.connection[args.peers[k].direction]))
            mailbox::panic(abi::kPanicBadArgs, 1000 + k);
    const abi::TensorSpec& part = args.input.spec;
    const uint64_t pages = abi::tensor_pages(part);
    for (uint64_t p = 0; p < pages; ++p) {
        const abi::GatheredPage g = abi::gathered_page(part, args.output.spec, args.dim, args.rank, p);
        const uint64_t src = abi::tensor_page_address(args.input, p);
        const uint64_t dst = abi::tensor_page_address(args.output, g.page) + g.offset;
        const bool last = p + 1 == pages;
        noc::async_write(src, dst, g.bytes);
        for (uint32_t k = 0; k < args.ranks; ++k) {
            if (k == args.rank) continue;
            const abi::TensorPeerRoute& peer = args.peers[k];
            ways[peer.direction].write(route_of(peer), dst, src, g.bytes, last ? args.done_sem : 0, 1);
        }
    }
    noc::barrier();
    for (uint32_t d = 0; d < 4; ++d)
        if (args.connection[d]) ways[d].close();
    noc::semaphore_wait(args.done_sem, args.ranks - 1);
    return 0;
}
