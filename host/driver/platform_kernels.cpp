#include "driver/platform_kernels.h"

#include "driver/kernel_args.h"
#include "weft/abi/platform_kernels.h"

namespace weft::kernels {

Launch eth_send(const BoardInfo& board, uint32_t chip, uint32_t core, uint32_t port, uint64_t src, uint64_t dst,
                uint32_t len, uint32_t packet, uint32_t repeat, uint64_t flag, uint32_t flag_value) {
    abi::EthSendArgs a{};
    a.src = src;
    a.dst = dst;
    a.flag = flag;
    a.port = port;
    a.len = len;
    a.packet = packet;
    a.repeat = repeat;
    a.flag_value = flag_value;
    return {chip, core, &kernel_named(board, "eth_send"), KernelArgWords::of(a)};
}

Launch recv_check(const BoardInfo& board, uint32_t chip, uint32_t core, uint64_t sem, uint32_t value, uint64_t buf,
                  uint32_t check_len, uint32_t seed) {
    abi::RecvCheckArgs a{};
    a.sem = sem;
    a.buf = buf;
    a.value = value;
    a.check_len = check_len;
    a.seed = seed;
    return {chip, core, &kernel_named(board, "recv_check"), KernelArgWords::of(a)};
}

Launch ping_pong(const BoardInfo& board, uint32_t chip, uint32_t core, uint32_t port, bool initiator, uint32_t n,
                 uint64_t local_flag, uint64_t remote_flag) {
    abi::PingPongArgs a{};
    a.local_flag = local_flag;
    a.remote_flag = remote_flag;
    a.port = port;
    a.initiator = initiator ? 1 : 0;
    a.iterations = n;
    return {chip, core, &kernel_named(board, "ping_pong"), KernelArgWords::of(a)};
}

}  // namespace weft::kernels
