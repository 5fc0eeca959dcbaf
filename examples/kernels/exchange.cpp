// The first kernel: swap a buffer with the chip at the other end of a cable
// and check what arrived. Returns the number of wrong words (0: success).
// Arguments: example::ExchangeArgs (examples/exchange.h).
#include "exchange.h"
#include <inttypes.h>  // PRIu32: uint32_t is unsigned long on RV32, unsigned int on RV64
#include "hal/eth.h"
#include "hal/wait.h"
#include "kernels/kernel.h"
#include "rt/console.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<example::ExchangeArgs>();
    // Filling the buffer is the kernel's own work (a few words); the bulk
    // copy across the cable is the Ethernet engine's, never a guest loop.
    example::fill(reinterpret_cast<uint32_t*>(args.local_buffer), args.words, args.chip);
    eth::send_bytes(args.port, args.local_buffer, args.remote_inbox, args.words * 4);
    // A port's commands land in order: the flag arrives after the buffer.
    eth::send_word(args.port, args.remote_flag, 1);
    volatile uint32_t* flag = reinterpret_cast<volatile uint32_t*>(args.local_flag);
    wait_active([&] { return eth::check(args.port) && *flag == 1; }, abi::kWaitSemaphore, args.local_flag, 1);
    // The peer sets it once per run: cleared, the next run (weft launch again,
    // same buffers) waits for its own peer instead of passing at once.
    *flag = 0;
    eth::wait_tx_idle(args.port);
    const uint32_t wrong =
        example::mismatches(reinterpret_cast<const uint32_t*>(args.local_inbox), args.words, args.peer);
    console::printf("exchange: chip %" PRIu32 " got %" PRIu32 " words from chip %" PRIu32 ", %" PRIu32 " wrong\n",
                    args.chip, args.words, args.peer, wrong);
    return static_cast<int>(wrong);
}

WEFT_KERNEL_ARG_NAMES(example::ExchangeArgs,
                      "local_buffer:u64 local_inbox:u64 remote_inbox:u64 local_flag:u64 remote_flag:u64 port:u32 "
                      "words:u32 chip:u32 peer:u32");
