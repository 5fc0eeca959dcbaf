// Shared by the EDM worker kernels: one worker may serve several channels,
// taking one message from each in turn so the channels run concurrently.
// args: count, then per channel: connection(2), pages(2), page_size,
//       page_stride, page_count, finish (0 plain, 1 mark the last message,
//       2 terminate after the pages). Returns the messages moved.
#pragma once
#include "edm/worker.h"
#include "hal/noc.h"
#include "kernels/kernel.h"

namespace weft {

inline constexpr uint32_t kMaxWorkerChannels = 16;
inline constexpr uint32_t kWordsPerChannel = 8;

template <bool Send>
int serve_edm_channels(KernelArgs a) {
    const uint32_t n = a.u32(0);
    if (n == 0 || n > kMaxWorkerChannels) mailbox::panic(abi::kPanicBadArgs, 0);
    edm::WorkerConnection conn[kMaxWorkerChannels];
    edm::Pages pages[kMaxWorkerChannels];
    uint32_t next[kMaxWorkerChannels] = {}, finish[kMaxWorkerChannels];
    bool open[kMaxWorkerChannels];
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t w = 1 + k * kWordsPerChannel;
        conn[k] = edm::WorkerConnection(*reinterpret_cast<const abi::EdmWorkerConnection*>(a.u64(w)));
        pages[k] = edm::Pages{a.u64(w + 2), a.u32(w + 4), a.u32(w + 5), a.u32(w + 6)};
        finish[k] = a.u32(w + 7);
        open[k] = true;
    }
    int moved = 0;
    for (bool any = true; any;) {
        any = false;
        for (uint32_t k = 0; k < n; ++k) {
            if (!open[k]) continue;
            bool more = Send ? conn[k].send_next(pages[k], &next[k], finish[k] == 1)
                             : conn[k].receive_next(pages[k], &next[k], finish[k] == 1);
            if (more) {
                ++moved;
                any = true;
            } else {
                open[k] = false;
                if (finish[k] == 2) conn[k].terminate();
            }
        }
    }
    noc::barrier();
    return moved;
}

}  // namespace weft
