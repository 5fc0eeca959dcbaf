// A run of pages moved through one channel as a byte stream, cut into
// messages of the channel's largest size: the sender gathers pages into
// messages, the receiver scatters messages into pages (the two sides may use
// different page shapes). A stream of B bytes is ceil(B / max_message)
// messages on both sides, which is how the host counts a stream's messages.
#pragma once
#include "transport/channel.h"
#include "weft/abi/pages.h"

namespace weft::transport {

using abi::Pages;

void stream_send(Channel& c, const Pages& src);
void stream_receive(Channel& c, const Pages& dst);
// dst = with op incoming, element-wise (abi::MathOp, abi::DataType); `with`
// of no pages: dst itself. Both contiguous.
void stream_receive_reduce(Channel& c, const Pages& with, const Pages& dst, uint32_t op, uint32_t dtype);
// A local NoC copy between two runs of the same size and any page shapes.
void copy_pages(const Pages& src, const Pages& dst);
// dst = dst op src, element-wise, on the math engine (both contiguous, the
// same size). Queued only: the caller orders what follows on the math ring.
void reduce_pages(const Pages& src, const Pages& dst, uint32_t op, uint32_t dtype);

}  // namespace weft::transport
