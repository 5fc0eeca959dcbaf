// The chip control block: the one structure through which the host driver,
// weft-bridge and a chip's firmware talk. It sits at the address the board's
// devicetree gives for "weft,control-block". Every word has one writer, named
// in the comment of the part that holds it.
#pragma once
#include <stdint.h>
#include "weft/abi/commands.h"
#include "weft/abi/ring.h"

namespace weft::abi {

inline constexpr uint32_t kControlMagic = 0x54464557;  // "WEFT"
inline constexpr uint32_t kAbiVersion = 3;
inline constexpr uint32_t kMaxCores = 16;
inline constexpr uint32_t kMaxPorts = 8;

inline constexpr uint32_t kNocSlots = 64;
inline constexpr uint32_t kEthSlots = 64;
inline constexpr uint32_t kMathSlots = 16;
inline constexpr uint32_t kEventSlots = 64;

using NocRing = CommandRing<NocCommand, kNocSlots>;
using EthRing = CommandRing<EthCommand, kEthSlots>;
using MathRing = CommandRing<MathCommand, kMathSlots>;

// ---- launch mailbox ---------------------------------------------------------
enum HartState : uint32_t {
    kHartOff = 0,      // never booted (or not present on this board)
    kHartReady = 1,    // waiting for LAUNCH
    kHartRunning = 2,  // running a kernel
    kHartDone = 3,     // last kernel returned; result below
    kHartFault = 4,    // last kernel trapped; cause below
};

enum LaunchFlags : uint32_t {
    kLaunchNewCode = 1u << 0,  // code at [code_base, +code_size) was (re)written: drop stale translations
};

// Written by the host only. The host fills every field, fences, then bumps seq.
struct LaunchRequest {
    volatile uint32_t seq;
    uint32_t flags;
    uint64_t entry;      // absolute address of the kernel's entry
    uint64_t args;       // address of the runtime argument words (a0)
    uint64_t arg_count;  // number of 32-bit argument words (a1)
    uint64_t code_base;
    uint64_t code_size;
    uint64_t reserved[2];
};
static_assert(sizeof(LaunchRequest) == 64, "LaunchRequest layout");

// What a hart is blocked on, posted by the hart before it sleeps so that a hang
// report can name the exact wait.
enum WaitKind : uint32_t {
    kWaitNone = 0,
    kWaitLaunch = 1,     // idle in the boot firmware
    kWaitSemaphore = 2,  // wait_addr: semaphore, wait_value: value awaited
    kWaitNocRing = 3,    // NoC ring full or barrier
    kWaitEthRing = 4,    // wait_addr: port
    kWaitMathRing = 5,
    kWaitWord = 6,       // generic memory word, wait_value: value awaited
    // From here on a kind belongs to a transport or a resident image, whose
    // host side registers the decoder of its waits (host/driver/wait_decoders.h).
    kWaitFirstOwned = 7,
    kWaitEdm = 7,        // an EDM with nothing to move; wait_addr: its abi::EdmConfig
};

// Written by the hart only.
struct HartStatus {
    volatile uint32_t state;      // HartState
    volatile uint32_t done_seq;   // seq of the last launch that ended (DONE or FAULT)
    volatile int32_t return_code;
    volatile uint32_t boot_count;
    volatile uint64_t cycles;     // mcycle spent in the last kernel
    volatile uint64_t ticks;      // mtime ticks spent in the last kernel
    volatile uint64_t mcause;
    volatile uint64_t mepc;
    volatile uint64_t mtval;
    volatile uint32_t wait_kind;  // WaitKind
    volatile uint32_t wait_value;
    volatile uint64_t wait_addr;
    volatile uint64_t heartbeat;  // mtime at the hart's last wake-up
    volatile uint64_t progress;   // free for kernels: a step counter shown in hang reports
    volatile uint32_t running_seq;  // seq of the launch being run
    // Odd while the hart sleeps waiting for a device: weft-bridge then rings
    // the chip's doorbell when a device command touches the chip (wake.h).
    volatile uint32_t doorbell;
    volatile uint64_t alarm;      // the hart's mtimecmp as last written (saves an MMIO read)
    volatile uint32_t notified;   // the bridge's `sleeping` epoch this hart last woke it from
    uint32_t pad2;
    uint64_t reserved[2];
};
static_assert(sizeof(HartStatus) == 128, "HartStatus layout");

// HartStatus::doorbell: odd while armed, a new number for every sleep so the
// bridge rings once per sleep.
inline constexpr bool doorbell_armed(uint32_t bell) { return bell & 1; }
inline constexpr uint32_t doorbell_arm(uint32_t bell) { return bell + (doorbell_armed(bell) ? 2 : 1); }
inline constexpr uint32_t doorbell_disarm(uint32_t bell) { return bell + (doorbell_armed(bell) ? 1 : 0); }

// ---- link state (written by weft-bridge only) -------------------------------
enum LinkState : uint32_t { kLinkUnwired = 0, kLinkUp = 1, kLinkDown = 2 };

struct PortState {
    volatile uint32_t state;  // LinkState
    volatile uint32_t peer_chip;
    volatile uint32_t peer_port;
    uint32_t pad;
};
static_assert(sizeof(PortState) == 16, "PortState layout");

// ---- status mailbox: firmware posts events for the host ---------------------
// (seed 002, "Fabric Node Status Mailbox"). Posted with firmware/hal/status_events.h,
// drained by weft-bridge into the run directory's events.log.
enum StatusEventKind : uint32_t {
    kEventLinkDown = 1,      // port: the port whose link is down
    kEventDroppedPacket = 2,  // port, channel: where; detail: what was dropped
    kEventTimeout = 3,        // port, channel: what made no progress; detail: µs waited
    kEventRoutingError = 4,   // detail: the offending destination
};

struct StatusEvent {
    uint32_t kind;     // StatusEventKind
    uint32_t core;     // the hart that posted it
    uint32_t port;
    uint32_t channel;
    uint64_t time;     // mtime ticks at the post
    uint64_t detail;
};
static_assert(sizeof(StatusEvent) == 32, "StatusEvent layout");

// One ring per chip, several harts posting: a post takes `lock` (a guest
// amoswap among the harts only; the host never touches it), writes its slot,
// fences, bumps `tail`, and lets go. So tail, dropped and the slots keep one
// writer at a time, and the host, writing only `head`, needs no atomics
// against the guest. A full ring drops the new event and counts it.
struct EventRing {
    volatile uint32_t tail;     // offset 0: harts, under lock
    volatile uint32_t lock;     // offset 4: harts (guest atomics among themselves)
    volatile uint32_t dropped;  // offset 8: harts, under lock: events lost to a full ring
    uint32_t pad0[13];
    volatile uint32_t head;     // offset 64: written by the host
    uint32_t pad1[15];
    StatusEvent slots[kEventSlots];  // offset 128
};
static_assert(sizeof(EventRing) == 128 + 32 * kEventSlots, "EventRing layout");

// ---- written by weft-bridge only ---------------------------------------------
enum ChipLife : uint32_t { kChipStarting = 0, kChipAlive = 1, kChipDead = 2 };

struct BridgeArea {
    volatile uint32_t life;         // ChipLife
    volatile int32_t exit_status;   // QEMU's wait status once dead
    volatile uint64_t heartbeat;    // bumped by the bridge about every 100 ms
    // Non-zero while the bridge's engine sleeps (a new number each time): a
    // core that queues a command then writes a byte to its UART to wake it,
    // once per number (wake::notify_devices).
    volatile uint32_t sleeping;
    uint32_t pad[11];
};
static_assert(sizeof(BridgeArea) == 64, "BridgeArea layout");

// ---- written by the chip's harts, with guest atomics ------------------------
struct GuestShared {
    volatile uint32_t console_lock;
    uint32_t pad[15];
};

// What a core holds, written by whichever host process loaded it, so every
// process (and every hang report) can name it.
struct CoreImage {
    char name[32];              // kernel or resident image, NUL-terminated
    uint64_t content_hash;      // of the relocated code at the core's L1 base; 0: unknown
    // A resident image (started once, running until stopped) keeps the L1
    // [resident_l1_base, +resident_l1_size) and is stopped through its
    // abi::ResidentControl (resident.h) at resident_control. 0: a per-op kernel.
    uint64_t resident_l1_base;
    uint64_t resident_l1_size;
    uint64_t resident_control;
};
static_assert(sizeof(CoreImage) == 64, "CoreImage layout");

// ---- host-written chip identity and policy ----------------------------------
struct HostArea {
    volatile uint32_t magic;         // kControlMagic once the bridge set the chip up
    volatile uint32_t abi_version;
    volatile uint32_t chip_id;
    volatile uint32_t num_chips;
    volatile uint32_t idle_wake_us;    // sleep between launch-mailbox polls when idle
    volatile uint32_t active_wake_us;  // fallback alarm while a kernel sleeps on its doorbell
    uint32_t pad[10];
    LaunchRequest launch[kMaxCores];
    // Bumped by the host to wake core c (the bridge rings its doorbell once
    // per new value): how a host request reaches a sleeping resident image.
    volatile uint32_t ring[kMaxCores];
    // Set to a launch's seq (then rung) to stop that launch's kernel: it
    // leaves at its next wait as if it had panicked (kPanicStopped), and the
    // boot firmware clears its rings for the next launch. A stale value never
    // matches a later launch.
    volatile uint32_t stop[kMaxCores];
    CoreImage image[kMaxCores];
};

struct ChipControlBlock {
    HostArea host;                    // host driver / bridge
    HartStatus hart[kMaxCores];       // each hart its own
    BridgeArea bridge;                // bridge
    PortState port[kMaxPorts];        // bridge
    GuestShared guest;                // harts (atomics among themselves only)
    EventRing events;                 // firmware -> host
    NocRing noc[kMaxCores];           // producer: hart i
    MathRing math[kMaxCores];         // producer: hart i
    EthRing eth[kMaxPorts];           // producer: the ERISC of port p
};

static_assert(sizeof(ChipControlBlock) <= 256 * 1024, "control block outgrew its window");

}  // namespace weft::abi
