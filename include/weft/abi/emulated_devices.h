// The devices weft-bridge emulates for a chip (chips/qemu-virt): command
// rings of the NoC DMA, Ethernet and math engines, each port's link state,
// the doorbell words with which a core sleeps until a device acted, and the
// bridge's own area. The chip's HAL backend and the bridge share them; in the
// chip's control block they follow the generic protocol (control_block.h).
// Every word has one writer, named in the comment of the part that holds it.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "weft/abi/commands.h"
#include "weft/abi/control_protocol.h"
#include "weft/abi/ring.h"

namespace weft::abi {

inline constexpr uint32_t kNocSlots = 64;
inline constexpr uint32_t kEthSlots = 64;
inline constexpr uint32_t kMathSlots = 16;

using NocRing = CommandRing<NocCommand, kNocSlots>;
using EthRing = CommandRing<EthCommand, kEthSlots>;
using MathRing = CommandRing<MathCommand, kMathSlots>;

// ---- doorbells (firmware/hal/wake.h), written by hart c only -------------------
struct HartDoorbell {
    // Odd while the hart sleeps waiting for a device: weft-bridge then rings
    // the chip's doorbell when a device command touches the chip. A new
    // number for every sleep, so the bridge rings once per sleep.
    volatile uint32_t seq;
    volatile uint32_t notified;  // the bridge's `sleeping` epoch this hart last woke it from
};
static_assert(sizeof(HartDoorbell) == 8, "HartDoorbell layout");

inline constexpr bool doorbell_armed(uint32_t bell) { return bell & 1; }
inline constexpr uint32_t doorbell_arm(uint32_t bell) { return bell + (doorbell_armed(bell) ? 2 : 1); }
inline constexpr uint32_t doorbell_disarm(uint32_t bell) { return bell + (doorbell_armed(bell) ? 1 : 0); }

// ---- the doorbell's mask ------------------------------------------------------
// Which cores a ring of the chip's doorbell is for. The doorbell itself, a
// byte the bridge sends to the chip's UART, only raises the interrupt; the
// core that takes it wakes every core whose count moved since the last take.
// A count per core, not a mask word, so that the host and the harts never
// write the same word (guest atomics are not atomic against the host).
struct DoorbellMask {
    volatile uint32_t rung[kMaxCores];   // bridge: rings for core c so far
    volatile uint32_t taken[kMaxCores];  // harts, whichever takes the doorbell: rung[c] as last taken
};
static_assert(sizeof(DoorbellMask) == 8 * kMaxCores, "DoorbellMask layout");
static_assert(kMaxCores <= 32, "a set of cores is a 32-bit mask");

// The byte that rings the doorbell; its value carries nothing (ASCII BEL).
inline constexpr uint8_t kDoorbellByte = 0x07;

// Bridge, before it sends kDoorbellByte: records a ring for each core of
// `cores` (bit c: core c).
inline void doorbell_post(DoorbellMask& m, uint32_t cores) {
    for (uint32_t c = 0; c < kMaxCores; ++c)
        if (cores >> c & 1) m.rung[c] = m.rung[c] + 1;
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

// The core that took the doorbell byte: the cores among the first
// `num_cores` rung since the last take (bit c: core c), now taken. Two harts
// taking at once may both report a core: one spare wake-up, never a lost one.
inline uint32_t doorbell_take(DoorbellMask& m, uint32_t num_cores) {
    uint32_t cores = 0;
    for (uint32_t c = 0; c < num_cores && c < kMaxCores; ++c) {
        const uint32_t rung = m.rung[c];
        if (__atomic_exchange_n(const_cast<uint32_t*>(&m.taken[c]), rung, __ATOMIC_RELAXED) != rung) cores |= 1u << c;
    }
    return cores;
}

// ---- link state (written by weft-bridge only) -------------------------------
enum LinkState : uint32_t { kLinkUnwired = 0, kLinkUp = 1, kLinkDown = 2 };

struct PortState {
    volatile uint32_t state;  // LinkState
    volatile uint32_t peer_chip;
    volatile uint32_t peer_port;
    uint32_t pad;
};
static_assert(sizeof(PortState) == 16, "PortState layout");

// ---- the bridge's own area (written by weft-bridge only) --------------------
enum ChipLife : uint32_t { kChipStarting = 0, kChipAlive = 1, kChipDead = 2 };

struct BridgeArea {
    volatile uint32_t life;        // ChipLife
    volatile int32_t exit_status;  // QEMU's wait status once dead
    volatile uint64_t heartbeat;   // bumped by the bridge about every 100 ms
    // Non-zero while the bridge's engine sleeps (a new number each time): a
    // core that queues a command then writes a byte to its UART to wake it,
    // once per number (wake::notify_devices).
    volatile uint32_t sleeping;
    uint32_t pad[11];
};
static_assert(sizeof(BridgeArea) == 64, "BridgeArea layout");

struct EmulatedDevices {
    BridgeArea bridge;                 // bridge
    PortState port[kMaxPorts];         // bridge
    HartDoorbell doorbell[kMaxCores];  // hart c its own
    DoorbellMask bells;                // bridge / the hart that takes the doorbell
    NocRing noc[kMaxCores];            // producer: hart i
    MathRing math[kMaxCores];          // producer: hart i
    EthRing eth[kMaxPorts];            // producer: the ERISC of port p
};
static_assert(sizeof(EmulatedDevices) == sizeof(BridgeArea) + sizeof(PortState) * kMaxPorts +
                                             sizeof(HartDoorbell) * kMaxCores + sizeof(DoorbellMask) +
                                             sizeof(NocRing) * kMaxCores + sizeof(MathRing) * kMaxCores +
                                             sizeof(EthRing) * kMaxPorts,
              "EmulatedDevices layout");
// Producer and consumer halves of a ring on lines of their own.
static_assert(offsetof(EmulatedDevices, noc) % 64 == 0 && sizeof(NocRing) % 64 == 0 && sizeof(MathRing) % 64 == 0,
              "rings start on 64-byte lines");

}  // namespace weft::abi
