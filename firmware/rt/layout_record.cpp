// This image's abi::LayoutRecord, linked into every image (boot firmware,
// kernels, resident images) so the host can tell which chip it was built for.
#include "weft/abi/layout_record.h"
#include "weft/abi/control_protocol.h"
#include "weft/board_layout.h"

extern "C" __attribute__((section(".weft_layout"), used))
const weft::abi::LayoutRecord weft_layout_record = {weft::abi::kLayoutMagic, weft::abi::kAbiVersion, 0,
                                                    WEFT_LAYOUT_HASH, WEFT_CHIP_NAME};
