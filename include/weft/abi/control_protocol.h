// The control protocol between the host and a chip's firmware, the same on
// every chip: launch mailboxes, hart status, status events, core images. It
// opens the chip's control block, at the address the board's devicetree gives
// for "control-block"; a chip's own devices may follow it (the emulated ones:
// emulated_devices.h, both together: control_block.h). Every word has one
// writer, named in the comment of the part that holds it.
#pragma once
#include <stdint.h>

namespace weft::abi {

inline constexpr uint32_t kControlMagic = 0x54464557;  // "WEFT"
inline constexpr uint32_t kAbiVersion = 8;             // 8: a torus's escape VC
inline constexpr uint32_t kMaxCores = 16;
inline constexpr uint32_t kMaxPorts = 8;
inline constexpr uint32_t kEventSlots = 64;

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
    kWaitWord = 6,  // generic memory word, wait_value: value awaited
    // From here on a kind belongs to a transport or a resident image, whose
    // host side registers the decoder of its waits (host/driver/wait_decoders.h).
    kWaitFirstOwned = 7,
    kWaitEdm = 7,           // an EDM with nothing to move; wait_addr: its abi::EdmConfig
    kWaitFabricRouter = 8,  // a fabric router with nothing to move; wait_addr: its abi::FabricRouterConfig
};

// wait_value of an owned kind (an EDM, a router): ring this sleep only for
// what other cores or the peer chip write into the core's own L1 (and for its
// cables going down or up), not for its own NoC or Ethernet commands
// finishing nor for writes elsewhere (DRAM). An image sets it while nothing
// it holds waits on its own commands, and only if every word it watches is in
// its L1: every other ring would find nothing to do, and under emulation each
// costs the host a QEMU wake-up.
inline constexpr uint32_t kWaitOthersOnly = 1u << 31;

// Written by the hart only.
struct HartStatus {
    volatile uint32_t state;     // HartState
    volatile uint32_t done_seq;  // seq of the last launch that ended (DONE or FAULT)
    volatile int32_t return_code;
    volatile uint32_t boot_count;
    volatile uint64_t cycles;  // mcycle spent in the last kernel
    volatile uint64_t ticks;   // mtime ticks spent in the last kernel
    volatile uint64_t mcause;
    volatile uint64_t mepc;
    volatile uint64_t mtval;
    volatile uint32_t wait_kind;  // WaitKind
    volatile uint32_t wait_value;
    volatile uint64_t wait_addr;
    volatile uint64_t heartbeat;    // mtime at the hart's last wake-up
    volatile uint64_t progress;     // free for kernels: a step counter shown in hang reports
    volatile uint32_t running_seq;  // seq of the launch being run
    uint32_t pad1;
    volatile uint64_t alarm;  // the hart's timer comparator as last written (saves a device read)
    uint32_t pad2[2];
    volatile uint64_t ra;  // at a fault: the return address register (a panic's caller)
    uint64_t reserved;
};
static_assert(sizeof(HartStatus) == 128, "HartStatus layout");

// ---- status mailbox: firmware posts events for the host ---------------------
// (the TT-Fabric architecture spec, "Fabric Node Status Mailbox"). Posted with firmware/hal/status_events.h,
// drained by weft-bridge into the run directory's events.log.
enum StatusEventKind : uint32_t {
    kEventLinkDown = 1,       // port: the port whose link is down
    kEventDroppedPacket = 2,  // port, channel: where; detail: what was dropped
    kEventTimeout = 3,        // port, channel: what made no progress; detail: µs waited
    kEventRoutingError = 4,   // detail: the offending destination
    kEventRerouted = 5,       // port: whose cable died; channel: the fallback port; detail: packets sent again
    kEventRejoined = 6,       // port: whose cable came back; channel: the fallback port it left; detail: 0
};

struct StatusEvent {
    uint32_t kind;  // StatusEventKind
    uint32_t core;  // the hart that posted it
    uint32_t port;
    uint32_t channel;
    uint64_t time;  // mtime ticks at the post
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
    volatile uint32_t head;  // offset 64: written by the host
    uint32_t pad1[15];
    StatusEvent slots[kEventSlots];  // offset 128
};
static_assert(sizeof(EventRing) == 128 + 32 * kEventSlots, "EventRing layout");

// ---- written by the chip's harts, with guest atomics ------------------------
struct GuestShared {
    volatile uint32_t console_lock;
    uint32_t pad[15];
};
static_assert(sizeof(GuestShared) == 64, "GuestShared layout");

// What a core holds, written by whichever host process loaded it, so every
// process (and every hang report) can name it.
struct CoreImage {
    char name[32];          // kernel or resident image, NUL-terminated
    uint64_t content_hash;  // of the relocated code at the core's L1 base; 0: unknown
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
    volatile uint32_t magic;  // kControlMagic once the bridge set the chip up
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
    // boot firmware recovers its devices for the next launch. A stale value
    // never matches a later launch.
    volatile uint32_t stop[kMaxCores];
    CoreImage image[kMaxCores];
};
static_assert(sizeof(HostArea) == 64 + 64 * kMaxCores + 2 * 4 * kMaxCores + 64 * kMaxCores, "HostArea layout");

struct ControlProtocol {
    HostArea host;               // host driver / bridge
    HartStatus hart[kMaxCores];  // each hart its own
    GuestShared guest;           // harts (atomics among themselves only)
    EventRing events;            // firmware -> host
};
// What follows starts on a fresh 64-byte line.
static_assert(sizeof(ControlProtocol) == 6528 && sizeof(ControlProtocol) % 64 == 0, "ControlProtocol layout");

}  // namespace weft::abi
