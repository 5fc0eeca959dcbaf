// Fabric sockets, the host's half: both ends of a flow-controlled stream
// between a kernel on one chip and a kernel on another, placed in their
// cores' L1 over a running fabric's routers (the fabric transport's stream,
// offered to any two kernels). Each kernel opens its end with
// fabric::Socket (firmware/fabric/socket.h).
#pragma once
#include <stdint.h>

#include "driver/chip_writer.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/fabric_transport.h"
#include "transport/l1_allocator.h"
#include "transport/transport.h"

namespace weft::transport {

struct SocketSpec {
    uint32_t sender_chip = 0, sender_core = 0;
    uint32_t receiver_chip = 0, receiver_core = 0;
    uint32_t slots = 8;             // landing slots in the receiver's L1: the stream's window
    uint32_t message_bytes = 4096;  // at most one packet's payload
};

// Places and writes both ends; `l1` keeps out what the routers hold. Throws
// weft::Error naming an end the fabric cannot serve (a core with no lane of
// its own, a chip off the fabric) or L1 that does not fit.
StreamEnds open_socket(const FabricBuilder& fabric, const BoardInfo& board, ChipWriter& memory, L1Allocator& l1,
                       const SocketSpec& spec);

}  // namespace weft::transport
