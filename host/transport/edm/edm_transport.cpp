#include "transport/edm/edm_transport.h"

#include "common/error.h"
#include "driver/cluster_file.h"

namespace weft::transport {
namespace {

uint64_t end_key(uint32_t chip, uint32_t port) { return uint64_t(chip) << 32 | port; }

std::string end_name(const BoardInfo& board, uint32_t chip, uint32_t port) {
    return "chip " + std::to_string(chip) + " port " + port_name(board, port);
}

}  // namespace

EdmTransport::EdmTransport(const Topology& topo, const BoardInfo& board, L1Allocator& mem,
                           const EdmOptions& options)
    : routing_(topo), board_(board), mem_(mem), options_(options) {}

EdmTransport::CableKey EdmTransport::cable_of(const StreamSpec& s) {
    const uint64_t a = end_key(s.chip, s.port), b = end_key(s.peer_chip, s.peer_port);
    return {std::min(a, b), std::max(a, b)};
}

std::string EdmTransport::cannot_connect(const StreamSpec& s) const {
    const std::string what = end_name(board_, s.chip, s.port) + " -> " + end_name(board_, s.peer_chip, s.peer_port);
    try {
        const Hop& h = routing_.hop_at(s.chip, s.port);
        if (h.to_chip != s.peer_chip || h.to_port != s.peer_port) return what + ": no cable joins these ports";
    } catch (const Error& e) {
        return what + ": " + e.what();
    }
    for (uint32_t core : {s.sender_core, s.receiver_core})
        if (core >= board_.cores.size() || board_.cores[core].role != CoreRole::kWorker)
            return what + ": core " + std::to_string(core) + " is not a worker core of board " + board_.name;
    return "";
}

EdmLinkBuilder& EdmTransport::link_for(const CableKey& key) {
    auto& link = links_[key];
    if (!link) {
        const PortRef first{uint32_t(key.first >> 32), uint32_t(key.first)};
        const PortRef second{uint32_t(key.second >> 32), uint32_t(key.second)};
        link = std::make_unique<EdmLinkBuilder>(mem_, board_, first, second, options_);
    }
    return *link;
}

StreamEnds EdmTransport::add_stream(const StreamSpec& s) {
    if (const std::string why = cannot_connect(s); !why.empty()) throw Error("the EDM cannot carry " + why);
    const CableKey key = cable_of(s);
    EdmLinkBuilder& link = link_for(key);
    const int from_end = end_key(s.chip, s.port) == key.first ? 0 : 1;
    const ChannelInterface tx = link.add_sender_channel(from_end, {s.sender_core}, s.messages);
    const ChannelInterface rx = link.add_receiver_channel(tx.id, {s.receiver_core});
    StreamEnds ends;
    ends.sender = {abi::kTransportEdm, 0, tx.senders.at(0).connection};
    ends.receiver = {abi::kTransportEdm, 0, rx.receivers.at(0).connection};
    return ends;
}

size_t EdmTransport::channels_on(uint32_t chip, uint32_t port) const {
    for (const auto& [key, link] : links_)
        if (key.first == end_key(chip, port) || key.second == end_key(chip, port)) return link->channels();
    return 0;
}

void EdmTransport::write(ChipWriter& memory) const {
    for (const auto& [key, link] : links_) link->write(memory);
}

std::vector<Launch> EdmTransport::launches() const {
    std::vector<Launch> out;
    for (const auto& [key, link] : links_) {
        out.push_back(link->edm_launch(0));
        out.push_back(link->edm_launch(1));
    }
    return out;
}

}  // namespace weft::transport
