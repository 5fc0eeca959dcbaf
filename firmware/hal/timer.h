// Time on a chip: the machine timer (mtime, board timebase) and the cycle counter.
#pragma once
#include <stdint.h>

namespace weft::timer {

uint64_t now();  // mtime ticks
uint64_t ticks_per_us();
uint64_t cycles();  // mcycle
// Sleep the calling hart until mtime >= deadline or any enabled interrupt is
// pending (WFI). May return early; callers re-check their condition.
void sleep_until(uint64_t deadline);
// The calling hart's timer comparator: set_alarm(t) makes its timer interrupt
// pending from mtime t on; alarm() is the last value set, without a device read.
void set_alarm(uint64_t deadline);
uint64_t alarm();

}  // namespace weft::timer
