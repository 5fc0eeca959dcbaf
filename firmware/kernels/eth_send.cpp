// Sends a buffer over one Ethernet port in packets, `repeat` times, then
// writes a flag word at the peer.
// Arguments: abi::EthSendArgs.
#include "hal/eth.h"
#include "kernels/kernel.h"
#include "weft/abi/platform_kernels.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::EthSendArgs>();
    const uint32_t port = args.port, len = args.len, packet = args.packet, repeat = args.repeat;
    const uint64_t src = args.src, dst = args.dst;
    if (packet == 0) mailbox::panic(abi::kPanicBadArgs, packet);
    if (!eth::link_up(port)) return -1;
    for (uint32_t r = 0; r < repeat; ++r) {
        for (uint32_t off = 0; off < len; off += packet) {
            uint32_t n = len - off < packet ? len - off : packet;
            eth::send_bytes(port, src + off, dst + off, n);
        }
        mailbox::set_progress(r + 1);
    }
    if (args.flag) eth::send_word(port, args.flag, args.flag_value);
    eth::wait_tx_idle(port);
    return 0;
}
