// Worker side of an EDM channel: the EDM protocol's per-slot semaphore sequence, and
// packetising pages into EDM messages and back. A connection comes from the
// host EDM builder (abi::EdmWorkerConnection in the worker's L1).
#pragma once
#include <stdint.h>

#include "weft/abi/edm.h"
#include "weft/abi/pages.h"

namespace weft::edm {

using abi::Pages;

class WorkerConnection {
public:
    WorkerConnection() = default;
    explicit WorkerConnection(const abi::EdmWorkerConnection& c) : c_(&c), message_(c.first_message) {}

    // Sender: one message of `bytes` (<= slot size) from local src into the next slot.
    // signal: abi::kEdmNextMessageAvailable or kEdmNextMessageIsLast.
    void send(uint64_t src, uint32_t bytes, uint32_t signal = abi::kEdmNextMessageAvailable);
    // Sender: the next message of as many pages as fit in a slot, from page
    // *next on; advances *next. Returns false once every page was sent.
    bool send_next(const Pages& pages, uint32_t* next, bool last_is_final);
    // Sender, worker-initiated termination: stop the channel without a payload.
    void terminate();

    // Receiver: the next message, `bytes` of it copied to local dst.
    void receive(uint64_t dst, uint32_t bytes, uint32_t signal = abi::kEdmNextMessageAvailable);
    // Receiver: unpack the next message into pages (same packing as send_next).
    bool receive_next(const Pages& pages, uint32_t* next, bool last_is_final);

    // One slot at a time, for callers that frame messages themselves:
    // acquire waits for the next slot and returns where its payload is written
    // (sender) or read (receiver); release hands it back to the EDM.
    uint64_t acquire();
    // A sender's `bytes` is the message's length (0: the whole slot).
    void release(uint32_t signal = abi::kEdmNextMessageAvailable, uint32_t bytes = 0);
    // Whether the EDM has handed over the next message's slot, so that the
    // next acquire, send or receive (page forms too) takes it without waiting
    // (a full NoC ring may still make them wait). For workers written as
    // poll() state machines, which must not block.
    bool ready() const;
    // Receivers: release once the math engine has done what was queued on it
    // (it read the slot), without waiting for it here.
    void release_after_math(uint32_t signal = abi::kEdmNextMessageAvailable);

    uint32_t slot_size() const { return c_->slot_size; }
    uint32_t pages_per_message(uint32_t page_size) const { return c_->slot_size / page_size; }
    uint32_t messages() const { return done_; }

private:
    uint32_t next_slot();  // waits for the EDM to hand over the next slot, clears our semaphore
    void finish(uint32_t slot, uint32_t signal, uint32_t bytes = 0);
    void advance();
    uint64_t slot_buffer(uint32_t slot) const;  // where this worker writes or reads a slot's payload
    // Pages in the message that starts at page `next` (0: none left).
    uint32_t message_pages(const Pages& pages, uint32_t next) const;
    static uint32_t page_signal(const Pages& pages, uint32_t next, bool last_is_final);

    const abi::EdmWorkerConnection* c_ = nullptr;
    uint32_t message_ = 0;
    uint32_t done_ = 0;
    uint32_t held_slot_ = 0;
};

}  // namespace weft::edm
