#include "transport/fabric/fabric_multicast.h"

#include "common/error.h"
#include "driver/cluster.h"
#include "driver/kernel_args.h"

namespace weft::transport {
namespace {

// The chips a multicast from `chip` reaches each way: all of a line's chips
// on either side; on a ring, half of the others forward and the rest backward.
std::pair<uint32_t, uint32_t> reach(const FabricBuilder& f, uint32_t chip) {
    const uint32_t n = static_cast<uint32_t>(f.order().size()), p = f.position(chip);
    if (!f.ring()) return {n - 1 - p, p};
    const uint32_t forward = n / 2;
    return {forward, n - 1 - forward};
}

uint32_t neighbour(const FabricBuilder& f, uint32_t chip, FabricDirection d) {
    const std::vector<uint32_t>& order = f.order();
    const uint32_t n = static_cast<uint32_t>(order.size()), p = f.position(chip);
    return order[(d == FabricDirection::kForward ? p + 1 : p + n - 1) % n];
}

}  // namespace

MulticastReach multicast_reach(const FabricBuilder& f, uint32_t chip) {
    MulticastReach r;
    const auto [forward, backward] = reach(f, chip);
    const uint32_t count[2] = {forward, backward};
    for (uint32_t d = 0; d < 2; ++d) {
        if (!count[d]) continue;
        r.count[d] = static_cast<uint8_t>(count[d]);
        r.first_chip[d] = static_cast<uint16_t>(
            neighbour(f, chip, d == 0 ? FabricDirection::kForward : FabricDirection::kBackward));
    }
    return r;
}

// Every chip's kernel counts the blocks landed on it in one semaphore, which
// the senders address without knowing each chip's layout: one address on all.
uint64_t FabricMulticast::place_semaphore(uint32_t chips, uint32_t core) {
    uint64_t sem = 0;
    for (uint32_t c = 0; c < chips; ++c) {
        const uint64_t s = mem_.allocate(c, core, 4, 64, "multicast semaphore");
        if (c && s != sem) throw Error("internal: the multicast semaphore is not at one address on every chip");
        sem = s;
        image_.clear(c, sem, 4);
    }
    return sem;
}

abi::FabricMulticastArgs FabricMulticast::args_of(uint32_t chip, const MulticastPart& part, uint32_t core,
                                                  uint64_t sem) {
    abi::FabricMulticastArgs a{};
    a.sem = sem;
    a.bytes = part.bytes;
    a.src = part.src;
    a.dst = part.dst;
    a.local_dst = part.sends ? part.dst : 0;
    a.expect = part.expect;
    if (!part.sends) return a;
    const MulticastReach reach = multicast_reach(fabric_, chip);
    for (uint32_t d = 0; d < 2; ++d) {
        if (!reach.count[d]) continue;
        const FabricDirection dir = d == 0 ? FabricDirection::kForward : FabricDirection::kBackward;
        a.count[d] = reach.count[d];
        a.first_chip[d] = reach.first_chip[d];
        a.connection[d] = fabric_.connect(image_, mem_, chip, dir, 0, core);
    }
    return a;
}

void FabricMulticast::add_multicast(const std::vector<MulticastPart>& parts) {
    if (fabric_.dims() != 1)
        throw Error("the multicast algorithms run on a 1D fabric (its rows reach one line of chips); this cluster's "
                    "fabric is 2D: set the cluster file's fabric: topology to ring or line, or use another algorithm");
    const auto chips = static_cast<uint32_t>(fabric_.order().size());
    if (parts.size() != chips)
        throw Error("internal: a multicast of " + std::to_string(parts.size()) + " parts over a fabric of " +
                    std::to_string(chips) + " chips");
    const uint32_t core = board_.worker_core(0);  // the routers' lane 0 is the first worker core's
    const uint64_t sem = place_semaphore(chips, core);
    const KernelImage& image = kernel_named(board_, "fabric_multicast");
    for (uint32_t c = 0; c < chips; ++c)
        launches_.push_back({c, core, &image, KernelArgWords::of(args_of(c, parts[c], core, sem))});
}

}  // namespace weft::transport
