#include "tensor/tensor_ops.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "tensor/tensor_layout.h"
#include "transport/l1_allocator.h"

namespace weft::tensor {
namespace {

// Whether `core` holds a shard of `t` (its unit's L1).
bool holds_shard(const BoardInfo& board, const abi::TensorAt& t, uint32_t core) {
    if (!abi::tensor_sharded(t.spec)) return false;
    const std::vector<uint32_t> workers = board.cores_with_role(CoreRole::kWorker);
    for (uint32_t u = 0; u < abi::tensor_units(t.spec) && u < workers.size(); ++u)
        if (workers[u] == core) return true;
    return false;
}

// Refuses a kernel core that holds a shard of either tensor: the kernel's
// L1 would overlap it.
void check_kernel_core(const BoardInfo& board, const abi::TensorAt& input, const abi::TensorAt& output, uint32_t core,
                       const std::string& op) {
    if (holds_shard(board, input, core) || holds_shard(board, output, core))
        throw Error(op + ": core " + std::to_string(core) + " holds a shard; run it on another worker");
}

// The route a tensor kernel on `from` takes to `to` (kernels/tensor_peer.h reads it).
abi::TensorPeerRoute peer_route(const transport::FabricBuilder& f, uint32_t from, uint32_t to) {
    const transport::FabricRoute r = f.route(from, to);
    return {static_cast<uint16_t>(f.node(to).mesh), f.node(to).chip, f.connection_slot(r.direction),
            static_cast<uint8_t>(r.hops), abi::kFabricDefaultTtl, 0, r.route};
}

// Rank `rank` of `chips`' tensor_all_gather by `algo`: its connections
// both (or all four) ways, its semaphores cleared, its route to every peer.
Launch gather_launch(Cluster& cluster, const transport::FabricBuilder& f, transport::L1Allocator& l1,
                     const std::vector<uint32_t>& chips, uint32_t rank, abi::TensorGatherAlgo algo,
                     const abi::TensorAt& input, const abi::TensorAt& output, uint32_t dim, uint32_t core) {
    const uint32_t chip = chips[rank];
    abi::TensorAllGatherArgs a{};
    a.input = input, a.output = output, a.rank = rank, a.ranks = static_cast<uint32_t>(chips.size()), a.dim = dim;
    a.algo = algo;
    a.done_sem = l1.allocate(chip, core, 8, 64, "all_gather's semaphores");
    cluster.chip(chip).write32(a.done_sem, 0);
    cluster.chip(chip).write32(a.done_sem + 4, 0);
    f.connect_every_way(cluster, l1, chip, 0, core, a.connection);
    for (uint32_t k = 0; k < chips.size(); ++k)
        if (k != rank) a.peers[k] = peer_route(f, chip, chips[k]);
    return {chip, core, &kernel_named(cluster.board(), "tensor_all_gather"), KernelArgWords::of(a)};
}

// Throws unless every page of every rank's part lands inside one page of
// `whole`, and together they fill it without overlap.
// `part_name` and `whole_name` say what they are in the message.
void check_pages_fit(const std::string& what, const abi::TensorSpec& part, const abi::TensorSpec& whole, uint32_t dim,
                     uint32_t ranks, const std::string& hint, const std::string& part_name,
                     const std::string& whole_name) {
    const uint64_t pb = abi::page_bytes(whole);
    std::vector<std::pair<uint64_t, uint64_t>> spans;  // (first byte in the whole's pages, bytes)
    for (uint32_t k = 0; k < ranks; ++k)
        for (uint64_t p = 0; p < abi::tensor_pages(part); ++p) {
            const abi::GatheredPage g = abi::gathered_page(part, whole, dim, k, p);
            if (g.page >= abi::tensor_pages(whole) || g.offset + uint64_t(g.bytes) > pb)
                throw Error(what + ": a page of " + part_name + " does not fit inside one page of " + whole_name +
                            hint);
            spans.push_back({g.page * pb + g.offset, g.bytes});
        }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
        if (spans[i - 1].first + spans[i - 1].second > spans[i].first)
            throw Error(what + ": two parts' pages land on the same bytes" + hint);
}

}  // namespace

abi::TensorSpec gathered(const abi::TensorSpec& part, uint32_t dim, uint32_t ranks, abi::TensorSpec memory) {
    if (dim >= abi::kTensorDims) throw Error("all_gather: dimension " + std::to_string(dim) + " of a 4-D tensor");
    std::copy(std::begin(part.shape), std::end(part.shape), memory.shape);
    memory.shape[dim] *= ranks;
    memory.dtype = part.dtype;
    memory.layout = part.layout;
    return memory;
}

void check_all_gather(const abi::TensorSpec& part, const abi::TensorSpec& whole, uint32_t dim, uint32_t ranks) {
    // The kernel keeps a peer table of kTensorMaxPeers (abi::TensorAllGatherArgs).
    if (ranks < 2 || ranks > abi::kTensorMaxPeers)
        throw Error("the tensor all_gather spans 2 to " + std::to_string(abi::kTensorMaxPeers) +
                    " chips (abi::kTensorMaxPeers), not " + std::to_string(ranks) +
                    (ranks < 2 ? "" : ": gather over fewer (--mesh-axis on a mesh)"));
    check_spec(part);
    check_spec(whole);
    const std::string what = "all_gather of " + describe(part) + " along dimension " + std::to_string(dim) +
                             " into " + describe(whole);
    if (dim >= abi::kTensorDims || whole.dtype != part.dtype || whole.layout != part.layout)
        throw Error(what + ": the gathered tensor must have the part's dtype and page layout");
    for (uint32_t d = 0; d < abi::kTensorDims; ++d)
        if (whole.shape[d] != part.shape[d] * (d == dim ? ranks : 1))
            throw Error(what + ": its shape must be the part's with dimension " + std::to_string(dim) + " times " +
                        std::to_string(ranks));
    const std::string hint = whole.layout == abi::kTilePages && dim >= 2
                                 ? " (with tiles the part's dimension " + std::to_string(dim) + " must be a multiple of 32)"
                                 : "";
    check_pages_fit(what, part, whole, dim, ranks, hint, "the part", "the gathered tensor");
}

void check_reduce_scatter(const abi::TensorSpec& whole, const abi::TensorSpec& part, uint32_t dim, uint32_t ranks) {
    check_spec(whole);
    check_spec(part);
    const std::string what = "reduce_scatter of " + describe(whole) + " along dimension " + std::to_string(dim) +
                             " into " + describe(part) + " a chip";
    if (ranks < 2) throw Error(what + ": it spans at least 2 chips, not " + std::to_string(ranks));
    if (dim >= abi::kTensorDims || whole.dtype != part.dtype || whole.layout != part.layout)
        throw Error(what + ": each chip's part must have the tensor's dtype and page layout");
    if (whole.shape[dim] % ranks)
        throw Error(what + ": dimension " + std::to_string(dim) + " (" + std::to_string(whole.shape[dim]) +
                    ") does not divide among " + std::to_string(ranks) + " chips");
    for (uint32_t d = 0; d < abi::kTensorDims; ++d)
        if (part.shape[d] * (d == dim ? ranks : 1) != whole.shape[d])
            throw Error(what + ": a part's shape must be the tensor's with dimension " + std::to_string(dim) +
                        " divided by " + std::to_string(ranks));
    const std::string hint = whole.layout == abi::kTilePages && dim >= 2
                                 ? " (with tiles a part's dimension " + std::to_string(dim) +
                                       " must be a multiple of 32)"
                                 : "";
    check_pages_fit(what, part, whole, dim, ranks, hint, "a chip's part", "the tensor");
}

void check_send_recv(const abi::TensorSpec& sent, const abi::TensorSpec& received) {
    check_spec(sent);
    check_spec(received);
    const std::string what = "send_recv of " + describe(sent) + " into " + describe(received);
    if (received.dtype != sent.dtype || received.layout != sent.layout ||
        !std::equal(std::begin(sent.shape), std::end(sent.shape), std::begin(received.shape)))
        throw Error(what + ": the received tensor must have the sent one's shape, dtype and page layout");
    check_pages_fit(what, sent, received, 0, 1, "", "the sent tensor", "the received one");
}

// Round a ring, else along a line, where it can: on a ring of 8, sending
// each page straight to every peer puts 10 parts on each cable forward
// (1 + 2 + 3 + 4 hops), the ring 3.5 each way; on a line of 4, straight puts
// 4 parts on its middle cable each way, the line 2.
abi::TensorGatherAlgo gather_algo(const transport::FabricBuilder& f, const std::vector<uint32_t>& chips) {
    const size_t n = chips.size();
    if (n < 3) return abi::kGatherDirect;
    uint64_t cables = 0;  // both ways round the ring, the wrap included
    bool one_hop = true, wraps = false;
    for (size_t r = 0; r < n; ++r) {
        const uint32_t a = chips[r], b = chips[(r + 1) % n];
        const uint32_t there = f.route(a, b).hops, back = f.route(b, a).hops;
        cables += there + back;
        const bool neighbours = there == 1 && back == 1;
        if (r + 1 < n) one_hop = one_hop && neighbours;
        else
            wraps = neighbours;
    }
    if (one_hop) return wraps ? abi::kGatherRing : abi::kGatherLine;
    return cables <= 4 * n ? abi::kGatherRing : abi::kGatherDirect;
}

void all_gather(Cluster& cluster, transport::Fabric& fabric, const std::vector<uint32_t>& chips,
                const abi::TensorAt& input, const abi::TensorAt& output, uint32_t dim, uint32_t core,
                std::chrono::milliseconds timeout) {
    all_gather_groups(cluster, fabric, {chips}, input, output, dim, core, timeout);
}

void send_recv(Cluster& cluster, transport::Fabric& fabric, uint32_t from, uint32_t to, const abi::TensorAt& input,
               const abi::TensorAt& output, uint32_t core, std::chrono::milliseconds timeout) {
    send_recv(cluster, fabric, {{from, to}}, input, output, core, timeout);
}

void send_recv(Cluster& cluster, transport::Fabric& fabric, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
               const abi::TensorAt& input, const abi::TensorAt& output, uint32_t core,
               std::chrono::milliseconds timeout) {
    const BoardInfo& board = cluster.board();
    check_kernel_core(board, input, output, core, "send_recv");
    check_send_recv(input.spec, output.spec);
    std::map<uint32_t, abi::TensorSendRecvArgs> ends;  // by chip
    for (const auto& [from, to] : pairs) {
        const std::string pair = "send_recv from chip " + std::to_string(from) + " to chip " + std::to_string(to);
        if (from >= cluster.size() || to >= cluster.size() || from == to)
            throw Error(pair + ": two different chips of the " + std::to_string(cluster.size()));
        if (ends[from].role & abi::kTensorSend) throw Error(pair + ": chip " + std::to_string(from) + " sends twice");
        if (ends[to].role & abi::kTensorReceive) throw Error(pair + ": chip " + std::to_string(to) + " receives twice");
        ends[from].role |= abi::kTensorSend;
        ends[to].role |= abi::kTensorReceive;
    }
    transport::L1Allocator l1(board);
    for (auto& [chip, a] : ends) {
        a.input = input, a.output = output;
        if (!(a.role & abi::kTensorReceive)) continue;
        a.done_sem = l1.allocate(chip, core, 8, 64, "send_recv's semaphore");
        cluster.chip(chip).write32(a.done_sem, 0);
    }
    const transport::FabricBuilder& f = fabric.builder();
    for (const auto& [from, to] : pairs) {
        abi::TensorSendRecvArgs& a = ends[from];
        a.peer_sem = ends[to].done_sem;
        f.connect_every_way(cluster, l1, from, 0, core, a.connection);
        a.peer = peer_route(f, from, to);
    }
    std::vector<Launch> launches;
    for (const auto& [chip, a] : ends)
        launches.push_back({chip, core, &kernel_named(board, "tensor_send_recv"), KernelArgWords::of(a)});
    cluster.run(launches, timeout);
}

std::vector<std::vector<uint32_t>> mesh_axis_groups(const ClusterTopology& topology, MeshAxis axis) {
    const auto& meshes = topology.meshes();
    if (meshes.size() != 1 || (meshes[0].topology != "mesh" && meshes[0].topology != "torus"))
        throw Error("a mesh axis needs a cluster of one 2D mesh or torus");
    const Mesh& m = meshes[0];
    const bool rows = axis == MeshAxis::kRows;
    std::vector<std::vector<uint32_t>> groups(rows ? m.height : m.width);
    for (uint32_t y = 0; y < m.height; ++y)
        for (uint32_t x = 0; x < m.width; ++x) groups[rows ? y : x].push_back(m.first_chip + y * m.width + x);
    return groups;
}

void all_gather_groups(Cluster& cluster, transport::Fabric& fabric, const std::vector<std::vector<uint32_t>>& groups,
                       const abi::TensorAt& input, const abi::TensorAt& output, uint32_t dim, uint32_t core,
                       std::chrono::milliseconds timeout) {
    const BoardInfo& board = cluster.board();
    check_kernel_core(board, input, output, core, "all_gather");
    transport::L1Allocator l1(board);
    std::vector<Launch> launches;
    for (const std::vector<uint32_t>& chips : groups) {
        const uint32_t ranks = static_cast<uint32_t>(chips.size());
        check_all_gather(input.spec, output.spec, dim, ranks);
        const abi::TensorGatherAlgo algo = gather_algo(fabric.builder(), chips);
        for (uint32_t rank = 0; rank < ranks; ++rank)
            launches.push_back(
                gather_launch(cluster, fabric.builder(), l1, chips, rank, algo, input, output, dim, core));
    }
    cluster.run(launches, timeout);
}

}  // namespace weft::tensor
