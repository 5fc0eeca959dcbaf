// Launch builders for the platform's kernels in firmware/kernels, built for
// `board`; their arguments are the structs of weft/abi/platform_kernels.h.
#pragma once
#include <stdint.h>

#include "driver/cluster.h"

namespace weft::kernels {

// eth_send: `repeat` times, send [src, +len) to the peer's dst in packets, then
// write flag_value at the peer's flag (flag 0: none). Returns -1 if the link is down.
Launch eth_send(const BoardInfo& board, uint32_t chip, uint32_t core, uint32_t port, uint64_t src, uint64_t dst,
                uint32_t len, uint32_t packet, uint32_t repeat, uint64_t flag, uint32_t flag_value);
// recv_check: wait for *sem == value, then count words of [buf, +check_len) that differ from
// pattern(seed). check_len 0: only wait (the host checks).
Launch recv_check(const BoardInfo& board, uint32_t chip, uint32_t core, uint64_t sem, uint32_t value, uint64_t buf,
                  uint32_t check_len, uint32_t seed);
// ping_pong: n one-word round trips over `port`; the initiator writes first.
Launch ping_pong(const BoardInfo& board, uint32_t chip, uint32_t core, uint32_t port, bool initiator, uint32_t n,
                 uint64_t local_flag, uint64_t remote_flag);

}  // namespace weft::kernels
