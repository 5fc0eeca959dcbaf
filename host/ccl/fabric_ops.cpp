#include "ccl/fabric_ops.h"

#include <algorithm>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "transport/l1_allocator.h"

namespace weft::ccl {
namespace {

using transport::FabricDirection;

// The chips a multicast from `chip` reaches each way: all of a line's chips
// on either side; on a ring, half of the others forward and the rest backward.
std::pair<uint32_t, uint32_t> reach(const transport::FabricBuilder& f, uint32_t chip) {
    const uint32_t n = static_cast<uint32_t>(f.order().size()), p = f.position(chip);
    if (!f.ring()) return {n - 1 - p, p};
    const uint32_t forward = n / 2;
    return {forward, n - 1 - forward};
}

uint32_t neighbour(const transport::FabricBuilder& f, uint32_t chip, FabricDirection d) {
    const std::vector<uint32_t>& order = f.order();
    const uint32_t n = static_cast<uint32_t>(order.size()), p = f.position(chip);
    return order[(d == FabricDirection::kForward ? p + 1 : p + n - 1) % n];
}

}  // namespace

const std::vector<std::string>& fabric_algorithms(Collective c) {
    static const std::vector<std::string> multicast = {"multicast"}, none;
    return c == Collective::kAllGather || c == Collective::kBroadcast ? multicast : none;
}

bool is_fabric_algorithm(Collective c, const std::string& algo) {
    const auto& a = fabric_algorithms(c);
    return std::find(a.begin(), a.end(), algo) != a.end();
}

double run_fabric_multicast(Cluster& cluster, const transport::Fabric& running, const OpRequest& r, const OpLayout& l,
                            std::chrono::milliseconds timeout) {
    const transport::FabricBuilder& fabric = running.builder();
    if (l.outer != 1) throw Error("the multicast all-gather gathers whole blocks: use ring along an inner dimension");
    if (fabric.dims() != 1)
        throw Error("the multicast algorithms run on a 1D fabric (its rows reach one line of chips); this cluster's "
                    "fabric is 2D: set the cluster file's fabric: topology to ring or line, or use another algorithm");
    const uint32_t n = l.ranks;
    const BoardInfo& board = cluster.board();
    const uint32_t core = board.worker_core(0);
    transport::L1Allocator l1(board);
    std::vector<abi::FabricMulticastArgs> args(n);
    uint64_t sem = 0;
    for (uint32_t c = 0; c < n; ++c) {
        const uint64_t s = l1.allocate(c, core, 4, 64, "multicast semaphore");
        if (c && s != sem) throw Error("internal: the multicast semaphore is not at one address on every chip");
        sem = s;
        cluster.clear(c, sem, 4);
    }
    for (uint32_t c = 0; c < n; ++c) {
        abi::FabricMulticastArgs& a = args[c];
        a = abi::FabricMulticastArgs{};
        a.sem = sem;
        const bool sends = r.op == Collective::kAllGather || c == r.root;
        const uint64_t bytes = r.op == Collective::kAllGather ? l.block_elems[c] * l.element : l.elements * l.element;
        if (bytes > 0xffffffffull) throw Error("a multicast block of " + std::to_string(bytes) + " bytes is too large");
        a.bytes = static_cast<uint32_t>(bytes);
        a.src = r.op == Collective::kAllGather ? l.own_input(c).base : l.input;  // broadcast: the root's vector
        a.dst = r.op == Collective::kAllGather ? l.output_block(c).base : l.output;
        a.local_dst = sends ? a.dst : 0;
        a.expect = r.op == Collective::kAllGather ? n - 1 : (c == r.root ? 0 : 1);
        if (!sends) continue;
        const auto [forward, backward] = reach(fabric, c);
        const uint8_t count[2] = {static_cast<uint8_t>(forward), static_cast<uint8_t>(backward)};
        for (uint32_t d = 0; d < 2; ++d) {
            if (!count[d]) continue;
            const FabricDirection dir = d == 0 ? FabricDirection::kForward : FabricDirection::kBackward;
            a.count[d] = count[d];
            a.first_chip[d] = static_cast<uint16_t>(neighbour(fabric, c, dir));
            a.connection[d] = fabric.connect(cluster, l1, c, dir, 0, core);
        }
    }
    std::vector<Launch> launches;
    const KernelImage& image = kernel_named(board, "fabric_multicast");
    for (uint32_t c = 0; c < n; ++c) launches.push_back({c, core, &image, KernelArgWords::of(args[c])});
    const auto t0 = std::chrono::steady_clock::now();
    const auto launched = cluster.launch_all(launches);
    cluster.wait_all(launched, timeout, [&] { return running.fault(); });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace weft::ccl
