#include "transport/fabric/fabric_transport.h"

#include <algorithm>

#include "common/error.h"
#include "common/names.h"

namespace weft::transport {

FabricRouting::FabricRouting(std::vector<const FabricBuilder*> planes) : planes_(std::move(planes)) {
    if (planes_.empty()) throw Error("internal: a fabric routing over no plane");
    const std::vector<uint32_t>& order = planes_[0]->order();
    for (const FabricBuilder* p : planes_)
        if (p->order().size() != order.size() || !std::is_permutation(order.begin(), order.end(), p->order().begin()))
            throw Error("internal: a fabric's planes span different chips");
    chips_ = order.empty() ? 0 : *std::max_element(order.begin(), order.end()) + 1;
    spans_.assign(chips_, false);
    for (uint32_t c : order) spans_[c] = true;
}

const FabricRouting::PairHops* FabricRouting::hops(uint32_t from, uint32_t to) const {
    if (from >= chips_ || to >= chips_ || from == to || !spans_[from] || !spans_[to]) return nullptr;
    PairHops& pair = asked_[uint64_t(from) << 32 | to];
    if (pair.by_plane.empty()) {
        for (uint32_t p = 0; p < planes_.size(); ++p)
            pair.by_plane.push_back(
                Hop{from, kFabricPortBase + p * chips_ + to, to, kFabricPortBase + p * chips_ + from});
        pair.first = {pair.by_plane.front()};
    }
    return &pair;
}

const std::vector<Hop>& FabricRouting::parallel(uint32_t from, uint32_t to) const {
    static const std::vector<Hop> kNone;
    const PairHops* pair = hops(from, to);
    return pair ? pair->by_plane : kNone;
}

const std::vector<Hop>& FabricRouting::worker_hops(uint32_t from, uint32_t to) const {
    const PairHops* pair = hops(from, to);
    if (!pair) throw Error("the fabric does not join " + chip_name(from) + " and " + chip_name(to));
    return pair->first;
}

uint32_t FabricRouting::plane_of(uint32_t port) const {
    const uint32_t plane = port < kFabricPortBase || !chips_ ? UINT32_MAX : (port - kFabricPortBase) / chips_;
    if (plane >= planes_.size()) throw Error("no fabric port " + std::to_string(port));
    return plane;
}

const Hop& FabricRouting::hop_at(uint32_t chip, uint32_t port) const {
    if (port < kFabricPortBase) throw Error(chip_name(chip) + " has no fabric port " + std::to_string(port));
    const uint32_t plane = plane_of(port);
    const PairHops* pair = hops(chip, (port - kFabricPortBase) % chips_);
    if (!pair) throw Error(chip_name(chip) + " has no fabric port " + std::to_string(port));
    return pair->by_plane[plane];
}

uint32_t FabricRouting::worker_port(uint32_t chip, uint32_t port) const {
    const Hop& h = hop_at(chip, port);
    const uint32_t plane = plane_of(port);
    return kFabricWorkerPortBase + plane * kFabricDirections +
           static_cast<uint32_t>(planes_[plane]->route(chip, h.to_chip).direction);
}

FabricTransport::FabricTransport(std::vector<const FabricBuilder*> planes, const BoardInfo& board, L1Allocator& mem,
                                 FabricStreamOptions options)
    : fabric_(*planes.at(0)), board_(board), mem_(mem), options_(options), routing_(std::move(planes)) {
    const uint32_t payload = fabric_.spec().payload_bytes();
    if (options_.message_bytes == 0 || options_.message_bytes > payload)
        throw Error("a fabric stream's message of " + std::to_string(options_.message_bytes) +
                    " bytes does not fit the fabric's " + std::to_string(payload) + "-byte packets");
    if (options_.slots == 0) throw Error("a fabric stream needs at least one slot");
}

std::string FabricTransport::cannot_connect(const StreamSpec& s) const {
    const std::string what = chip_name(s.chip) + " -> " + chip_name(s.peer_chip);
    try {
        const Hop& h = routing_.hop_at(s.chip, s.port);
        if (h.to_chip != s.peer_chip || h.to_port != s.peer_port) return what + ": not the fabric ports of this pair";
    } catch (const Error& e) {
        return what + ": " + e.what();
    }
    for (uint32_t core : {s.sender_core, s.receiver_core}) {
        const uint32_t lane = lane_of(core);
        if (lane == board_.cores_with_role(CoreRole::kWorker).size())
            return what + ": core " + std::to_string(core) + " is not a worker core of board " + board_.name;
        if (lane >= fabric_.spec().lanes)
            return what + ": worker core " + std::to_string(core) + " has no lane of its own on the routers (" +
                   std::to_string(fabric_.spec().lanes) + " lanes)";
    }
    return "";
}

uint64_t FabricTransport::connection(const FabricBuilder& fabric, uint32_t plane, uint32_t chip, uint32_t core,
                                     uint32_t peer) {
    const FabricDirection d = fabric.route(chip, peer).direction;
    uint64_t& at = connections_[{chip, core, plane * kFabricDirections + static_cast<uint32_t>(d)}];
    if (!at) at = fabric.connect(image_, mem_, chip, d, lane_of(core), core);
    return at;
}

// A worker core's lane on every router: its index among the board's worker
// cores (their count if it is none of them).
uint32_t FabricTransport::lane_of(uint32_t core) const {
    const std::vector<uint32_t> workers = board_.cores_with_role(CoreRole::kWorker);
    return static_cast<uint32_t>(std::find(workers.begin(), workers.end(), core) - workers.begin());
}

uint64_t FabricTransport::place_end(uint32_t chip, uint32_t core, const abi::FabricStreamEnd& end) {
    const uint64_t at = mem_.allocate(chip, core, sizeof end, 64, "fabric stream end");
    image_.write(chip, at, &end, sizeof end);
    return at;
}

StreamEnds FabricTransport::add_stream(const StreamSpec& s) {
    if (const std::string why = cannot_connect(s); !why.empty()) throw Error("the fabric cannot carry " + why);
    const uint64_t ring = uint64_t(options_.slots) * options_.message_bytes;
    const uint64_t landing = mem_.allocate(s.peer_chip, s.receiver_core, ring, 64, "fabric stream landing slots");
    const uint64_t filled = mem_.allocate(s.peer_chip, s.receiver_core, 4, 64, "fabric stream counter");
    const uint64_t staging = mem_.allocate(s.chip, s.sender_core, ring, 64, "fabric stream staging slots");
    const uint64_t credits = mem_.allocate(s.chip, s.sender_core, 4, 64, "fabric stream credits");
    image_.clear(s.peer_chip, filled, 4);
    image_.clear(s.chip, credits, 4);
    const uint32_t plane = routing_.plane_of(s.port);
    const FabricBuilder& fabric = routing_.fabric_of(s.port);  // the stream's plane

    abi::FabricStreamEnd tx{};
    tx.connection = connection(fabric, plane, s.chip, s.sender_core, s.peer_chip);
    tx.buffer = staging;
    tx.remote_buffer = landing;
    tx.counter = credits;
    tx.remote_counter = filled;
    tx.peer = fabric.node(s.peer_chip);
    tx.role = abi::kFabricStreamSender;
    tx.slots = options_.slots;
    tx.message_bytes = options_.message_bytes;
    tx.hops = fabric.route(s.chip, s.peer_chip).hops;
    tx.route = fabric.route(s.chip, s.peer_chip).route;

    abi::FabricStreamEnd rx = tx;
    rx.connection = connection(fabric, plane, s.peer_chip, s.receiver_core, s.chip);
    rx.buffer = landing;
    rx.remote_buffer = 0;
    rx.counter = filled;
    rx.remote_counter = credits;
    rx.peer = fabric.node(s.chip);
    rx.role = abi::kFabricStreamReceiver;
    rx.hops = fabric.route(s.peer_chip, s.chip).hops;
    rx.route = fabric.route(s.peer_chip, s.chip).route;

    StreamEnds ends;
    ends.sender = {abi::kTransportFabric, 0, place_end(s.chip, s.sender_core, tx)};
    ends.receiver = {abi::kTransportFabric, 0, place_end(s.peer_chip, s.receiver_core, rx)};
    return ends;
}

}  // namespace weft::transport
