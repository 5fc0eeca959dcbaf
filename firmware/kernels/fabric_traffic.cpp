// Sends packets through the fabric with the worker API, one job per call,
// then closes its connections (every packet has left its router): the
// system tests' traffic, and weft replay's.
// Arguments: abi::FabricTrafficArgs.
#include "fabric/connection.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::FabricTrafficArgs>();
    if (args.job_count > abi::kFabricTrafficMaxJobs) mailbox::panic(abi::kPanicBadArgs, args.job_count);
    fabric::Connections connections(args.connection);
    for (uint32_t i = 0; i < args.job_count; ++i) {
        const abi::FabricTrafficJob& j = args.jobs[i];
        if (!connections.has(j.direction)) mailbox::panic(abi::kPanicBadArgs, 1000 + i);
        fabric::Connection& c = connections[j.direction];
        fabric::Route to;
        to.dst = {j.dst_mesh, j.dst_chip};
        to.hops = j.hops;
        to.count = j.count;
        to.ttl = j.ttl;
        to.route = j.route;
        switch (j.command) {
            case abi::kFabricWrite:
            case abi::kFabricWriteInc: c.write(to, j.dst, j.src, j.bytes, j.sem, j.inc); break;
            case abi::kFabricAtomicInc: c.atomic_inc(to, j.sem, j.inc); break;
            case abi::kFabricInlineWrite: c.inline_write(to, j.dst, j.inc); break;
            case abi::kFabricScatterWrite: {
                const uint64_t dst[3] = {j.dst, j.scatter[0], j.scatter[1]};
                c.scatter_write(to, dst, j.scatter[1] ? 3 : j.scatter[0] ? 2 : 1, j.src, j.bytes);
                break;
            }
            default: mailbox::panic(abi::kPanicBadArgs, 2000 + i);
        }
    }
    connections.close();
    return 0;
}
