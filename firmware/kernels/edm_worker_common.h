// Shared by the EDM worker kernels: one worker may serve several channels,
// taking one message from each in turn so the channels run concurrently.
// Arguments: abi::EdmWorkerArgs. Returns the messages moved.
#pragma once
#include "edm/worker.h"
#include "hal/noc.h"
#include "kernels/kernel.h"

namespace weft {

template <bool Send>
int serve_edm_channels(KernelArgs a) {
    const auto& args = a.as<abi::EdmWorkerArgs>();
    const uint32_t n = args.job_count;
    if (n == 0 || n > abi::kEdmWorkerMaxJobs) mailbox::panic(abi::kPanicBadArgs, 0);
    edm::WorkerConnection conn[abi::kEdmWorkerMaxJobs];
    abi::Pages pages[abi::kEdmWorkerMaxJobs];
    uint32_t next[abi::kEdmWorkerMaxJobs] = {};
    bool open[abi::kEdmWorkerMaxJobs];
    for (uint32_t k = 0; k < n; ++k) {
        const abi::EdmWorkerJob& j = args.jobs[k];
        conn[k] = edm::WorkerConnection(*reinterpret_cast<const abi::EdmWorkerConnection*>(j.connection));
        pages[k] = abi::Pages{j.base, j.page_size, j.page_count, j.stride};
        open[k] = true;
    }
    int moved = 0;
    for (bool any = true; any;) {
        any = false;
        for (uint32_t k = 0; k < n; ++k) {
            if (!open[k]) continue;
            const bool mark_last = args.jobs[k].finish == abi::kEdmJobMarkLast;
            const bool more = Send ? conn[k].send_next(pages[k], &next[k], mark_last)
                                   : conn[k].receive_next(pages[k], &next[k], mark_last);
            if (more) {
                ++moved;
                any = true;
            } else {
                open[k] = false;
                if (args.jobs[k].finish == abi::kEdmJobTerminate) conn[k].terminate();
            }
        }
    }
    noc::barrier();
    return moved;
}

}  // namespace weft
