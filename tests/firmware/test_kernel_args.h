// Arguments of the test-only kernels (tests/firmware/kernels), shared by the
// kernels and the system tests that launch them (tests/system/test_kernels.h).
#pragma once
#include <stdint.h>

#include "weft/abi/channel.h"
#include "weft/abi/fabric_router.h"
#include "weft/abi/kernel_args.h"

namespace weft::test_abi {

// fault: kind 0 load from unmapped memory, 1 illegal instruction, 2 NoC
// command outside the chip.
struct FaultArgs {
    uint32_t kind;
};
static_assert(sizeof(FaultArgs) == 4 && abi::kIsKernelArgs<FaultArgs>, "FaultArgs layout");

// wait_sem: wait for *sem == value.
struct WaitSemArgs {
    uint64_t sem;
    uint32_t value;
    uint32_t pad;
};
static_assert(sizeof(WaitSemArgs) == 16 && abi::kIsKernelArgs<WaitSemArgs>, "WaitSemArgs layout");

// noc_math: write+inc src->dst, inc sem by 2, multicast src to mcast_l1_offset
// of the cores in mcast_mask, then out = a op b over count elements; waits
// for sem == 3.
struct NocMathArgs {
    uint64_t src, dst;
    uint64_t sem;
    uint64_t mcast_l1_offset;
    uint64_t a, b, out;
    uint32_t len;
    uint32_t mcast_mask;
    uint32_t op, dtype;  // abi::MathOp, abi::DataType
    uint32_t count;
    uint32_t pad;
};
static_assert(sizeof(NocMathArgs) == 80 && abi::kIsKernelArgs<NocMathArgs>, "NocMathArgs layout");

// fabric_traffic is a product kernel now (firmware/kernels, weft replay):
// its arguments are abi's.
using FabricTrafficJob = abi::FabricTrafficJob;
using FabricTrafficArgs = abi::FabricTrafficArgs;
inline constexpr uint32_t kFabricTrafficMaxJobs = abi::kFabricTrafficMaxJobs;

// fabric_ping: `count` round trips of one atomic increment through the
// fabric: the initiator bumps the peer's word and waits for its own to come
// back; the responder waits for its word and bumps the initiator's.
struct FabricPingArgs {
    uint64_t connection;  // abi::FabricWorkerConnection toward the peer
    uint64_t remote;      // the peer's word
    uint64_t local;       // ours
    uint32_t count;
    uint32_t initiator;
    uint16_t peer_chip;
    uint8_t hops;
    uint8_t pad0;
    uint32_t route;  // 2D: the directions after the first cable
};
static_assert(sizeof(FabricPingArgs) == 40 && abi::kIsKernelArgs<FabricPingArgs>, "FabricPingArgs layout");

// socket_stream: one end of a fabric socket moving `bytes` from (or into)
// `buffer`, in send or receive calls of `piece` bytes (any size: the
// socket's messages are its own).
struct SocketStreamArgs {
    abi::ChannelRef end;
    uint64_t buffer;
    uint64_t bytes;
    uint64_t piece;
    uint32_t sender;  // 1: this end sends
    uint32_t pad;
};
static_assert(sizeof(SocketStreamArgs) == 48 && abi::kIsKernelArgs<SocketStreamArgs>, "SocketStreamArgs layout");

}  // namespace weft::test_abi
