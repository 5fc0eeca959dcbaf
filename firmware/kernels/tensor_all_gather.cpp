// All-gather of a tensor in any layout over the fabric: every page of this
// chip's part goes, by the shared accessor, to its place in the gathered
// tensor on every chip (its own by the NoC), resharding as it goes: the
// gathered tensor's memory may differ from the part's. Directly, each page
// goes to every peer; round a ring, each chip passes on what it received,
// half the pages each way; along a line, every part each way. The last page
// of a stream increments the receiver's semaphore, which is what the
// receiver waits on before it passes those pages on or ends. Arguments:
// abi::TensorAllGatherArgs.
#include "fabric/connection.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "kernels/tensor_peer.h"
#include "weft/abi/tensor.h"

using namespace weft;

namespace {

struct Gather {
    const abi::TensorAllGatherArgs& args;
    fabric::Connections& ways;

    uint64_t pages() const { return abi::tensor_pages(args.input.spec); }
    abi::GatheredPage place(uint32_t k, uint64_t p) const {
        return abi::gathered_page(args.input.spec, args.output.spec, args.dim, k, p);
    }
    uint64_t out_address(const abi::GatheredPage& g) const {
        return abi::tensor_page_address(args.output, g.page) + g.offset;
    }
    // Part k's pages [from, to) from their places in our output to the same
    // places on `peer`; the last increments `sem` there (alone if there are none).
    void pass_on(uint32_t peer, uint32_t k, uint64_t from, uint64_t to, uint64_t sem) {
        const abi::TensorPeerRoute& r = args.peers[peer];
        if (from == to) return ways[r.direction].atomic_inc(kernels::route_to(r), sem, 1);
        for (uint64_t p = from; p < to; ++p) {
            const abi::GatheredPage g = place(k, p);
            const uint64_t at = out_address(g);
            ways[r.direction].write(kernels::route_to(r), at, at, g.bytes, p + 1 == to ? sem : 0, 1);
        }
    }

    // Our own part to its place in our output, by the NoC.
    void own_part_into_place() {
        for (uint64_t p = 0; p < pages(); ++p) {
            const abi::GatheredPage g = place(args.rank, p);
            noc::async_write(abi::tensor_page_address(args.input, p), out_address(g), g.bytes);
        }
        noc::barrier();
    }

    // Each page to its place here by the NoC, and to every peer.
    void direct() {
        for (uint64_t p = 0; p < pages(); ++p) {
            const abi::GatheredPage g = place(args.rank, p);
            const uint64_t src = abi::tensor_page_address(args.input, p), dst = out_address(g);
            noc::async_write(src, dst, g.bytes);
            for (uint32_t k = 0; k < args.ranks; ++k)
                if (k != args.rank)
                    ways[args.peers[k].direction].write(kernels::route_to(args.peers[k]), dst, src, g.bytes,
                                                        p + 1 == pages() ? args.done_sem : 0, 1);
        }
        noc::semaphore_wait(args.done_sem, args.ranks - 1);
    }

    // Our part into place, then ranks - 1 steps: the first half of part
    // rank - s goes to rank + 1 and the second half of part rank + s to
    // rank - 1, each received the step before (or our own at step 0).
    void ring() {
        const uint32_t n = args.ranks, next = (args.rank + 1) % n, prev = (args.rank + n - 1) % n;
        own_part_into_place();
        const uint64_t half = pages() / 2;
        for (uint32_t s = 0; s + 1 < n; ++s) {
            pass_on(next, (args.rank + n - s) % n, 0, half, args.done_sem);
            pass_on(prev, (args.rank + s) % n, half, pages(), args.done_sem + 4);
            noc::semaphore_wait_min(args.done_sem, s + 1);
            noc::semaphore_wait_min(args.done_sem + 4, s + 1);
        }
    }

    // Our part into place, then, at step s, part rank - s on to rank + 1 and
    // part rank + s on to rank - 1, where both exist: each part received from
    // behind the step before, or our own at step 0. No wrap: a part travels
    // n - 1 cables at most, each cable carries every part once.
    void line() {
        const uint32_t n = args.ranks, r = args.rank;
        own_part_into_place();
        for (uint32_t s = 0; s + 1 < n; ++s) {
            const bool forward = s <= r && r + 1 < n, backward = r + s < n && r >= 1;
            if (forward) {
                if (s > 0) noc::semaphore_wait_min(args.done_sem, s);
                pass_on(r + 1, r - s, 0, pages(), args.done_sem);
            }
            if (backward) {
                if (s > 0) noc::semaphore_wait_min(args.done_sem + 4, s);
                pass_on(r - 1, r + s, 0, pages(), args.done_sem + 4);
            }
        }
        noc::semaphore_wait_min(args.done_sem, r);            // parts 0 .. rank - 1
        noc::semaphore_wait_min(args.done_sem + 4, n - 1 - r);  // parts rank + 1 .. n - 1
    }
};

}  // namespace

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::TensorAllGatherArgs>();
    if (args.ranks > abi::kTensorMaxPeers || args.rank >= args.ranks || args.dim >= abi::kTensorDims ||
        args.algo > abi::kGatherLine)
        mailbox::panic(abi::kPanicBadArgs, args.ranks);
    fabric::Connections ways(args.connection);
    for (uint32_t k = 0; k < args.ranks; ++k)
        if (k != args.rank && !ways.has(args.peers[k].direction)) mailbox::panic(abi::kPanicBadArgs, 1000 + k);
    Gather g{args, ways};
    if (args.algo == abi::kGatherRing) g.ring();
    else if (args.algo == abi::kGatherLine)
        g.line();
    else
        g.direct();
    noc::barrier();
    ways.close();
    return 0;
}
