// A worker feeding an EDM sender channel: packs pages into messages.
// args: connection(2), pages(2), page_size, page_stride, page_count, finish
//   finish: 0 plain (message-count termination), 1 mark the last message,
//           2 send a terminate signal after the pages
// Returns the number of messages sent.
#include "edm/worker.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    edm::WorkerConnection conn(*reinterpret_cast<const abi::EdmWorkerConnection*>(a.u64(0)));
    const edm::Pages pages{a.u64(2), a.u32(4), a.u32(5), a.u32(6)};
    const uint32_t finish = a.u32(7);
    int sent = static_cast<int>(conn.send_pages(pages, finish == 1));
    if (finish == 2) conn.terminate();
    return sent;
}
