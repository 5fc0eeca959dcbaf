// How firmware reports a failure it detected itself (as opposed to a trap the
// hardware raised): it posts FAULT with mcause = kPanicCause, the panic code as
// the return code and a code-specific detail word in mtval.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint64_t kPanicCause = 24;  // first of RISC-V's "custom use" causes
// a2 at the ebreak of a panic, so the trap handler tells it from a breakpoint.
inline constexpr uint64_t kPanicMagic = 0x70616e6963ull;  // "panic"

enum PanicCode : int32_t {
    kPanicRingError = 1,   // detail: ring kind << 56 | ring index << 48 | RingError << 32 | command index
    kPanicAssert = 2,      // detail: line number
    kPanicBadArgs = 3,     // detail: index of the offending argument
    kPanicDeadline = 4,    // detail: address waited on
    kPanicEdmTimeout = 5,  // detail: port << 48 | channel id << 32 | µs without progress
    kPanicStopped = 6,     // the host asked the kernel to stop (HostArea::stop); detail: its launch seq
};

enum RingKind : uint32_t { kRingNoc = 1, kRingEth = 2, kRingMath = 3 };

inline constexpr uint64_t ring_error_detail(uint32_t kind, uint32_t ring, uint32_t error, uint32_t index) {
    return (uint64_t(kind) << 56) | (uint64_t(ring & 0xff) << 48) | (uint64_t(error & 0xffff) << 32) | index;
}

}  // namespace weft::abi
