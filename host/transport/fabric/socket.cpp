#include "transport/fabric/socket.h"

#include "common/error.h"

namespace weft::transport {

StreamEnds open_socket(const FabricBuilder& fabric, const BoardInfo& board, ChipWriter& memory, L1Allocator& l1,
                       const SocketSpec& spec) {
    if (spec.sender_chip == spec.receiver_chip)
        throw Error("a fabric socket joins two chips, not chip " + std::to_string(spec.sender_chip) + " to itself");
    FabricStreamOptions options;
    options.slots = spec.slots;
    options.message_bytes = spec.message_bytes;
    FabricTransport transport(fabric, board, l1, options);
    // The fabric's virtual ports of the pair: one hop, however many cables.
    const Hop hop = FabricRouting(fabric).worker_hops(spec.sender_chip, spec.receiver_chip).front();
    StreamSpec s;
    s.chip = spec.sender_chip;
    s.port = hop.from_port;
    s.peer_chip = spec.receiver_chip;
    s.peer_port = hop.to_port;
    s.sender_core = spec.sender_core;
    s.receiver_core = spec.receiver_core;
    const StreamEnds ends = transport.add_stream(s);
    transport.write(memory);
    return ends;
}

}  // namespace weft::transport
