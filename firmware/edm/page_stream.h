// A run of pages moved through one EDM channel as a byte stream, cut into
// slot-sized messages: the sender gathers pages into messages, the receiver
// scatters messages into pages (the two sides may use different page shapes).
// A stream of B bytes is ceil(B / slot_size) messages on both sides, which is
// how the host counts a channel's messages.
#pragma once
#include "edm/worker.h"
#include "weft/abi/ccl.h"

namespace weft::edm {

void stream_send(WorkerConnection& c, const abi::CclPages& src);
void stream_receive(WorkerConnection& c, const abi::CclPages& dst);
// dst = with op incoming, element-wise; `with` of no pages: dst itself. Both contiguous.
void stream_receive_reduce(WorkerConnection& c, const abi::CclPages& with, const abi::CclPages& dst, uint32_t op,
                           uint32_t dtype);
// A local NoC copy between two runs of the same size and any page shapes.
void copy_pages(const abi::CclPages& src, const abi::CclPages& dst);

}  // namespace weft::edm
