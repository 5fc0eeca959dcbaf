// Runtime arguments as kernels read them (firmware/kernels/kernel.h): 32-bit
// words, 64-bit values as two words, low first.
#pragma once
#include <stdint.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "weft/abi/kernel_args.h"

namespace weft {

class KernelArgWords {
public:
    KernelArgWords& u32(uint32_t v) {
        words_.push_back(v);
        return *this;
    }
    KernelArgWords& u64(uint64_t v) {
        words_.push_back(static_cast<uint32_t>(v));
        words_.push_back(static_cast<uint32_t>(v >> 32));
        return *this;
    }
    // A kernel's argument struct (weft/abi/kernel_args.h), word for word as the
    // kernel reads it back with KernelArgs::as.
    template <typename T>
    static KernelArgWords of(const T& args) {
        static_assert(abi::kIsKernelArgs<T>, "not an argument struct");
        KernelArgWords w;
        w.words_.resize(sizeof(T) / 4);
        std::memcpy(w.words_.data(), &args, sizeof(T));
        return w;
    }
    operator std::vector<uint32_t>() const { return words_; }
    const std::vector<uint32_t>& words() const { return words_; }

private:
    std::vector<uint32_t> words_;
};

}  // namespace weft
