// Cuts a tensor into parts along one dimension on its chip, each part into a
// tensor of its own, page by page by the NoC: what a part's page holds of the
// whole is one run inside one of the whole's pages (the host checks it, as
// for an all-gather). The first step of a tensor's reduce-scatter through the
// flat one, which then reduces the parts as one vector, a part a rank; or,
// joining, the last step of an all-gather through the flat one, the parts
// into the whole. Arguments: abi::TensorSplitArgs.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/abi/tensor.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::TensorSplitArgs>();
    const uint64_t pages = abi::tensor_pages(args.part.spec);
    for (uint32_t k = 0; k < args.ranks; ++k) {
        abi::TensorAt part = args.part;
        part.base += k * args.stride;
        for (uint64_t p = 0; p < pages; ++p) {
            const abi::GatheredPage g = abi::gathered_page(args.part.spec, args.whole.spec, args.dim, k, p);
            const uint64_t in_whole = abi::tensor_page_address(args.whole, g.page) + g.offset;
            const uint64_t in_part = abi::tensor_page_address(part, p);
            if (args.join) noc::async_write(in_part, in_whole, g.bytes);
            else
                noc::async_write(in_whole, in_part, g.bytes);
        }
    }
    noc::barrier();
    return 0;
}
