// Runtime arguments: the host writes a kernel's argument struct into the
// core's argument block (host/driver/kernel_args.h, KernelArgWords::of) and the
// kernel reads the same struct back (firmware/kernels/kernel.h,
// KernelArgs::as). One definition per kernel, next to the ABI it belongs to
// (ccl.h, edm.h, platform_kernels.h), so the two sides cannot drift apart.
//
// Rules for an argument struct: plain data, 8-byte aligned 64-bit fields,
// explicit padding, size static_asserted, at most the board's args-size.
#pragma once
#include <stdint.h>

namespace weft::abi {

template <typename T>
inline constexpr bool kIsKernelArgs = sizeof(T) % 4 == 0 && alignof(T) <= 8;

// A kernel's arguments by name, so `weft launch KERNEL --args name=value ...`
// can fill the struct: "name:type name:type ..." in the struct's order, types
// u32 and u64 (a u64 at the next multiple of 8, as the compiler places it).
// The kernel declares it with WEFT_KERNEL_ARG_NAMES (firmware/kernels/kernel.h),
// which static_asserts that it adds up to the struct's size; the host reads it
// from the ELF's .weft_args section (host/driver/kernel_image.h).
constexpr uint32_t described_args_size(const char* d) {
    uint32_t size = 0;
    while (*d) {
        while (*d == ' ') ++d;
        if (!*d) break;
        while (*d && *d != ':') ++d;
        if (!*d) return 0;  // a name without a type
        ++d;
        uint32_t width = 0;
        if (d[0] == 'u' && d[1] == '3' && d[2] == '2') width = 4;
        if (d[0] == 'u' && d[1] == '6' && d[2] == '4') width = 8;
        if (!width || (d[3] && d[3] != ' ')) return 0;  // an unknown type
        size = (size + width - 1) / width * width + width;
        d += 3;
    }
    return size;
}

}  // namespace weft::abi
