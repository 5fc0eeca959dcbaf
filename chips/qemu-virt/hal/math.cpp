#include "hal/math.h"

#include "ring_submit.h"

namespace weft::math {

void eltwise(abi::MathOp op, abi::DataType dtype, uint64_t src0, uint64_t src1, uint64_t dst, uint32_t count) {
    abi::MathCommand c{};
    c.op = op;
    c.dtype = dtype;
    c.count = count;
    c.src0 = src0;
    c.src1 = src1;
    c.dst = dst;
    qemu_virt::ring_submit(mailbox::control().math[mailbox::core_id()], c, abi::kRingMath, mailbox::core_id(),
                           abi::kWaitMathRing);
}

void semaphore_inc(uint64_t sem, uint32_t value) {
    abi::MathCommand c{};
    c.op = abi::kMathSemInc;
    c.count = value;
    c.dst = sem;
    qemu_virt::ring_submit(mailbox::control().math[mailbox::core_id()], c, abi::kRingMath, mailbox::core_id(),
                           abi::kWaitMathRing);
}

void recover() {
    qemu_virt::ring_recover(mailbox::control().math[mailbox::core_id()], abi::kWaitMathRing, mailbox::core_id());
}

void barrier() {
    qemu_virt::ring_drain(mailbox::control().math[mailbox::core_id()], abi::kRingMath, mailbox::core_id(),
                          abi::kWaitMathRing);
}

}  // namespace weft::math
