// Math engine: element-wise reductions between chip addresses, one ring per
// worker core (the chip's compute engine; firmware never loops over elements).
#include "common/eltwise.h"
#include "devices/devices.h"

namespace weft {
namespace {

uint32_t exec_math(const ChipMemory& mem, const abi::MathCommand& c, DeviceCounters& counters) {
    if (c.op == abi::kMathSemInc) {  // the ring runs in order: everything before it is done
        auto* sem = (c.dst & 3) ? nullptr : reinterpret_cast<uint32_t*>(mem.at(c.dst, 4));
        if (!sem) return abi::kRingBadAddress;
        __atomic_fetch_add(sem, c.count, __ATOMIC_RELEASE);
        return abi::kRingOk;
    }
    const uint32_t size = abi::dtype_size(c.dtype);
    if (size == 0) return abi::kRingBadArgument;
    const uint64_t bytes = uint64_t(c.count) * size;
    uint8_t* a = mem.at(c.src0, bytes);
    uint8_t* b = mem.at(c.src1, bytes);
    uint8_t* d = mem.at(c.dst, bytes);
    if (!a || !b || !d) return abi::kRingBadAddress;
    if (!eltwise(c.op, c.dtype, a, b, d, c.count)) return abi::kRingBadOpcode;
    counters.math_commands++;
    counters.math_elements += c.count;
    return abi::kRingOk;
}

}  // namespace

uint32_t run_math_ring(const ChipMemory& mem, abi::MathRing& ring, uint32_t budget, DeviceCounters& counters,
                       CoreTouches* touches) {
    return consume_ring(ring, budget, [&](const abi::MathCommand& c) -> uint32_t {
        const uint32_t err = exec_math(mem, c, counters);
        if (err == abi::kRingOk && touches)
            touches->write(c.dst, c.op == abi::kMathSemInc ? 4 : uint64_t(c.count) * abi::dtype_size(c.dtype));
        return err;
    });
}

}  // namespace weft
