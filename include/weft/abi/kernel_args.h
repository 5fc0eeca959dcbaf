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

}  // namespace weft::abi
