// The host board's per-thread current core and the objects that set it (host_board.h).
#include <stdio.h>
#include <stdlib.h>

#include "host_board.h"

namespace weft::host_board {
namespace {

thread_local Core* current_core = nullptr;

}  // namespace

Core& current() {
    if (!current_core) {
        fprintf(stderr, "host board: firmware ran with no current core (enter one with host_board::Enter)\n");
        abort();
    }
    return *current_core;
}

Core* current_or_null() { return current_core; }

Enter::Enter(Core& core) : previous_(current_core) { current_core = &core; }
Enter::~Enter() { current_core = previous_; }

namespace {

struct Legacy {
    Clock clock;
    std::unique_ptr<Core> core;
    std::optional<State> state;
};
thread_local Legacy legacy;

}  // namespace

void reset(abi::ChipControlBlock* control, uint32_t core) {
    legacy.clock.now = 0;
    legacy.core = std::make_unique<Core>(*control, core, legacy.clock);
    Core& c = *legacy.core;
    legacy.state.emplace(State{control, core, legacy.clock.now, c.sleeps, c.on_sleep, c.on_panic});
    current_core = &c;
}

State& state() {
    if (!legacy.state) {
        fprintf(stderr, "host board: state() before reset() (or use host_board::Core)\n");
        abort();
    }
    return *legacy.state;
}

void Core::throw_on_panic() {
    on_panic = [](int32_t code, uint64_t detail) { throw Panic(code, detail); };
}

Chip::Chip(abi::ChipControlBlock& control, uint32_t cores, Clock& clock) {
    for (uint32_t id = 0; id < cores; ++id) cores_.push_back(std::make_unique<Core>(control, id, clock));
}

void Chip::on_sleep(const std::function<void()>& f) {
    for (auto& core : cores_) core->on_sleep = f;
}

void Chip::throw_on_panic() {
    for (auto& core : cores_) core->throw_on_panic();
}

}  // namespace weft::host_board
