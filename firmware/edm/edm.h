// The ERISC data mover (tt-metal's CCL developer guide): one instance per Ethernet port on its ERISC
// core, moving messages between worker cores and the link on several channels
// at once, each multi-buffered. Written against the HAL only, so the same code
// runs as the `edm` kernel and inside the host unit tests.
//
// Worker <-> EDM, per channel slot i (tt-metal's CCL developer guide, slot by slot):
//   sender:   EDM clears its slot semaphore, then increments the worker's;
//             the worker clears its own, writes the payload into the EDM slot
//             and increments the EDM slot semaphore (ordered after the write).
//   receiver: EDM clears its slot semaphore, then signals the worker (pull:
//             increment; push: the payload written into the worker's slot
//             buffer, then the increment); the worker clears its own, consumes
//             and increments the EDM slot semaphore.
// EDM <-> EDM over the link: payload into the peer's receiver slot, then the
// peer's `filled` counter (a word sent after the bytes lands after them);
// the receiver returns the slot with the sender's `acked` counter.
#pragma once
#include <stdint.h>

#include "hal/eth.h"
#include "weft/abi/edm.h"

namespace weft::edm {

class Edm {
public:
    explicit Edm(abi::EdmConfig& config);

    // One round over the handshake or every channel; true if anything moved.
    bool poll();
    bool done() const { return done_; }
    bool handshake_done() const { return handshake_done_; }
    // Runs to completion, sleeping when nothing can move. Returns 0.
    int run();
    uint32_t messages_moved() const { return moved_; }

private:
    struct Channel {
        const abi::EdmChannel* cfg;
        // sender: granted >= taken >= sent; receiver: delivered >= released
        uint32_t granted = 0, taken = 0, sent = 0;
        uint32_t delivered = 0, released = 0;
        uint32_t credited = 0;                         // receiver: the `released` count last sent to the sender
        bool closed = false;                           // receiver: the worker released its last message
        uint32_t eth_command[abi::kEdmMaxSlots] = {};  // sender: eth command that sends slot i
        bool closing = false;                          // sender: no more grants (last message seen or terminate)
        bool done = false;
    };

    bool poll_handshake();
    bool poll_sender(Channel& ch);
    bool poll_receiver(Channel& ch);
    bool sender_finished(const Channel& ch) const;
    // The next slot to grant is still on the wire: only our Ethernet ring's progress frees it.
    // A sender with a slot to grant its workers next: not closing, a free
    // slot, and (counting messages) one still to come.
    bool wants_grant(const Channel& ch) const;
    bool grant_waits_on_wire(const Channel& ch) const;
    // How its sleeps are rung: abi::kWaitOthersOnly unless it waits on its own commands.
    uint32_t wait_value() const;
    bool tx_room(uint32_t commands) const { return eth::has_room(config_.port, commands); }
    // Waits for `ready`, but no longer than the progress timeout with the
    // cable down: `down_since` is when it was last seen going down (mtime, 0:
    // up). False when the time ran out. With the cable up an EDM that moves
    // nothing is waiting on its workers or its peer, which a busy host makes
    // slow, not stuck: the host watches the op as a whole.
    template <typename Ready>
    bool wait_progress(Ready ready, uint64_t& down_since, uint32_t wait_value);
    // The progress timeout ran out: post the events, then fail. Never returns.
    [[noreturn]] void timed_out(uint64_t down_since);
    void publish(uint32_t index);
    void hand_over(const Channel& ch, uint32_t message, uint32_t slot);

    volatile uint32_t* edm_semaphore(const Channel& ch, uint32_t slot) const;
    // Sender channels: the length of the message in `slot`, as its worker wrote it.
    volatile uint32_t* message_length(const Channel& ch, uint32_t slot) const;
    uint32_t message_bytes(const Channel& ch, uint32_t slot) const;
    uint64_t worker_semaphore(const Channel& ch, uint32_t worker, uint32_t slot) const;
    uint32_t workers_for(const Channel& ch, uint32_t message, uint32_t* first) const;
    uint32_t needed_signals(const Channel& ch) const;
    // The peer's copy of one of our link words (same offset in its EdmLinkWords).
    uint64_t peer_word(const volatile uint32_t* word) const;

    abi::EdmConfig& config_;
    abi::EdmLinkWords& link_;
    Channel channels_[abi::kEdmMaxChannels];
    bool handshake_done_ = false;
    bool handshake_sent_ = false;
    uint64_t next_handshake_ = 0;
    // Between resends of the handshake: handshake_retry_us, doubling up to
    // kHandshakeBackoff times it while the peer has not started (a busy
    // host can start it tens of ms late; every resend is a frame and a wake).
    uint32_t handshake_wait_us_;
    bool done_ = false;
    uint32_t moved_ = 0;
    // TX ring entries a sender leaves free, one per receiver channel: a ring
    // kept full of our own payloads would hold back the credits the peer's
    // sender waits for, and the two directions of the link would take turns.
    uint32_t credit_reserve_ = 0;
};

}  // namespace weft::edm
