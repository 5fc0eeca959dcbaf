// A board like qemu-virt without reading its devicetree: four ERISC cores,
// one per port (N, E, S, W), then four worker cores; the transports load
// qemu-virt's kernels for it. For unit tests that plan against a board.
#pragma once
#include "driver/board.h"

namespace weft::test {

inline BoardInfo small_board() {
    BoardInfo b;
    b.name = "qemu-virt";
    b.code_size = 0x10000;
    b.stack_size = 0x4000;
    b.args_size = 0x1000;
    for (uint32_t c = 0; c < 8; ++c) {
        CoreInfo ci;
        ci.id = c;
        ci.role = c < 4 ? CoreRole::kErisc : CoreRole::kWorker;
        ci.port = c < 4 ? static_cast<int>(c) : -1;
        ci.l1 = {0x80100000 + c * 0x400000ull, 0x400000};
        b.cores.push_back(ci);
    }
    for (uint32_t p = 0; p < 4; ++p) b.ports.push_back({p, static_cast<abi::FabricCompass>(p), 0, p});
    return b;
}

}  // namespace weft::test
