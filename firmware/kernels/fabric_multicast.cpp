// A fabric-native all-gather or broadcast step on one chip: its block goes
// out as a multicast write each way (one packet stream reaches a whole run of
// chips: the routers deliver and forward it), the last packet of each adding
// 1 to the semaphore at the same address on every chip reached; then the
// kernel waits until this chip has received its share of blocks.
// Arguments: abi::FabricMulticastArgs.
#include "fabric/connection.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "rt/address.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::FabricMulticastArgs>();
    if (args.local_dst && args.bytes) noc::async_write(args.src, args.local_dst, args.bytes);
    fabric::Connection way[2] = {};
    for (uint32_t d = 0; d < 2; ++d) {
        if (!args.count[d]) continue;
        if (!args.connection[d]) mailbox::panic(abi::kPanicBadArgs, d);
        way[d] = fabric::Connection(*pointer_to<const abi::FabricWorkerConnection>(args.connection[d]));
        fabric::Route to;
        to.dst = {0, args.first_chip[d]};
        to.hops = 1;
        to.count = args.count[d];
        if (args.bytes) way[d].write(to, args.dst, args.src, args.bytes, args.sem, 1);
        else
            way[d].atomic_inc(to, args.sem, 1);
    }
    if (args.expect) noc::semaphore_wait_min(args.sem, args.expect);
    for (uint32_t d = 0; d < 2; ++d)
        if (args.count[d]) way[d].close();
    noc::barrier();
    return 0;
}
