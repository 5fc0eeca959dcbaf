// Arguments of the platform's own kernels (firmware/kernels): the link test,
// the link benches and the first checks of a new board use them.
#pragma once
#include <stdint.h>

#include "weft/abi/kernel_args.h"

namespace weft::abi {

// eth_send: `repeat` times, send [src, +len) to the peer's dst in packets of
// `packet` bytes, then write flag_value at the peer's flag (flag 0: none).
struct EthSendArgs {
    uint64_t src;
    uint64_t dst;
    uint64_t flag;
    uint32_t port;
    uint32_t len;
    uint32_t packet;
    uint32_t repeat;
    uint32_t flag_value;
    uint32_t pad;
};
static_assert(sizeof(EthSendArgs) == 48 && kIsKernelArgs<EthSendArgs>, "EthSendArgs layout");

// recv_check: wait for *sem == value, then count the words of [buf, +check_len)
// that differ from pattern(seed) (pattern.h).
struct RecvCheckArgs {
    uint64_t sem;
    uint64_t buf;
    uint32_t value;
    uint32_t check_len;
    uint32_t seed;
    uint32_t pad;
};
static_assert(sizeof(RecvCheckArgs) == 32 && kIsKernelArgs<RecvCheckArgs>, "RecvCheckArgs layout");

// ping_pong: `iterations` one-word round trips over `port`; the initiator writes first.
struct PingPongArgs {
    uint64_t local_flag;
    uint64_t remote_flag;
    uint32_t port;
    uint32_t initiator;
    uint32_t iterations;
    uint32_t pad;
};
static_assert(sizeof(PingPongArgs) == 32 && kIsKernelArgs<PingPongArgs>, "PingPongArgs layout");

}  // namespace weft::abi
