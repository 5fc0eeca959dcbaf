// What every kernel sees: its runtime arguments, written by the host into the
// core's argument block. Kernels define kernel_main and return 0 on success.
#pragma once
#include <stdint.h>

#include "hal/mailbox.h"
#include "weft/abi/fault.h"
#include "weft/abi/kernel_args.h"

namespace weft {

struct KernelArgs {
    const uint32_t* words;
    uint32_t count;

    uint32_t u32(uint32_t i) const {
        if (i >= count) mailbox::panic(abi::kPanicBadArgs, i);
        return words[i];
    }
    // 64-bit values (addresses) take two words, low first.
    uint64_t u64(uint32_t i) const { return uint64_t(u32(i)) | (uint64_t(u32(i + 1)) << 32); }

    // The kernel's argument struct (weft/abi/kernel_args.h), as the host wrote
    // it; a launch with fewer words than the struct panics, not reads garbage.
    template <typename T>
    const T& as() const {
        static_assert(abi::kIsKernelArgs<T>, "not an argument struct");
        if (count * 4 < sizeof(T)) mailbox::panic(abi::kPanicBadArgs, count);
        if (reinterpret_cast<uintptr_t>(words) % alignof(T))
            mailbox::panic(abi::kPanicBadArgs, reinterpret_cast<uintptr_t>(words));
        return *reinterpret_cast<const T*>(words);
    }
};

}  // namespace weft

extern "C" int kernel_main(weft::KernelArgs args);

// Names the fields of the kernel's argument struct for `weft launch --args
// name=value` (weft/abi/kernel_args.h): one line in the kernel's source,
//   WEFT_KERNEL_ARG_NAMES(MyArgs, "src:u64 dst:u64 bytes:u32 pad:u32");
// The description must add up to sizeof(MyArgs) (padding included).
#define WEFT_KERNEL_ARG_NAMES(Args, description)                                                           \
    static_assert(weft::abi::described_args_size(description) == sizeof(Args),                             \
                  "WEFT_KERNEL_ARG_NAMES: the description does not add up to the argument struct's size"); \
    extern "C" __attribute__((section(".weft_args"), used)) const char weft_kernel_arg_names[] = description
