// HAL timer, mailbox and cache for the host board (see host_board.h).
#include <stdlib.h>

#include "hal/cache.h"
#include "hal/mailbox.h"
#include "hal/timer.h"
#include "host_board.h"
#include "rt/address.h"

namespace weft {

// A byte of the current core's chip's RAM is named by its board address;
// any other (the stack, a test's own memory) by its host address.
uint64_t host_board_address(const volatile void* p) {
    const uint64_t host = reinterpret_cast<uintptr_t>(p);
    const host_board::Core* core = host_board::current_or_null();
    const uint64_t base = core ? reinterpret_cast<uintptr_t>(core->ram) : 0;
    if (core && core->ram && host >= base && host - base < core->ram_size) return core->ram_base + (host - base);
    return host;
}

// A board address of the current core's chip moves to the chip's host copy;
// anything else is taken for a host pointer already.
void* host_board_pointer(uint64_t address) {
    const host_board::Core* core = host_board::current_or_null();
    if (core && core->ram && address >= core->ram_base && address - core->ram_base < core->ram_size)
        return core->ram + (address - core->ram_base);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

namespace timer {
uint64_t now() { return host_board::current().clock.now; }
uint64_t ticks_per_us() { return 10; }
uint64_t cycles() { return now() * 10; }
void set_alarm(uint64_t deadline) { mailbox::my_status().alarm = deadline; }
uint64_t alarm() { return mailbox::my_status().alarm; }
void sleep_until(uint64_t deadline) {
    auto& core = host_board::current();
    ++core.sleeps;
    core.sleep_deadline = deadline;
    if (core.on_sleep) core.on_sleep();
    if (!core.clock.kept_by_owner && core.clock.now < deadline) core.clock.now = deadline;
}
}  // namespace timer

namespace mailbox {
abi::ControlProtocol& control() { return host_board::current().control; }
uint32_t core_id() { return host_board::current().id; }
void panic(int32_t code, uint64_t detail) {
    auto& core = host_board::current();
    if (core.on_panic) core.on_panic(code, detail);
    abort();
}
}  // namespace mailbox

namespace cache {
void invalidate_instructions(uint64_t, uint64_t) {}
}  // namespace cache

}  // namespace weft

// Doorbells on the host board: the test is the device, and it acts in
// on_sleep, so sleeping on the doorbell is just a sleep.
#include "hal/wake.h"
namespace weft::wake {
// The doorbell word numbered as on the chip, so tests see what the device side sees.
namespace {
abi::HartDoorbell& me() { return host_board::current().control.doorbell[mailbox::core_id()]; }
}  // namespace
void arm() { me().seq = abi::doorbell_arm(me().seq); }
void disarm() { me().seq = abi::doorbell_disarm(me().seq); }
void sleep(uint32_t fallback_us) { timer::sleep_until(timer::now() + uint64_t(fallback_us) * timer::ticks_per_us()); }
void notify_devices() {}
void init_core() {}
void listen(bool) {}
}  // namespace weft::wake
