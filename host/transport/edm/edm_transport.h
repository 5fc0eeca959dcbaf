// The EDM as a transport (tt-metal's CCL developer guide): every stream crosses one cable, carried
// by an EDM channel between the ERISC cores at the cable's two ends; a
// message for a chip further away is forwarded by a worker on every chip
// between (CableRouting). One EdmTransport places one op: an EDM link per
// cable its streams use, both directions together, launched beside the
// workers and ended by message count.
#pragma once
#include <map>
#include <memory>

#include "transport/cable_routing.h"
#include "transport/edm/edm_builder.h"

namespace weft::transport {

class EdmTransport final : public Transport {
public:
    EdmTransport(const Topology& topo, const BoardInfo& board, L1Allocator& mem, const EdmOptions& options);

    uint32_t chips() const override { return routing_.chips(); }
    const std::vector<Hop>& worker_hops(uint32_t from, uint32_t to) const override {
        return routing_.worker_hops(from, to);
    }
    const std::vector<Hop>& parallel(uint32_t from, uint32_t to) const override { return routing_.parallel(from, to); }
    const Hop& hop_at(uint32_t chip, uint32_t port) const override { return routing_.hop_at(chip, port); }
    uint32_t max_parallel() const override { return routing_.max_parallel(); }

    std::string name() const override { return "edm"; }
    uint32_t message_bytes() const override { return options_.slot_size; }
    std::string cannot_connect(const StreamSpec& s) const override;
    StreamEnds add_stream(const StreamSpec& s) override;
    void write(ChipWriter& memory) const override;
    std::vector<Launch> launches() const override;

    // EDM channels on the cable of (chip, port), both directions.
    size_t channels_on(uint32_t chip, uint32_t port) const;

private:
    using CableKey = std::pair<uint64_t, uint64_t>;  // its two ends, (chip << 32 | port), lower first
    static CableKey cable_of(const StreamSpec& s);
    EdmLinkBuilder& link_for(const CableKey& key);

    CableRouting routing_;
    const BoardInfo& board_;
    L1Allocator& mem_;
    EdmOptions options_;
    std::map<CableKey, std::unique_ptr<EdmLinkBuilder>> links_;
};

}  // namespace weft::transport
