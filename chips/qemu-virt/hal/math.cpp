#include "hal/math.h"

#include "ring_submit.h"

namespace weft::math {
namespace {

abi::MathRing& ring() { return qemu_virt::devices().math[mailbox::core_id()]; }

void submit(const abi::MathCommand& c) {
    qemu_virt::ring_submit(ring(), c, abi::kRingMath, mailbox::core_id(), abi::kWaitMathRing);
}

}  // namespace

void eltwise(abi::MathOp op, abi::DataType dtype, uint64_t src0, uint64_t src1, uint64_t dst, uint32_t count) {
    abi::MathCommand c{};
    c.op = op;
    c.dtype = dtype;
    c.count = count;
    c.src0 = src0;
    c.src1 = src1;
    c.dst = dst;
    submit(c);
}

void semaphore_inc(uint64_t sem, uint32_t value) {
    abi::MathCommand c{};
    c.op = abi::kMathSemInc;
    c.count = value;
    c.dst = sem;
    submit(c);
}

void recover(bool drop_queued) { qemu_virt::ring_recover(ring(), abi::kWaitMathRing, mailbox::core_id(), drop_queued); }

void barrier() { qemu_virt::ring_drain(ring(), abi::kRingMath, mailbox::core_id(), abi::kWaitMathRing); }

}  // namespace weft::math
