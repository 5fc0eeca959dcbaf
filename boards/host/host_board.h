// The "host" board: the firmware HAL on plain host memory, so firmware logic
// runs inside CMocka tests. Devices are the real ring protocol of qemu-virt;
// the test plays the device (or the peer chip) in on_sleep, which runs every
// time the firmware would sleep in WFI.
#pragma once
#include <stdint.h>

#include <functional>
#include <stdexcept>

#include "weft/abi/control_block.h"

namespace weft::host_board {

struct State {
    abi::ChipControlBlock* control = nullptr;
    uint32_t core = 0;
    uint64_t now = 0;          // fake mtime, advanced by sleeps
    uint64_t sleeps = 0;
    std::function<void()> on_sleep;
    // Must not return (throw or longjmp): the firmware gave up on the kernel.
    std::function<void(int32_t code, uint64_t detail)> on_panic;
};

State& state();
void reset(abi::ChipControlBlock* control, uint32_t core);

// What tests catch when firmware gives up: mailbox::panic's code and detail.
struct Panic : std::runtime_error {
    int32_t code;
    uint64_t detail;
    Panic(int32_t c, uint64_t d) : std::runtime_error("firmware panic"), code(c), detail(d) {}
};
inline void throw_on_panic() {
    state().on_panic = [](int32_t code, uint64_t detail) { throw Panic(code, detail); };
}

}  // namespace weft::host_board
