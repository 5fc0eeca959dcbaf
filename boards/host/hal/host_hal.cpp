// HAL timer, mailbox and cache for the host board (see host_board.h).
#include <stdlib.h>

#include "hal/cache.h"
#include "hal/mailbox.h"
#include "hal/timer.h"
#include "host_board.h"

namespace weft {

namespace timer {
uint64_t now() { return host_board::current().clock.now; }
uint64_t ticks_per_us() { return 10; }
uint64_t cycles() { return now() * 10; }
void set_alarm(uint64_t deadline) { mailbox::my_status().alarm = deadline; }
uint64_t alarm() { return mailbox::my_status().alarm; }
void sleep_until(uint64_t deadline) {
    auto& core = host_board::current();
    ++core.sleeps;
    if (core.on_sleep) core.on_sleep();
    if (core.clock.now < deadline) core.clock.now = deadline;
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
