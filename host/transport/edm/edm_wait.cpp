#include "transport/edm/edm_wait.h"

#include <sstream>

#include "common/hex.h"
#include "driver/cluster_file.h"
#include "driver/wait_decoders.h"
#include "weft/abi/edm.h"

namespace weft::transport {
namespace {

std::string describe_handshake(const abi::EdmConfig& c, const abi::EdmLinkWords& lw) {
    return std::string(": handshake not done (") +
           (c.handshake_initiator ? "initiator, ack seen " : "responder, handshake seen ") +
           std::to_string(c.handshake_initiator ? lw.handshake_ack : lw.handshake) + ")";
}

std::string describe_channel(const abi::EdmConfig& c, const abi::EdmLinkWords& lw, uint32_t i) {
    const abi::EdmChannel& ch = c.channels[i];
    const abi::EdmChannelStatus& s = c.status[i];
    std::ostringstream o;
    o << "\n        channel " << ch.id << " ";
    if (ch.role == abi::kEdmSender)
        o << "sender: granted " << s.granted_or_delivered << ", taken " << s.taken << ", sent " << s.sent_or_released
          << ", peer released " << lw.acked[ch.id % abi::kEdmMaxChannels];
    else
        o << "receiver: peer sent " << lw.filled[ch.id % abi::kEdmMaxChannels] << ", delivered "
          << s.granted_or_delivered << ", released " << s.sent_or_released;
    if (c.termination == abi::kEdmMessageCount) o << " of " << ch.message_count;
    return o.str();
}

// Which channel stalls and on which side of the link.
std::string describe_edm(const MachineChip& chip, const abi::HartStatus& status) {
    const uint64_t config_addr = status.wait_addr;
    abi::EdmConfig c;
    abi::EdmLinkWords lw;
    try {
        chip.read(config_addr, &c, sizeof c);
        chip.read(c.link_words, &lw, sizeof lw);
    } catch (...) {
        return "EDM with an unreadable configuration at " + hex(config_addr);
    }
    std::string out = "EDM traffic on port " + port_name(chip.board(), c.port) + " (epoch " + std::to_string(c.epoch) +
                      ")";
    if (!c.handshake_done) return out + describe_handshake(c, lw);
    for (uint32_t i = 0; i < c.num_channels && i < abi::kEdmMaxChannels; ++i)
        if (!c.status[i].done) out += describe_channel(c, lw, i);
    return out;
}

}  // namespace

void register_edm_wait_decoder() {
    static const bool done = [] {
        register_wait_decoder(abi::kWaitEdm, "EDM", describe_edm);
        return true;
    }();
    (void)done;
}

}  // namespace weft::transport
