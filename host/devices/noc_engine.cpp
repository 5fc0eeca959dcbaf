// NoC DMA engine: one command ring per core, executed in order, so a semaphore
// increment queued after a write lands after the write's bytes.
#include <string.h>

#include "devices/devices.h"

namespace weft {
namespace {

uint32_t exec_noc(const ChipMemory& mem, const BoardInfo& board, const abi::NocCommand& c, DeviceCounters& counters,
                  CoreTouches* touches) {
    auto touch = [&](uint64_t addr, uint64_t len) {
        if (touches) touches->write(addr, len);
    };
    auto word = [&](uint64_t addr) -> uint32_t* {
        return (addr & 3) ? nullptr : reinterpret_cast<uint32_t*>(mem.at(addr, 4));
    };
    auto copy = [&](uint64_t src, uint64_t dst) -> uint32_t {
        uint8_t* s = mem.at(src, c.len);
        uint8_t* d = mem.at(dst, c.len);
        if (!s || !d) return abi::kRingBadAddress;
        memmove(d, s, c.len);
        touch(dst, c.len);
        counters.noc_bytes += c.len;
        return abi::kRingOk;
    };
    switch (c.op) {
        case abi::kNocWrite:
        case abi::kNocRead: return copy(c.src, c.dst);
        case abi::kNocWriteInc: {
            uint32_t* sem = word(c.sem);
            if (!sem) return abi::kRingBadAddress;
            if (uint32_t e = copy(c.src, c.dst)) return e;
            __atomic_fetch_add(sem, c.value, __ATOMIC_RELEASE);
            touch(c.sem, 4);
            return abi::kRingOk;
        }
        case abi::kNocSemInc:
        case abi::kNocSemSet:
        case abi::kNocInlineWrite: {
            uint32_t* w = word(c.dst);
            if (!w) return abi::kRingBadAddress;
            if (c.op == abi::kNocSemInc) __atomic_fetch_add(w, c.value, __ATOMIC_RELEASE);
            else
                __atomic_store_n(w, c.value, __ATOMIC_RELEASE);
            touch(c.dst, 4);
            return abi::kRingOk;
        }
        case abi::kNocMulticast: {
            if (c.core_mask >> board.cores.size()) return abi::kRingBadArgument;
            for (uint32_t core = 0; core < board.cores.size(); ++core) {
                if (!(c.core_mask & (1u << core))) continue;
                const Region& l1 = board.cores[core].l1;
                if (c.dst > l1.size || c.len > l1.size - c.dst) return abi::kRingBadAddress;
                if (uint32_t e = copy(c.src, l1.base + c.dst)) return e;
            }
            return abi::kRingOk;
        }
    }
    return abi::kRingBadOpcode;
}

}  // namespace

uint32_t run_noc_ring(const ChipMemory& mem, const BoardInfo& board, abi::NocRing& ring, uint32_t budget,
                      DeviceCounters& counters, CoreTouches* touches) {
    return consume_ring(ring, budget, [&](const abi::NocCommand& c) {
        counters.noc_commands++;
        return exec_noc(mem, board, c, counters, touches);
    });
}

}  // namespace weft
