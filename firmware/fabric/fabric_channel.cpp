#include "fabric/fabric_channel.h"

#include "hal/math.h"
#include "hal/noc.h"
#include "rt/address.h"

namespace weft::fabric {

FabricChannel::FabricChannel(const abi::FabricStreamEnd& end, ConnectionPool& pool)
    : end_(&end), conn_(&pool.get(*pointer_to<const abi::FabricWorkerConnection>(end.connection))) {
    if (end.slots == 0 || end.message_bytes == 0) mailbox::panic(abi::kPanicBadArgs, end.slots);
}

Route FabricChannel::route() const {
    Route r;
    r.dst = end_->peer;
    r.hops = static_cast<uint8_t>(end_->hops);
    r.route = end_->route;
    return r;
}

uint64_t FabricChannel::acquire() {
    if (sender()) {
        // Room once the receiver has credited the message that used this slot last.
        if (done_ - noc::semaphore_read(end_->counter) >= end_->slots)
            noc::semaphore_wait_min(end_->counter, done_ + 1 - end_->slots);
        return slot(done_);
    }
    if (noc::semaphore_read(end_->counter) < done_ + 1) {
        pay_credits();  // about to wait: the sender may be waiting for them
        noc::semaphore_wait_min(end_->counter, done_ + 1);
    }
    return slot(done_);
}

void FabricChannel::release(uint32_t bytes) {
    if (bytes > end_->message_bytes) mailbox::panic(abi::kPanicBadArgs, bytes);
    if (sender()) {
        // The staged payload's NoC writes are ahead of these on our ring.
        const uint64_t to = end_->remote_buffer + uint64_t(end_->message_bytes) * (done_ % end_->slots);
        conn_->write(route(), to, slot(done_), bytes, end_->remote_counter, 1);
        ++done_;
        return;
    }
    ++done_;
    ++owed_;
    if (2 * owed_ >= end_->slots) pay_credits();
}

void FabricChannel::release_after_math() {
    ++done_;
    ++owed_;
    math_owed_ = true;
    if (2 * owed_ >= end_->slots) pay_credits();
}

// Queued behind our reads of the slots on the NoC ring, so the sender may
// overwrite them only once they are done; a reduction's reads are on the
// math ring, which must drain first.
void FabricChannel::pay_credits() {
    if (!owed_) return;
    if (math_owed_) math::barrier();
    conn_->atomic_inc(route(), end_->remote_counter, owed_);
    owed_ = 0;
    math_owed_ = false;
}

void FabricChannel::finish() {
    if (sender()) {
        if (done_) noc::semaphore_wait_min(end_->counter, done_);
        return;
    }
    pay_credits();
}

}  // namespace weft::fabric
