// Round trips of one atomic increment through the fabric, for latency and
// doorbells per hop. Arguments: test_abi::FabricPingArgs.
#include "fabric/connection.h"
#include "hal/noc.h"
#include "kernels/kernel.h"
#include "test_kernel_args.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<test_abi::FabricPingArgs>();
    fabric::Connection c(*reinterpret_cast<const abi::FabricWorkerConnection*>(args.connection));
    fabric::Route to;
    to.dst = {0, args.peer_chip};
    to.hops = args.hops;
    to.route = args.route;
    for (uint32_t k = 1; k <= args.count; ++k) {
        if (!args.initiator) noc::semaphore_wait_min(args.local, k);
        c.atomic_inc(to, args.remote, 1);
        if (args.initiator) noc::semaphore_wait_min(args.local, k);
    }
    c.close();
    return 0;
}
