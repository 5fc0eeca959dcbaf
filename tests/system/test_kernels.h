// Launch builders for the test-only kernels (tests/firmware/kernels), built
// with the firmware into firmware/test-kernels/ and never part of the product.
#pragma once
#include <stdint.h>

#include "driver/cluster.h"
#include "driver/kernel_args.h"
#include "driver/paths.h"
#include "test_kernel_args.h"

namespace weft::test {

inline const KernelImage& test_kernel(const std::string& name) {
    return kernel_at(paths::firmware_dir() + "/test-kernels/" + name + ".elf");
}

inline Launch fault_kernel(uint32_t chip, uint32_t core, uint32_t kind) {
    return {chip, core, &test_kernel("fault"), KernelArgWords::of(test_abi::FaultArgs{kind})};
}

// Returns 1321 when loaded and relocated right.
inline Launch reloc_probe(uint32_t chip, uint32_t core) { return {chip, core, &test_kernel("reloc_probe"), {}}; }

inline Launch wait_sem(uint32_t chip, uint32_t core, uint64_t sem, uint32_t value) {
    return {chip, core, &test_kernel("wait_sem"), KernelArgWords::of(test_abi::WaitSemArgs{sem, value, 0})};
}

inline Launch noc_math(uint32_t chip, uint32_t core, const test_abi::NocMathArgs& args) {
    return {chip, core, &test_kernel("noc_math"), KernelArgWords::of(args)};
}

}  // namespace weft::test
