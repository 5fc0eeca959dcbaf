// The EDM as a transport: one end of an EDM channel (worker.h's
// WorkerConnection, from the host EDM builder's abi::EdmWorkerConnection)
// behind the transport-neutral channel interface.
//
// A message takes one EDM slot; the EDM sends only its `bytes`.
#pragma once
#include "edm/worker.h"
#include "hal/mailbox.h"
#include "transport/channel.h"
#include "weft/abi/fault.h"

namespace weft::edm {

class EdmChannel final : public transport::Channel {
public:
    EdmChannel() = default;
    explicit EdmChannel(const abi::EdmWorkerConnection& c) : conn_(c) {}

    uint32_t max_message() const override { return conn_.slot_size(); }
    uint64_t acquire() override { return conn_.acquire(); }
    void release(uint32_t bytes) override {
        if (bytes > conn_.slot_size()) mailbox::panic(abi::kPanicBadArgs, bytes);
        conn_.release(abi::kEdmNextMessageAvailable, bytes);
    }
    void release_after_math() override { conn_.release_after_math(); }
    // finish(): the default. Each release hands its message over whole, and
    // the collectives' EDM channels end after their message count.

private:
    WorkerConnection conn_;
};

}  // namespace weft::edm
