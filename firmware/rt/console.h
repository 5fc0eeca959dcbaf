// The chip's console (its UART, hal/uart.h). Output of several harts is
// serialised by a lock in the control block, so lines do not interleave.
#pragma once
#include <stdarg.h>
#include <stdint.h>

namespace weft::console {

void write(const char* s);
// printf subset: %s %c %d %u %x %lu %ld %lx %llu %llx %p %%, with width and 0-fill.
void printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void vprintf(const char* fmt, va_list ap);

}  // namespace weft::console
