#include "transport/transport.h"

namespace weft::transport {

std::string capability_names(uint32_t capabilities) {
    std::string out;
    if (capabilities & kCanMulticast) out += "multicast";
    return out;
}

// What each kind's Transport::capabilities() says (a unit test holds them to it).
const std::vector<TransportKind>& transport_kinds() {
    static const std::vector<TransportKind> kinds = {{"edm", 0}, {"fabric", kCanMulticast}};
    return kinds;
}

}  // namespace weft::transport
