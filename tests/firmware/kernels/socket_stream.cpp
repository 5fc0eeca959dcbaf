// One end of a fabric socket: streams `bytes` from its buffer to the peer
// (sender) or from the peer into its buffer (receiver), `piece` bytes a call.
// Arguments: test_abi::SocketStreamArgs.
#include "fabric/socket.h"
#include "kernels/kernel.h"
#include "test_kernel_args.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<test_abi::SocketStreamArgs>();
    if (args.piece == 0) mailbox::panic(abi::kPanicBadArgs, 0);
    fabric::Socket socket(args.end);
    for (uint64_t done = 0; done < args.bytes; done += args.piece) {
        const uint64_t n = args.bytes - done < args.piece ? args.bytes - done : args.piece;
        mailbox::set_progress(static_cast<uint32_t>(done >> 10));
        if (args.sender) socket.send(args.buffer + done, n);
        else
            socket.recv(args.buffer + done, n);
    }
    socket.close();
    return 0;
}
