// The fabric as a transport for the collectives: one end of a stream of
// messages between two worker cores (abi::FabricStreamEnd, placed by
// host/transport/fabric/fabric_transport) behind the transport-neutral
// channel interface. The routers carry every message straight to the
// receiver's L1, however many chips lie between; no worker on the way forwards.
//
// Credits flow back over the fabric as atomic increments, batched: a
// receiver owes them until half its ring is owed or it is about to wait, so
// a stream costs far fewer credit packets than messages. At the end, finish()
// settles them (the sender waits for every credit), so no packet lands in a
// worker's L1 after its kernel ended.
#pragma once
#include <stdint.h>

#include "fabric/connection.h"
#include "hal/mailbox.h"
#include "transport/channel.h"
#include "weft/abi/fault.h"

namespace weft::fabric {

// A kernel's connections, one per router lane it uses, shared by every
// stream through that router: a lane has one writer.
class ConnectionPool {
public:
    Connection& get(const abi::FabricWorkerConnection& c) {
        for (uint32_t i = 0; i < count_; ++i)
            if (described_[i] == &c) return connections_[i];
        if (count_ == kMax) mailbox::panic(abi::kPanicBadArgs, kMax);
        described_[count_] = &c;
        connections_[count_] = Connection(c);
        return connections_[count_++];
    }
    // Waits until the routers have sent every packet of every connection.
    void close_all() {
        for (uint32_t i = 0; i < count_; ++i) connections_[i].close();
    }

private:
    static constexpr uint32_t kMax = 8;  // a router per way out (up to 4) on each of two planes
    const abi::FabricWorkerConnection* described_[kMax] = {};
    Connection connections_[kMax];
    uint32_t count_ = 0;
};

class FabricChannel final : public transport::Channel {
public:
    FabricChannel() = default;
    FabricChannel(const abi::FabricStreamEnd& end, ConnectionPool& pool);

    uint32_t max_message() const override { return end_->message_bytes; }
    uint64_t acquire() override;
    void release(uint32_t bytes) override;
    void release_after_math() override;
    // Sender: waits for every credit; receiver: sends what it owes.
    void finish() override;
    bool is_sender() const { return end_->role == abi::kFabricStreamSender; }

private:
    bool sender() const { return is_sender(); }
    uint64_t slot(uint32_t n) const { return end_->buffer + uint64_t(end_->message_bytes) * (n % end_->slots); }
    Route route() const;
    void pay_credits();

    const abi::FabricStreamEnd* end_ = nullptr;
    Connection* conn_ = nullptr;
    uint32_t done_ = 0;       // messages released
    uint32_t owed_ = 0;       // receiver: credits not sent yet
    bool math_owed_ = false;  // some of them wait for the math engine to finish reading
};

}  // namespace weft::fabric
