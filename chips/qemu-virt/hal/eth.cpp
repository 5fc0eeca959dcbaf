#include "hal/eth.h"

#include "ring_submit.h"

namespace weft::eth {
namespace {

using qemu_virt::devices;

// The ports of a chip of this build: its board's. The host board stands in
// for every board (the fabric model runs two-plane ones too), so it takes
// as many as the control block has.
#ifdef WEFT_HOST_BOARD
constexpr uint32_t kPorts = abi::kMaxPorts;
#else
constexpr uint32_t kPorts = WEFT_NUM_PORTS;
#endif

abi::EthRing& ring(uint32_t port) { return devices().eth[port]; }

void submit(uint32_t port, uint16_t op, uint64_t src, uint64_t dst, uint32_t len, uint32_t value) {
    if (port >= kPorts) mailbox::panic(abi::kPanicBadArgs, port);
    abi::EthCommand c{};
    c.op = op;
    c.len = len;
    c.src = src;
    c.dst = dst;
    c.value = value;
    qemu_virt::ring_submit(ring(port), c, abi::kRingEth, port, abi::kWaitEthRing);
}

}  // namespace

void send_bytes(uint32_t port, uint64_t src, uint64_t dst, uint32_t len) {
    submit(port, abi::kEthSendBytes, src, dst, len, 0);
}
void send_word(uint32_t port, uint64_t dst, uint32_t value) { submit(port, abi::kEthSendWord, 0, dst, 4, value); }
void wait_tx_idle(uint32_t port) { qemu_virt::ring_drain(ring(port), abi::kRingEth, port, abi::kWaitEthRing); }
uint32_t issued(uint32_t port) { return ring(port).tail; }
uint32_t completed(uint32_t port) { return ring(port).head; }
uint32_t queue_capacity() { return abi::EthRing::kSlots; }
bool check(uint32_t port) { return qemu_virt::ring_ok(ring(port), abi::kRingEth, port); }
void recover(uint32_t port, bool drop_queued) {
    qemu_virt::ring_recover(ring(port), abi::kWaitEthRing, port, drop_queued);
}
uint32_t peer_chip(uint32_t port) { return port < kPorts ? devices().port[port].peer_chip : 0; }
bool link_up(uint32_t port) { return port < kPorts && devices().port[port].state == abi::kLinkUp; }

}  // namespace weft::eth
