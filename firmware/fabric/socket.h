// A fabric socket's end in a kernel (the TT-Fabric spec's sockets): a
// flow-controlled byte stream between two kernels on any two chips of a
// fabric. The host places both ends (transport::open_socket) and passes
// each kernel its abi::ChannelRef. The receiver grants credits as it drains
// its ring of landing slots; the sender writes a message into a slot only
// with a credit for it, so it never overruns the receiver.
//
//   fabric::Socket s(args.end);
//   s.send(src, bytes);   // or s.recv(dst, bytes), any sizes, in order
//   s.close();            // settles the credits and the router lanes
#pragma once
#include <stdint.h>

#include "fabric/fabric_channel.h"
#include "hal/noc.h"
#include "weft/abi/channel.h"

namespace weft::fabric {

class Socket {
public:
    explicit Socket(const abi::ChannelRef& end)
        : channel_(*reinterpret_cast<const abi::FabricStreamEnd*>(end.address), pool_) {
        if (end.transport != abi::kTransportFabric) mailbox::panic(abi::kPanicBadArgs, end.transport);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;

    // A byte stream: the calls on the two ends need not match. Messages are
    // the socket's size, the last of the stream shorter; both ends must
    // move the same bytes in all.
    void send(uint64_t src, uint64_t bytes) { move(src, bytes, true); }
    void recv(uint64_t dst, uint64_t bytes) { move(dst, bytes, false); }
    // Hands over a last short message, then settles: the sender waits for
    // every credit, the receiver pays what it owes; the lanes' packets have
    // all left, and the kernel may end.
    void close() {
        if (used_) channel_.release(used_);
        used_ = 0;
        channel_.finish();
        pool_.close_all();
    }

private:
    // Fills (sender) or drains (receiver) messages over the NoC, a message
    // released once full (or emptied): its bytes ahead of it on our NoC ring.
    void move(uint64_t local, uint64_t bytes, bool sending) {
        const uint32_t size = channel_.max_message();
        while (bytes > 0) {
            if (!used_ && !held_) slot_ = channel_.acquire(), held_ = true;
            const uint32_t n = bytes < size - used_ ? static_cast<uint32_t>(bytes) : size - used_;
            if (sending) noc::async_write(local, slot_ + used_, n);
            else
                noc::async_read(slot_ + used_, local, n);
            local += n, bytes -= n, used_ += n;
            if (used_ == size) channel_.release(size), used_ = 0, held_ = false;
        }
    }

    ConnectionPool pool_;  // before channel_: the channel keeps a connection of it
    FabricChannel channel_;
    uint64_t slot_ = 0;  // the message being filled or drained
    uint32_t used_ = 0;  // its bytes so far
    bool held_ = false;
};

}  // namespace weft::fabric
