// One-word ping-pong over a link. The initiator writes i into the peer's flag
// and waits for the echo in its own; the responder echoes.
// Arguments: abi::PingPongArgs.
#include "hal/eth.h"
#include "hal/wait.h"
#include "kernels/kernel.h"
#include "weft/abi/platform_kernels.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::PingPongArgs>();
    const uint32_t port = args.port, n = args.iterations;
    const bool initiator = args.initiator != 0;
    const uint64_t local = args.local_flag, remote = args.remote_flag;
    const volatile uint32_t* flag = reinterpret_cast<const volatile uint32_t*>(local);
    // Waiting for the echo also watches the port: a dead link faults, not hangs.
    auto echo = [&](uint32_t i) {
        wait_active([&] { return eth::check(port) && *flag == i; }, abi::kWaitSemaphore, local, i);
    };
    for (uint32_t i = 1; i <= n; ++i) {
        if (initiator) {
            eth::send_word(port, remote, i);
            echo(i);
        } else {
            echo(i);
            eth::send_word(port, remote, i);
        }
        mailbox::set_progress(i);
    }
    eth::wait_tx_idle(port);
    return 0;
}
