// Launch builders for the test-only kernels (tests/firmware/kernels), built
// with each board's firmware into firmware/<board>/test-kernels/ and never part
// of the product.
#pragma once
#include <stdint.h>

#include "driver/cluster.h"
#include "driver/kernel_args.h"
#include "driver/paths.h"
#include "test_kernel_args.h"

namespace weft::test {

inline const KernelImage& test_kernel(const BoardInfo& board, const std::string& name) {
    return kernel_at(paths::firmware_dir(board.name) + "/test-kernels/" + name + ".elf");
}

inline Launch fault_kernel(const BoardInfo& board, uint32_t chip, uint32_t core, uint32_t kind) {
    return {chip, core, &test_kernel(board, "fault"), KernelArgWords::of(test_abi::FaultArgs{kind})};
}

// Returns 1321 when loaded and relocated right.
inline Launch reloc_probe(const BoardInfo& board, uint32_t chip, uint32_t core) {
    return {chip, core, &test_kernel(board, "reloc_probe"), {}};
}

inline Launch wait_sem(const BoardInfo& board, uint32_t chip, uint32_t core, uint64_t sem, uint32_t value) {
    return {chip, core, &test_kernel(board, "wait_sem"), KernelArgWords::of(test_abi::WaitSemArgs{sem, value, 0})};
}

inline Launch noc_math(const BoardInfo& board, uint32_t chip, uint32_t core, const test_abi::NocMathArgs& args) {
    return {chip, core, &test_kernel(board, "noc_math"), KernelArgWords::of(args)};
}

}  // namespace weft::test
