// A kernel ELF as the loader needs it: one flat image linked at address 0,
// plus the offsets of the absolute pointers to shift when it is placed at a
// core's L1. Kernels are built with -mcmodel=medany (PC-relative code) and
// linked with --emit-relocs, so only data words (vtables, pointer tables,
// .init_array) carry absolute addresses.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "driver/firmware_layout.h"

namespace weft {

struct KernelImage {
    std::string path;
    std::string name;
    std::vector<uint8_t> bytes;   // [0, image_size): file contents, .bss as zeros
    uint32_t xlen = 64;           // RV32 or RV64 (its ELF class)
    uint64_t entry = 0;           // offset of the entry point
    uint64_t code_size = 0;       // executable bytes from offset 0
    std::vector<uint64_t> abs64;  // offsets of 64-bit absolute addresses
    std::vector<uint64_t> abs32;  // offsets of 32-bit absolute addresses
    uint64_t content_hash = 0;
    FirmwareLayout layout;  // the board it was built for
    // Its argument struct's fields by name, where the kernel declares them
    // (WEFT_KERNEL_ARG_NAMES, weft/abi/kernel_args.h): in order, with their byte offsets.
    struct ArgField {
        std::string name;
        uint32_t bytes = 4;  // 4 (u32) or 8 (u64)
        uint32_t offset = 0;
    };
    std::vector<ArgField> arg_fields;
    // "sem:u64 value:u32 pad:u32": the fields as refusals list them.
    std::string arg_fields_text() const;
    uint32_t args_size = 0;  // the struct's size by the description (0: none declared)

    // The image as it must sit in memory at `base`. Throws if a 32-bit
    // absolute address no longer fits.
    std::vector<uint8_t> relocated(uint64_t base) const;
};

// Throws weft::Error naming the file and the problem.
KernelImage load_kernel_image(const std::string& path);

// The argument words of `name=value` pairs by the kernel's declared names:
// every field given once (a padding field, named pad..., may be left out: 0),
// u32 values up to 2^32-1. Throws weft::Error naming
// an unknown, missing or repeated field, or a value out of range, and listing
// the kernel's fields.
std::vector<uint32_t> named_argument_words(const KernelImage& kernel,
                                           const std::vector<std::pair<std::string, uint64_t>>& values);

}  // namespace weft
