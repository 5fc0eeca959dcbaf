// The chip's one UART, a 16550 as QEMU virt models it (FIFO off: it holds
// one received byte). Private to this chip's HAL: the console writes it
// (uart.cpp) and the doorbell rides on it (wake.cpp).
#pragma once
#include <stdint.h>

#include "weft/board_layout.h"

namespace weft::qemu_virt::uart16550 {

inline volatile uint8_t* regs() { return reinterpret_cast<volatile uint8_t*>(WEFT_UART); }
inline constexpr int kRbr = 0, kThr = 0, kIer = 1, kLsr = 5;
inline constexpr uint8_t kIerRxAvailable = 1 << 0;
inline constexpr uint8_t kLsrThre = 1 << 5;

}  // namespace weft::qemu_virt::uart16550
