// Moves a tensor from one memory to another on its chip, page by page: from
// DRAM banks into the L1 shards of a grid of worker cores, between shard
// grids, or back (the same tensor and grid of pages on both sides: the host
// checks it, host/tensor/tensor_io.h). Each page goes by the NoC, whatever the
// layouts: a reshard is a copy per page. Arguments: abi::ReshardArgs.
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "weft/abi/tensor.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::ReshardArgs>();
    const uint32_t bytes = abi::page_bytes(args.from.spec);
    const uint64_t pages = abi::tensor_pages(args.from.spec);
    for (uint64_t p = 0; p < pages; ++p)
        noc::async_write(abi::tensor_page_address(args.from, p), abi::tensor_page_address(args.to, p), bytes);
    noc::barrier();
    return 0;
}
