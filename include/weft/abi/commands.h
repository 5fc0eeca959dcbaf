// Command descriptors of the devices weft-bridge emulates (docs/architecture.md, "Emulated devices").
// Plain data shared by firmware and host: every field has a fixed size and offset.
#pragma once
#include <stdint.h>

namespace weft::abi {

// ---- NoC DMA (one ring per hart) --------------------------------------------
enum NocOp : uint16_t {
    kNocWrite = 1,        // copy len bytes src -> dst
    kNocRead = 2,         // same copy, accounted as a read issued by this core
    kNocSemInc = 3,       // *(u32*)dst += value
    kNocWriteInc = 4,     // copy src -> dst, then *(u32*)sem += value
    kNocInlineWrite = 5,  // *(u32*)dst = value
    kNocMulticast = 6,    // copy src -> (l1_base(core) + dst) for every core in core_mask
    kNocSemSet = 7,       // *(u32*)dst = value, ordered with the ring
};

struct NocCommand {
    uint16_t op;
    uint16_t flags;
    uint32_t len;
    uint64_t src;
    uint64_t dst;
    uint64_t sem;
    uint32_t value;
    uint32_t core_mask;
    uint64_t reserved[3];
};
static_assert(sizeof(NocCommand) == 64, "NocCommand layout");

// ---- Ethernet (one TX ring per port) ----------------------------------------
enum EthOp : uint16_t {
    kEthSendBytes = 1,  // local src -> peer chip dst, len bytes
    kEthSendWord = 2,   // *(u32*)peer dst = value, ordered after earlier sends
};

struct EthCommand {
    uint16_t op;
    uint16_t flags;
    uint32_t len;
    uint64_t src;
    uint64_t dst;
    uint32_t value;
    uint32_t pad;
    uint64_t reserved[4];
};
static_assert(sizeof(EthCommand) == 64, "EthCommand layout");

// ---- Math engine (one ring per worker hart) ---------------------------------
enum MathOp : uint16_t {
    kMathSum = 1,
    kMathMax = 2,
    kMathMin = 3,
    kMathProd = 4,
    // Not arithmetic: add `count` to the semaphore at `dst` once every earlier
    // command of the ring is done (a core hands back a buffer the engine has
    // finished reading without waiting for it).
    kMathSemInc = 16,
};
enum DataType : uint16_t { kF32 = 1, kBF16 = 2, kF16 = 3, kI32 = 4 };

struct MathCommand {
    uint16_t op;
    uint16_t dtype;
    uint32_t count;  // elements
    uint64_t src0;
    uint64_t src1;
    uint64_t dst;  // dst[i] = src0[i] op src1[i]
    uint64_t reserved[4];
};
static_assert(sizeof(MathCommand) == 64, "MathCommand layout");

inline constexpr uint32_t dtype_size(uint16_t dtype) {
    return dtype == kF32 || dtype == kI32 ? 4 : (dtype == kBF16 || dtype == kF16 ? 2 : 0);
}

}  // namespace weft::abi
