#include "edm/edm.h"

#include "hal/eth.h"
#include "hal/mailbox.h"
#include "hal/noc.h"
#include "hal/status_events.h"
#include "hal/timer.h"
#include "hal/wait.h"
#include "rt/address.h"
#include "weft/abi/fault.h"

namespace weft::edm {
namespace {

volatile uint32_t* word_at(uint64_t addr) { return pointer_to<volatile uint32_t>(addr); }

}  // namespace

Edm::Edm(abi::EdmConfig& config)
    : config_(config),
      link_(*pointer_to<abi::EdmLinkWords>(config.link_words)),
      handshake_wait_us_(config.handshake_retry_us) {
    if (config.magic != abi::kEdmMagic) mailbox::panic(abi::kPanicBadArgs, 0);
    if (config.num_channels > abi::kEdmMaxChannels) mailbox::panic(abi::kPanicBadArgs, 1);
    for (uint32_t i = 0; i < config.num_channels; ++i) {
        const abi::EdmChannel& c = config.channels[i];
        if (c.slots == 0 || c.slots > abi::kEdmMaxSlots || c.num_workers == 0 || c.num_workers > abi::kEdmMaxWorkers ||
            c.id >= abi::kEdmMaxChannels)
            mailbox::panic(abi::kPanicBadArgs, 100 + i);
        channels_[i].cfg = &c;
        if (c.role == abi::kEdmReceiver) ++credit_reserve_;
        config.status[i] = abi::EdmChannelStatus{};
        // Clear-before-notify at start-up: no worker has been told of any slot yet.
        for (uint32_t s = 0; s < c.slots; ++s) {
            *edm_semaphore(channels_[i], s) = 0;
            if (c.role == abi::kEdmSender) *message_length(channels_[i], s) = 0;
        }
        if (c.control_semaphore) *word_at(c.control_semaphore) = 0;
    }
    config.handshake_done = 0;
    // The peer writes these only after the handshake, so clearing them now is safe;
    // the handshake words themselves carry the epoch and are never cleared.
    for (uint32_t i = 0; i < abi::kEdmMaxChannels; ++i) {
        link_.filled[i] = 0;
        link_.acked[i] = 0;
    }
}

volatile uint32_t* Edm::edm_semaphore(const Channel& ch, uint32_t slot) const {
    return word_at(ch.cfg->semaphore_base + 4ull * slot);
}

volatile uint32_t* Edm::message_length(const Channel& ch, uint32_t slot) const {
    return word_at(ch.cfg->semaphore_base + 4ull * (ch.cfg->slots + slot));
}

uint32_t Edm::message_bytes(const Channel& ch, uint32_t slot) const {
    const uint32_t size = ch.cfg->slot_size;
    if (ch.cfg->sharing == abi::kEdmShared) return size;  // several writers: no one length
    const uint32_t bytes = *message_length(ch, slot);
    return bytes && bytes <= size ? bytes : size;
}

uint64_t Edm::worker_semaphore(const Channel& ch, uint32_t worker, uint32_t slot) const {
    return ch.cfg->workers[worker].semaphore_base + 4ull * slot;
}

uint64_t Edm::peer_word(const volatile uint32_t* word) const {
    return config_.peer_link_words + (address_of(word) - address_of(&link_));
}

// Which workers take message number `message`: returns how many, from *first.
uint32_t Edm::workers_for(const Channel& ch, uint32_t message, uint32_t* first) const {
    switch (ch.cfg->sharing) {
        case abi::kEdmRoundRobin: *first = message % ch.cfg->num_workers; return 1;
        case abi::kEdmShared: *first = 0; return ch.cfg->num_workers;
    }
    *first = 0;
    return 1;
}

uint32_t Edm::needed_signals(const Channel& ch) const {
    return ch.cfg->sharing == abi::kEdmShared ? ch.cfg->num_workers : 1;
}

// The EDM protocol's clear-before-notify (tt-metal's CCL developer guide), for both channel roles: clear our slot
// semaphore, then tell the slot's workers (a push receiver's payload goes with
// the increment, written before it on the same NoC ring).
void Edm::hand_over(const Channel& ch, uint32_t message, uint32_t slot) {
    const abi::EdmChannel& c = *ch.cfg;
    *edm_semaphore(ch, slot) = 0;
    // A worker that sends without a length gets the whole slot, not the last one's.
    if (c.role == abi::kEdmSender) *message_length(ch, slot) = 0;
    uint32_t first, count = workers_for(ch, message, &first);
    for (uint32_t w = first; w < first + count; ++w) {
        const uint64_t sem = worker_semaphore(ch, w, slot);
        if (c.role == abi::kEdmReceiver && c.receive_mode == abi::kEdmPush)
            noc::async_write_inc(c.buffer_base + uint64_t(c.slot_size) * slot,
                                 c.workers[w].buffer_base + uint64_t(c.slot_size) * slot, c.slot_size, sem, 1);
        else
            noc::semaphore_inc(sem, 1);
    }
}

bool Edm::poll_handshake() {
    // tt-metal's CCL developer guide: the initiator sends to the fixed 16-byte handshake address and
    // waits for the acknowledgement; it resends until then, so the two chips
    // may start in any order and at any time.
    if (config_.handshake_initiator) {
        if (link_.handshake_ack == config_.epoch) {
            handshake_done_ = true;
            config_.handshake_done = 1;
            return true;
        }
        const uint64_t now = timer::now();
        if ((!handshake_sent_ || now >= next_handshake_) && tx_room(1)) {
            eth::send_word(config_.port, peer_word(&link_.handshake), config_.epoch);
            constexpr uint32_t kHandshakeBackoff = 16;
            const uint32_t most = config_.handshake_retry_us * kHandshakeBackoff;
            if (handshake_sent_) handshake_wait_us_ = handshake_wait_us_ < most / 2 ? handshake_wait_us_ * 2 : most;
            handshake_sent_ = true;
            next_handshake_ = now + uint64_t(handshake_wait_us_) * timer::ticks_per_us();
            return true;
        }
        return false;
    }
    if (link_.handshake != config_.epoch || !tx_room(1)) return false;
    eth::send_word(config_.port, peer_word(&link_.handshake_ack), config_.epoch);
    handshake_done_ = true;
    config_.handshake_done = 1;
    return true;
}

bool Edm::sender_finished(const Channel& ch) const {
    const uint32_t acked = link_.acked[ch.cfg->id];
    if (config_.termination == abi::kEdmMessageCount)
        return ch.sent == ch.cfg->message_count && acked == ch.cfg->message_count;
    return ch.closing && ch.sent == ch.taken && acked == ch.sent;
}

bool Edm::wants_grant(const Channel& ch) const {
    return !ch.closing && ch.granted - ch.sent < ch.cfg->slots &&
           (config_.termination != abi::kEdmMessageCount || ch.granted < ch.cfg->message_count);
}

bool Edm::grant_waits_on_wire(const Channel& ch) const {
    const uint32_t n = ch.cfg->slots;
    return ch.granted >= n && !eth::done(config_.port, ch.eth_command[ch.granted % n]);
}

// Asleep, an EDM is rung only for what its workers and its peer write (their
// payloads and releases, the peer's counts), unless a grant waits for a slot
// to leave the wire or a send for room in the Ethernet ring. Its NoC
// commands (the hand-overs) it never waits for.
uint32_t Edm::wait_value() const {
    if (!tx_room(2 + credit_reserve_)) return 0;
    for (uint32_t i = 0; i < config_.num_channels; ++i) {
        const Channel& ch = channels_[i];
        if (!ch.done && ch.cfg->role == abi::kEdmSender && wants_grant(ch) && grant_waits_on_wire(ch)) return 0;
    }
    return abi::kWaitOthersOnly;
}

bool Edm::poll_sender(Channel& ch) {
    const abi::EdmChannel& c = *ch.cfg;
    const uint32_t n = c.slots;
    bool moved = false;
    // 1. Grant free slots to the workers (clear our semaphore, then notify).
    while (wants_grant(ch)) {
        const uint32_t slot = ch.granted % n;
        if (grant_waits_on_wire(ch)) break;
        hand_over(ch, ch.granted, slot);
        ++ch.granted;
        moved = true;
    }
    // 2. Take the payloads the workers have written.
    while (ch.taken < ch.granted) {
        const uint32_t slot = ch.taken % n;
        const uint32_t signal = *edm_semaphore(ch, slot);
        if (signal < needed_signals(ch)) break;
        if (c.sharing != abi::kEdmShared && signal == abi::kEdmTerminateImmediately) {
            ch.closing = true;  // no payload in this slot
            moved = true;
            break;
        }
        if (c.sharing != abi::kEdmShared && signal == abi::kEdmNextMessageIsLast) ch.closing = true;
        ++ch.taken;
        moved = true;
        if (ch.closing) break;
    }
    // 3. Send what was taken while the peer has a free slot.
    while (ch.sent < ch.taken && ch.sent - link_.acked[c.id] < n && tx_room(2 + credit_reserve_)) {
        const uint32_t slot = ch.sent % n;
        ch.eth_command[slot] = eth::issued(config_.port);
        eth::send_bytes(config_.port, c.buffer_base + uint64_t(c.slot_size) * slot,
                        c.remote_buffer_base + uint64_t(c.slot_size) * slot, message_bytes(ch, slot));
        ++ch.sent;
        eth::send_word(config_.port, peer_word(&link_.filled[c.id]), ch.sent);
        ++moved_;
        moved = true;
    }
    if (sender_finished(ch)) {
        ch.done = true;
        moved = true;
    }
    return moved;
}

bool Edm::poll_receiver(Channel& ch) {
    const abi::EdmChannel& c = *ch.cfg;
    const uint32_t n = c.slots;
    bool moved = false;
    const uint32_t filled = link_.filled[c.id];
    // 1. Hand arrived messages to the workers.
    while (ch.delivered < filled && ch.delivered - ch.released < n) {
        const uint32_t slot = ch.delivered % n;
        hand_over(ch, ch.delivered, slot);
        ++ch.delivered;
        moved = true;
    }
    // 2. Return slots the workers are done with to the sender: one credit word
    // (the count released so far) covers every slot freed in this round.
    const uint32_t released_before = ch.released;
    while (!ch.closed && ch.released < ch.delivered) {
        const uint32_t slot = ch.released % n;
        const uint32_t signal = *edm_semaphore(ch, slot);
        if (signal < needed_signals(ch)) break;
        *edm_semaphore(ch, slot) = 0;
        ++ch.released;
        ch.closed = c.sharing != abi::kEdmShared && signal == abi::kEdmNextMessageIsLast &&
                    config_.termination == abi::kEdmWorkerInitiated;
    }
    if (ch.released != released_before) {
        moved_ += ch.released - released_before;
        moved = true;
    }
    if (ch.released != ch.credited && tx_room(1)) {
        ch.credited = ch.released;
        eth::send_word(config_.port, peer_word(&link_.acked[c.id]), ch.credited);
        moved = true;
    }
    // 3. Termination, once the sender has been told of every freed slot.
    if (ch.credited != ch.released) return moved;
    if (ch.closed) {
        ch.done = true;
    } else if (config_.termination == abi::kEdmMessageCount) {
        if (ch.released == c.message_count) ch.done = true;
    } else if (ch.released == ch.delivered && c.control_semaphore &&
               *word_at(c.control_semaphore) >= abi::kEdmTerminateImmediately) {
        ch.done = true;
    }
    return moved || ch.done;
}

bool Edm::poll() {
    if (done_) return false;
    eth::check(config_.port);  // a dead link faults the EDM with the port named, it does not hang it
    if (!handshake_done_) return poll_handshake();
    bool moved = false, all_done = true;
    for (uint32_t i = 0; i < config_.num_channels; ++i) {
        Channel& ch = channels_[i];
        if (ch.done) continue;
        if (ch.cfg->role == abi::kEdmSender ? poll_sender(ch) : poll_receiver(ch)) {
            moved = true;
            publish(i);
        }
        all_done &= ch.done;
    }
    if (all_done) done_ = moved = true;
    mailbox::set_progress(moved_);
    return moved;
}

void Edm::publish(uint32_t i) {
    const Channel& ch = channels_[i];
    abi::EdmChannelStatus& st = config_.status[i];
    const bool sender = ch.cfg->role == abi::kEdmSender;
    st.granted_or_delivered = sender ? ch.granted : ch.delivered;
    st.taken = ch.taken;
    st.sent_or_released = sender ? ch.sent : ch.released;
    st.done = ch.done;
}

// wait_value: whose writes ring it (Edm::wait_value, or 0 where it waits on
// its own commands).
template <typename Ready>
bool Edm::wait_progress(Ready ready, uint64_t& down_since, uint32_t wait_value) {
    const uint64_t limit = uint64_t(config_.progress_timeout_us) * timer::ticks_per_us();
    // An initiator resends its handshake on a timer: nothing rings for that.
    const uint32_t alarm_us = !handshake_done_ && config_.handshake_initiator ? handshake_wait_us_ : 0;
    bool out_of_time = false;
    wait_active(
        [&] {
            if (ready()) return true;
            if (eth::link_up(config_.port)) {
                down_since = 0;
                return false;
            }
            const uint64_t now = timer::now();
            if (!down_since) down_since = now;
            out_of_time = limit && now - down_since >= limit;
            return out_of_time;
        },
        abi::kWaitEdm, address_of(&config_), wait_value, alarm_us);
    return !out_of_time;
}

void Edm::timed_out(uint64_t down_since) {
    // Name the first channel still running: on a dead link they all are, and
    // the one that was meant to finish first is where the op stands.
    uint32_t channel = 0;
    for (uint32_t i = 0; i < config_.num_channels; ++i) {
        if (!channels_[i].done) {
            channel = channels_[i].cfg->id;
            break;
        }
    }
    const uint64_t us = (timer::now() - down_since) / timer::ticks_per_us();
    status::post(abi::kEventTimeout, config_.port, channel, us);
    status::post(abi::kEventLinkDown, config_.port, channel, us);
    mailbox::panic(abi::kPanicEdmTimeout, (uint64_t(config_.port) << 48) | (uint64_t(channel & 0xffff) << 32) |
                                              (us > 0xffffffffu ? 0xffffffffu : us));
}

int Edm::run() {
    uint64_t down_since = 0;
    while (!done_) {
        bool moved = false;
        if (!wait_progress([&] { return (moved = poll()) || done_; }, down_since, wait_value()))
            timed_out(down_since);
    }
    // Every ack and counter we sent must be on the wire before the core is
    // reused: our own commands, so their completion must ring us (0).
    const uint32_t issued = eth::issued(config_.port);
    if (!wait_progress([&] { return eth::check(config_.port) && eth::completed(config_.port) == issued; },
                       down_since, 0))
        timed_out(down_since);
    noc::barrier();
    return 0;
}

}  // namespace weft::edm
