// The hardware blocks weft-bridge emulates for each chip (docs/architecture.md, "Emulated devices").
// They execute what firmware queues and nothing more: no protocol lives here.
#pragma once
#include <stdint.h>

#include <atomic>

#include "devices/chip_memory.h"
#include "driver/board.h"
#include "weft/abi/control_block.h"

namespace weft {

struct DeviceCounters {
    std::atomic<uint64_t> noc_commands{0}, noc_bytes{0};
    std::atomic<uint64_t> math_commands{0}, math_elements{0};
    std::atomic<uint64_t> doorbell_rings{0};  // each wakes the chip's QEMU: its cost per op shows here
};

// Which cores a pass of the devices touched: whose L1 they wrote into. A core
// asleep on its own device work is rung only when this names it
// (devices/doorbell.h); a write outside every core's L1 (DRAM, the control
// block) names every core, since any of them may wait on it.
struct CoreTouches {
    const BoardInfo* board = nullptr;
    const ChipMemory* memory = nullptr;  // a host chip's: its host addresses mapped back to the board's
    uint32_t cores = 0;
    uint32_t l1 = 0;  // of those, the cores whose own L1 was written
    void write(uint64_t addr, uint64_t len) {
        if (memory) addr = memory->board_address(addr);
        for (uint32_t c = 0; c < board->cores.size(); ++c)
            if (board->cores[c].l1.contains(addr, len)) {
                cores |= 1u << c;
                l1 |= 1u << c;
                return;
            }
        cores = ~0u;
    }
};

// What the devices changed on one chip in a pass: the cores whose L1 they
// wrote or whose NoC/math rings they advanced, and the Ethernet ports whose
// command rings they advanced.
struct Touched {
    uint32_t cores = 0;
    uint32_t ports = 0;
    uint32_t others = 0;  // of `cores`: whose L1 another core's commands or landing frames wrote
    bool any() const { return cores | ports; }
    static Touched everything() { return {~0u, ~0u, ~0u}; }
    Touched& operator|=(const Touched& o) {
        cores |= o.cores;
        ports |= o.ports;
        others |= o.others;
        return *this;
    }
};

// Consumer side of a command ring: executes up to `budget` commands in order.
// exec returns abi::kRingOk or the RingError that stops the ring (sticky, so
// the producer sees it and reports instead of waiting forever).
template <typename Ring, typename Exec>
uint32_t consume_ring(Ring& ring, uint32_t budget, Exec exec) {
    const uint32_t reset = __atomic_load_n(const_cast<uint32_t*>(&ring.reset_seq), __ATOMIC_ACQUIRE);
    if (reset != ring.reset_ack) {
        // The producer gave up on what is queued: drop it and start clean.
        ring.head = __atomic_load_n(const_cast<uint32_t*>(&ring.tail), __ATOMIC_ACQUIRE);
        ring.error = abi::kRingOk;
        ring.error_index = 0;
        __atomic_store_n(const_cast<uint32_t*>(&ring.reset_ack), reset, __ATOMIC_RELEASE);
        return 1;
    }
    if (ring.error != abi::kRingOk) return 0;
    uint32_t head = ring.head;
    const uint32_t tail = __atomic_load_n(const_cast<uint32_t*>(&ring.tail), __ATOMIC_ACQUIRE);
    uint32_t done = 0;
    while (head != tail && done < budget) {
        uint32_t err = abi::kRingBadArgument;  // a tail beyond the ring's size: the producer is broken
        if (tail - head <= Ring::kSlots) {
            auto cmd = ring.slots[head & (Ring::kSlots - 1)];  // copy: the slot is shared memory
            err = exec(cmd);
        }
        if (err != abi::kRingOk) {
            ring.error_index = head;
            __atomic_store_n(const_cast<uint32_t*>(&ring.error), err, __ATOMIC_RELEASE);
            break;
        }
        ++head;
        ++done;
        __atomic_store_n(const_cast<uint32_t*>(&ring.head), head, __ATOMIC_RELEASE);
    }
    return done;
}

// `touches`, if given, collects the cores whose L1 the commands wrote.
uint32_t run_noc_ring(const ChipMemory& mem, const BoardInfo& board, abi::NocRing& ring, uint32_t budget,
                      DeviceCounters& counters, CoreTouches* touches = nullptr);
uint32_t run_math_ring(const ChipMemory& mem, abi::MathRing& ring, uint32_t budget, DeviceCounters& counters,
                       CoreTouches* touches = nullptr);

}  // namespace weft
