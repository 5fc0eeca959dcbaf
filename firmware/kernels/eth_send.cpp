// Sends a buffer over one Ethernet port in packets, `repeat` times, then
// writes a flag word at the peer.
// args: port, src(2), dst(2), len, packet, repeat, flag(2), flag_value
#include "hal/eth.h"
#include "kernels/kernel.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const uint32_t port = a.u32(0);
    const uint64_t src = a.u64(1), dst = a.u64(3);
    const uint32_t len = a.u32(5), packet = a.u32(6), repeat = a.u32(7);
    const uint64_t flag = a.u64(8);
    const uint32_t flag_value = a.u32(10);
    if (packet == 0) mailbox::panic(abi::kPanicBadArgs, 6);
    if (!eth::link_up(port)) return -1;
    for (uint32_t r = 0; r < repeat; ++r) {
        for (uint32_t off = 0; off < len; off += packet) {
            uint32_t n = len - off < packet ? len - off : packet;
            eth::send_bytes(port, src + off, dst + off, n);
        }
        mailbox::set_progress(r + 1);
    }
    if (flag) eth::send_word(port, flag, flag_value);
    eth::wait_tx_idle(port);
    return 0;
}
