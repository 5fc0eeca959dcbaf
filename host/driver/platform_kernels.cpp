#include "driver/platform_kernels.h"

#include "driver/kernel_args.h"

namespace weft::kernels {

Launch eth_send(uint32_t chip, uint32_t core, uint32_t port, uint64_t src, uint64_t dst, uint32_t len,
                uint32_t packet, uint32_t repeat, uint64_t flag, uint32_t flag_value) {
    return {chip, core, &kernel_named("eth_send"),
            KernelArgWords().u32(port).u64(src).u64(dst).u32(len).u32(packet).u32(repeat).u64(flag).u32(flag_value)};
}

Launch recv_check(uint32_t chip, uint32_t core, uint64_t sem, uint32_t value, uint64_t buf, uint32_t check_len,
                  uint32_t seed) {
    return {chip, core, &kernel_named("recv_check"),
            KernelArgWords().u64(sem).u32(value).u64(buf).u32(check_len).u32(seed)};
}

Launch wait_sem(uint32_t chip, uint32_t core, uint64_t sem, uint32_t value) {
    return {chip, core, &kernel_named("wait_sem"), KernelArgWords().u64(sem).u32(value)};
}

Launch ping_pong(uint32_t chip, uint32_t core, uint32_t port, bool initiator, uint32_t n, uint64_t local_flag,
                 uint64_t remote_flag) {
    return {chip, core, &kernel_named("ping_pong"),
            KernelArgWords().u32(port).u32(initiator ? 1 : 0).u32(n).u64(local_flag).u64(remote_flag)};
}

Launch fault(uint32_t chip, uint32_t core, uint32_t kind) {
    return {chip, core, &kernel_named("fault"), KernelArgWords().u32(kind)};
}

Launch reloc_probe(uint32_t chip, uint32_t core) { return {chip, core, &kernel_named("reloc_probe"), {}}; }

Launch noc_math(uint32_t chip, uint32_t core, const NocMathArgs& a) {
    return {chip, core, &kernel_named("noc_math"),
            KernelArgWords()
                .u64(a.src)
                .u64(a.dst)
                .u32(a.len)
                .u64(a.sem)
                .u64(a.mcast_l1_offset)
                .u32(a.mcast_mask)
                .u32(a.op)
                .u32(a.dtype)
                .u64(a.a)
                .u64(a.b)
                .u64(a.out)
                .u32(a.count)};
}

}  // namespace weft::kernels
