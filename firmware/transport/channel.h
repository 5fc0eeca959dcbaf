// One end of a stream of messages between two worker cores, whatever carries
// it: the EDM over one cable today (firmware/edm/edm_channel.h), the fabric's
// routers later. The collectives' worker (firmware/kernels/ccl_worker) and
// the page streams (page_stream.h) are written against this alone, as NCCL's
// collectives are against a transport's send and receive connectors.
//
// A message is at most max_message() bytes. The sending end acquires room for
// the next message, has the NoC write the payload there, and releases it with
// its length; the receiving end acquires the next message, has the NoC read
// it (or the math engine reduce it), and releases the room. A release is
// queued behind the commands that touched the message on the same ring, so it
// takes effect only once they are done and the caller never waits for them.
#pragma once
#include <stdint.h>

namespace weft::transport {

class Channel {
public:
    virtual uint32_t max_message() const = 0;
    // Waits for room for (sender) or the arrival of (receiver) the next
    // message; returns the address of its payload.
    virtual uint64_t acquire() = 0;
    // Sender: the payload of `bytes` is queued on this core's NoC ring.
    // Receiver: the message was read by this core's NoC ring.
    virtual void release(uint32_t bytes) = 0;
    // Receiver: the message is read by this core's math ring instead.
    virtual void release_after_math() = 0;
    // The op is over: settles what the transport still owes, so that nothing
    // lands in this worker's L1 once its kernel has ended (a fabric stream's
    // credits). A kernel finishes every receiving end before any sending end:
    // a sending end may wait for its peer's receiving end, whose kernel may be
    // waiting in turn for ours. Nothing to settle by default.
    virtual void finish() {}

protected:
    ~Channel() = default;  // ends live in the kernel's own storage, never deleted through this
};

}  // namespace weft::transport
