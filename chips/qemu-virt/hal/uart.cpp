#include "hal/uart.h"

#include "uart_16550.h"

namespace weft::uart {

using namespace qemu_virt::uart16550;

void put(uint8_t byte) {
    while (!(regs()[kLsr] & kLsrThre)) {
    }
    regs()[kThr] = byte;
}

}  // namespace weft::uart
