// The fabric's multicast, the capability FabricTransport offers the
// collectives (transport.h): each chip's block goes out as one multicast
// packet stream each way and the routers copy it off at every chip of the
// run (tt-metal's fabric all-gather), one fabric_multicast kernel per chip.
// On a 1D fabric only: a 2D fabric's rows reach one line of chips.
#pragma once
#include <vector>

#include "driver/memory_image.h"
#include "transport/fabric/fabric_builder.h"
#include "transport/transport.h"

namespace weft::transport {

// Where `chip`'s multicast goes each way ([0] forward, [1] backward): how
// many chips (0: none that way) and the first of them. A line's chips on
// either side; on a ring, half of the others forward and the rest backward.
struct MulticastReach {
    uint8_t count[2] = {0, 0};
    uint16_t first_chip[2] = {0, 0};
};
MulticastReach multicast_reach(const FabricBuilder& fabric, uint32_t chip);

class FabricMulticast final : public Multicast {
public:
    // Places into `image` and `mem`, those of the transport that owns it.
    FabricMulticast(const FabricBuilder& fabric, const BoardInfo& board, L1Allocator& mem, MemoryImage& image)
        : fabric_(fabric), board_(board), mem_(mem), image_(image) {}

    void add_multicast(const std::vector<MulticastPart>& parts) override;
    const std::vector<Launch>& launches() const { return launches_; }

private:
    uint64_t place_semaphore(uint32_t chips, uint32_t core);
    abi::FabricMulticastArgs args_of(uint32_t chip, const MulticastPart& part, uint32_t core, uint64_t sem);

    const FabricBuilder& fabric_;
    const BoardInfo& board_;
    L1Allocator& mem_;
    MemoryImage& image_;
    std::vector<Launch> launches_;
};

}  // namespace weft::transport
