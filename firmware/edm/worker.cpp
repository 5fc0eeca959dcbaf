#include "edm/worker.h"

#include "hal/mailbox.h"
#include "hal/math.h"
#include "hal/noc.h"
#include "weft/abi/fault.h"

namespace weft::edm {

uint32_t WorkerConnection::next_slot() {
    const uint32_t slot = message_ % c_->slots;
    const uint64_t sem = c_->worker_semaphore_base + 4ull * slot;
    noc::semaphore_wait_min(sem, 1);
    // Clear before notifying the EDM back: after that it may signal this slot again.
    noc::semaphore_set(sem, 0);
    return slot;
}

bool WorkerConnection::ready() const {
    return noc::semaphore_read(c_->worker_semaphore_base + 4ull * (message_ % c_->slots)) >= 1;
}

void WorkerConnection::finish(uint32_t slot, uint32_t signal, uint32_t bytes) {
    // Same ring as the payload's command: the length and then the increment
    // land after the bytes, so the EDM reads the length once it sees the signal.
    if (c_->role == abi::kEdmSender && bytes)
        noc::async_inline_write(c_->edm_semaphore_base + 4ull * (c_->slots + slot), bytes);
    noc::semaphore_inc(c_->edm_semaphore_base + 4ull * slot, signal);
    advance();
}

void WorkerConnection::advance() {
    message_ += c_->message_stride;
    ++done_;
}

uint64_t WorkerConnection::slot_buffer(uint32_t slot) const {
    // Senders write the EDM's slot; receivers read it (pull) or their own landing copy (push).
    const bool own = c_->role == abi::kEdmReceiver && c_->receive_mode == abi::kEdmPush;
    return (own ? c_->worker_buffer_base : c_->edm_buffer_base) + uint64_t(c_->slot_size) * slot;
}

uint32_t WorkerConnection::message_pages(const Pages& p, uint32_t next) const {
    const uint32_t per = p.page_size > c_->slot_size ? 0 : pages_per_message(static_cast<uint32_t>(p.page_size));
    if (per == 0) mailbox::panic(abi::kPanicBadArgs, static_cast<uint32_t>(p.page_size));
    if (next >= p.count) return 0;
    return p.count - next < per ? p.count - next : per;
}

uint32_t WorkerConnection::page_signal(const Pages& p, uint32_t next, bool last_is_final) {
    return last_is_final && next == p.count ? abi::kEdmNextMessageIsLast : abi::kEdmNextMessageAvailable;
}

void WorkerConnection::send(uint64_t src, uint32_t bytes, uint32_t signal) {
    if (bytes > c_->slot_size) mailbox::panic(abi::kPanicBadArgs, bytes);
    const uint32_t slot = next_slot();
    noc::async_write(src, slot_buffer(slot), bytes);
    finish(slot, signal, bytes);
}

uint64_t WorkerConnection::acquire() {
    held_slot_ = next_slot();
    return slot_buffer(held_slot_);
}

void WorkerConnection::release(uint32_t signal, uint32_t bytes) { finish(held_slot_, signal, bytes); }

void WorkerConnection::release_after_math(uint32_t signal) {
    math::semaphore_inc(c_->edm_semaphore_base + 4ull * held_slot_, signal);
    advance();
}

void WorkerConnection::terminate() {
    // A sender signals in the slot it would have filled; a receiver on the
    // channel's control semaphore (its last release may still be in flight).
    if (c_->role == abi::kEdmSender) {
        const uint32_t slot = next_slot();
        noc::semaphore_inc(c_->edm_semaphore_base + 4ull * slot, abi::kEdmTerminateImmediately);
    } else {
        noc::semaphore_inc(c_->edm_control_semaphore, abi::kEdmTerminateImmediately);
    }
}

void WorkerConnection::receive(uint64_t dst, uint32_t bytes, uint32_t signal) {
    if (bytes > c_->slot_size) mailbox::panic(abi::kPanicBadArgs, bytes);
    const uint32_t slot = next_slot();
    noc::async_read(slot_buffer(slot), dst, bytes);  // the release below is ordered after it on the same ring
    finish(slot, signal);
}

bool WorkerConnection::send_next(const Pages& p, uint32_t* next, bool last_is_final) {
    const uint32_t n = message_pages(p, *next);
    if (n == 0) return false;
    const uint32_t slot = next_slot();
    const uint64_t into = slot_buffer(slot);
    for (uint32_t i = 0; i < n; ++i)
        noc::async_write(p.base + uint64_t(*next + i) * p.stride, into + uint64_t(i) * p.page_size, p.page_size);
    *next += n;
    finish(slot, page_signal(p, *next, last_is_final), n * p.page_size);
    return true;
}

bool WorkerConnection::receive_next(const Pages& p, uint32_t* next, bool last_is_final) {
    const uint32_t n = message_pages(p, *next);
    if (n == 0) return false;
    const uint32_t slot = next_slot();
    const uint64_t from = slot_buffer(slot);
    for (uint32_t i = 0; i < n; ++i)
        noc::async_read(from + uint64_t(i) * p.page_size, p.base + uint64_t(*next + i) * p.stride, p.page_size);
    // No barrier: the release below is queued on the same NoC ring, so it lands
    // after the reads, and the EDM refills the slot only after the release.
    *next += n;
    finish(slot, page_signal(p, *next, last_is_final));
    return true;
}

}  // namespace weft::edm
