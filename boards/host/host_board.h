// The "host" board: the firmware HAL on plain host memory, so firmware logic
// runs inside CMocka tests and simulators. Devices are the real ring protocol
// of qemu-virt; the test plays the devices (or drives weft_devices' engines)
// and the other cores.
//
// A hart's context is an ordinary object, as many as a test needs (in the
// manner of Tock's FakeAlarm): a Core is one hart of one chip, with its id, its
// chip's control block, a clock and what happens when it would sleep or
// panic. The HAL's functions act for the calling thread's current core, which
// Enter sets, so a test can step any number of chips' cores in turn on one
// thread, or give each core a thread of its own.
#pragma once
#include <stdint.h>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "weft/abi/control_block.h"

namespace weft::host_board {

// Fake mtime, in ticks (timer::ticks_per_us() per µs). A sleep moves it on to
// its deadline; a test moves it as it likes. Cores that share one share a
// time: a chip's harts, or a whole simulation.
struct Clock {
    uint64_t now = 0;
    // The owner moves `now` (a machine that follows the host's time), and a
    // sleep does not jump it to its deadline.
    bool kept_by_owner = false;
};

class Core {
public:
    Core(abi::ChipControlBlock& control, uint32_t id, Clock& clock) : control(control), id(id), clock(clock) {}
    Core(const Core&) = delete;
    Core& operator=(const Core&) = delete;

    abi::ChipControlBlock& control;
    const uint32_t id;  // the hart id: its HartStatus and rings in the control block
    Clock& clock;
    uint64_t sleeps = 0;
    // When the sleep on_sleep runs for ends by itself (its timer), in ticks.
    uint64_t sleep_deadline = 0;
    // Where the core's chip keeps its RAM in host memory, so that the
    // addresses the host gives the firmware resolve (pointer_to,
    // rt/address.h). None: addresses are host pointers already (what tests
    // that build configurations in host memory give).
    uint8_t* ram = nullptr;
    uint64_t ram_base = 0, ram_size = 0;
    // Runs, with this core current, every time the firmware would sleep in
    // WFI: where the test acts as the devices and as the other cores.
    std::function<void()> on_sleep;
    // Must not return (throw or longjmp): the firmware gave up on the kernel.
    std::function<void(int32_t code, uint64_t detail)> on_panic;

    void throw_on_panic();
};

// The calling thread's current core; aborts, naming the mistake, if none is.
Core& current();
// The same, or nullptr.
Core* current_or_null();

// Makes a core current on the calling thread for a scope. The core that was
// current before is current again after it, also when the firmware panicked
// by throwing, so a core's on_sleep may step other cores and return.
class Enter {
public:
    explicit Enter(Core& core);
    ~Enter();
    Enter(const Enter&) = delete;
    Enter& operator=(const Enter&) = delete;

private:
    Core* previous_;
};

// Runs firmware logic (a poll(), a constructor) as `core`.
template <typename F>
decltype(auto) run_as(Core& core, F&& f) {
    Enter entered(core);
    return f();
}

// A chip's harts: core(i) is hart i, all on the chip's control block and one clock.
class Chip {
public:
    Chip(abi::ChipControlBlock& control, uint32_t cores, Clock& clock);
    Core& core(uint32_t id) { return *cores_.at(id); }
    uint32_t cores() const { return static_cast<uint32_t>(cores_.size()); }
    // The same on_sleep (or panic behaviour) for every core of the chip.
    void on_sleep(const std::function<void()>& f);
    void throw_on_panic();

private:
    std::vector<std::unique_ptr<Core>> cores_;  // a Core stays put: Enter holds its address
};

// What tests catch when firmware gives up: mailbox::panic's code and detail.
struct Panic : std::runtime_error {
    int32_t code;
    uint64_t detail;
    Panic(int32_t c, uint64_t d) : std::runtime_error("firmware panic"), code(c), detail(d) {}
};

// ---- the 0.7 API: one hart per thread, set up by reset() ---------------------
// Deprecated since 0.8 (use Core, Chip and Enter); kept so that tests written
// against 0.7 still build. reset() makes a hart of `control` current on the
// calling thread, with a clock of its own; state() refers to that hart's
// fields (state().now is its clock).
struct State {
    abi::ChipControlBlock* control;
    uint32_t core;
    uint64_t& now;
    uint64_t& sleeps;
    std::function<void()>& on_sleep;
    std::function<void(int32_t code, uint64_t detail)>& on_panic;
};
[[deprecated("use host_board::Core and Enter")]] State& state();
[[deprecated("use host_board::Core and Enter")]] void reset(abi::ChipControlBlock* control, uint32_t core);
[[deprecated("use Core::throw_on_panic")]] inline void throw_on_panic() {
    current().throw_on_panic();
}

}  // namespace weft::host_board
