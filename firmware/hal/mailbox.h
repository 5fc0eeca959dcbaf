// The calling hart's identity and its status words in the chip control block.
#pragma once
#include <stdint.h>
#include "weft/abi/control_protocol.h"

namespace weft::mailbox {

uint32_t core_id();
uint32_t chip_id();
uint32_t num_chips();
abi::ControlProtocol& control();
abi::HartStatus& my_status();

// Post what the hart waits on, for the hang report.
void set_wait(uint32_t kind, uint64_t addr, uint32_t value);
void clear_wait();
void set_progress(uint64_t step);
// Fallback alarm (µs) of a kernel sleeping on its doorbell, and of the idle
// hart that keeps watch over the launch mailboxes.
uint32_t active_wake_us();
uint32_t idle_wake_us();

// Report a failure the firmware detected and abandon the kernel (FAULT with
// mcause = abi::kPanicCause). Never returns.
[[noreturn]] void panic(int32_t code, uint64_t detail);
// Leaves the running kernel (kPanicStopped) if the host asked it to stop;
// every wait calls it each time it wakes, so a stuck op can always be ended.
void honour_stop();

}  // namespace weft::mailbox
