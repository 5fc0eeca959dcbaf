// How a worker kernel finds one end of a stream of messages, whatever carries
// it: the host's transport (host/transport/transport.h) places the end's
// connection descriptor in the worker's L1 and hands the kernel this
// reference; the firmware's channel interface (firmware/transport/channel.h)
// opens it with the adapter of that transport.
#pragma once
#include <stdint.h>

namespace weft::abi {

enum TransportKind : uint32_t {
    kTransportNone = 0,
    kTransportEdm = 1,     // address: an abi::EdmWorkerConnection (edm.h)
    kTransportFabric = 2,  // address: an abi::FabricStreamEnd (fabric_router.h)
};

struct ChannelRef {
    uint32_t transport;  // TransportKind
    uint32_t reserved;
    uint64_t address;  // the transport's connection descriptor in the worker's L1
};
static_assert(sizeof(ChannelRef) == 16, "ChannelRef layout");

}  // namespace weft::abi
