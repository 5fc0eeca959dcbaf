// The fabric as the collectives' transport: every stream goes straight from
// its sender worker to its receiver worker, however far apart, carried by the
// routers of a running fabric (fabric.h), 1D or 2D; no worker on a chip between
// forwards it, and no kernel runs beside the workers. A worker's "port" for a
// peer is a virtual one, kFabricPortBase + plane * chips + the peer's chip
// id, so the lowering keeps one sender and one receiver worker per peer and
// lane. Over several planes (a fabric each, on its own cables and ERISC
// cores) every pair is one hop apart on each: the lowering stripes a
// transfer's pieces over them, as the EDM's over a board's parallel cables.
#pragma once
#include <stdint.h>

#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "driver/memory_image.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/fabric/fabric_multicast.h"
#include "transport/transport.h"

namespace weft::transport {

inline constexpr uint32_t kFabricPortBase = 0x100;
// The worker serving every virtual port behind one router: + plane *
// kFabricDirections + the FabricDirection.
inline constexpr uint32_t kFabricWorkerPortBase = 0x10000;

// Every pair of fabric chips is one hop apart, on every plane. Asked from one
// thread (its cache of the pairs asked for is not locked).
class FabricRouting final : public Routing {
public:
    explicit FabricRouting(const FabricBuilder& fabric) : FabricRouting(std::vector<const FabricBuilder*>{&fabric}) {}
    // One fabric per plane, plane 0 first, all over the same chips.
    explicit FabricRouting(std::vector<const FabricBuilder*> planes);
    uint32_t chips() const override { return chips_; }
    const std::vector<Hop>& worker_hops(uint32_t from, uint32_t to) const override;
    // The hop on each plane, by plane.
    const std::vector<Hop>& parallel(uint32_t from, uint32_t to) const override;
    const Hop& hop_at(uint32_t chip, uint32_t port) const override;
    uint32_t max_parallel() const override { return static_cast<uint32_t>(planes_.size()); }
    // One worker per router direction and plane: every peer that way shares it.
    uint32_t worker_port(uint32_t chip, uint32_t port) const override;
    uint32_t cables_crossed(const Hop& hop) const override {
        return fabric_of(hop.from_port).route(hop.from_chip, hop.to_chip).hops;
    }
    // Which of the fabrics (its index, 0 the first given) a virtual port of
    // this routing's hops is on; throws weft::Error for another port.
    uint32_t plane_of(uint32_t port) const;
    const FabricBuilder& fabric_of(uint32_t port) const { return *planes_[plane_of(port)]; }

private:
    // A pair's hops: one a plane, and the first plane's alone (its worker hop).
    struct PairHops {
        std::vector<Hop> by_plane, first;
    };
    // The pair's hops, or null (the same chip, or one the fabric does not span).
    const PairHops* hops(uint32_t from, uint32_t to) const;

    std::vector<const FabricBuilder*> planes_;
    uint32_t chips_ = 0;
    std::vector<bool> spans_;  // by chip: the fabric's
    // The pairs asked for so far, by from << 32 | to: an op asks for a few
    // a chip, and a fabric of thousands of chips must not keep every pair.
    mutable std::unordered_map<uint64_t, PairHops> asked_;
};

struct FabricStreamOptions {
    uint32_t slots = 8;              // messages in flight per stream
    uint32_t message_bytes = 16384;  // at most one fabric packet's payload
};

class FabricTransport final : public Transport {
public:
    // `fabric` must be running while the op does.
    FabricTransport(const FabricBuilder& fabric, const BoardInfo& board, L1Allocator& mem, FabricStreamOptions options)
        : FabricTransport(std::vector<const FabricBuilder*>{&fabric}, board, mem, options) {}
    // A fabric per plane, plane 0 first (it alone carries multicasts): streams
    // go over the plane of their virtual port.
    FabricTransport(std::vector<const FabricBuilder*> planes, const BoardInfo& board, L1Allocator& mem,
                    FabricStreamOptions options);

    uint32_t chips() const override { return routing_.chips(); }
    const std::vector<Hop>& worker_hops(uint32_t from, uint32_t to) const override {
        return routing_.worker_hops(from, to);
    }
    const std::vector<Hop>& parallel(uint32_t from, uint32_t to) const override { return routing_.parallel(from, to); }
    const Hop& hop_at(uint32_t chip, uint32_t port) const override { return routing_.hop_at(chip, port); }
    uint32_t max_parallel() const override { return routing_.max_parallel(); }
    uint32_t worker_port(uint32_t chip, uint32_t port) const override { return routing_.worker_port(chip, port); }
    uint32_t cables_crossed(const Hop& hop) const override { return routing_.cables_crossed(hop); }

    std::string name() const override { return "fabric"; }
    uint32_t message_bytes() const override { return options_.message_bytes; }
    std::string cannot_connect(const StreamSpec& s) const override;
    StreamEnds add_stream(const StreamSpec& s) override;
    void write(ChipWriter& memory) const override { image_.apply(memory); }
    // Streams need none; a multicast, its own.
    std::vector<Launch> launches() const override { return multicast_.launches(); }
    Multicast* multicast() override { return &multicast_; }

private:
    // This worker's connection to its router toward `peer` on `fabric`'s
    // plane: one per core, plane and direction.
    uint64_t connection(const FabricBuilder& fabric, uint32_t plane, uint32_t chip, uint32_t core, uint32_t peer);
    uint32_t lane_of(uint32_t core) const;
    uint64_t place_end(uint32_t chip, uint32_t core, const abi::FabricStreamEnd& end);

    const FabricBuilder& fabric_;
    const BoardInfo& board_;
    L1Allocator& mem_;
    FabricStreamOptions options_;
    FabricRouting routing_;
    MemoryImage image_;
    // (chip, core, plane * kFabricDirections + direction)
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t> connections_;
    FabricMulticast multicast_{fabric_, board_, mem_, image_};
};

}  // namespace weft::transport
