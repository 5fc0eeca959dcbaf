#include "model/fabric_model.h"

#include <stdexcept>

#include "common/error.h"
#include "devices/doorbell.h"
#include "driver/chip.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"
#include "hal/status_events.h"
#include "hal/timer.h"
#include "resident/resident.h"
#include "transport/fabric/fabric.h"

namespace weft::model {
namespace {

using transport::FabricDirection;

ClusterSpec load(const std::string& name) { return load_cluster(paths::cluster_file(name), paths::load_built_board); }

// The model's own readers (the stuck channels, the state JSON, the occupancy
// counts) dereference a router's configuration as host pointers, so the
// builder's board addresses move to the chip's host copy (a loader's
// relocation). The firmware takes either (pointer_to resolves a board
// address and leaves a host one), and the addresses packets carry stay
// board addresses: every host chip answers to them.
void relocate(uint64_t& addr, const HostChip& chip) {
    if (addr) addr = chip.to_host(addr);
}

void relocate(abi::FabricRing& r, const HostChip& chip) {
    relocate(r.buffer, chip);
    relocate(r.written, chip);
    relocate(r.freed, chip);
}

void relocate(abi::FabricRouterConfig& c, const HostChip& self, const HostChip& peer) {
    relocate(c.link_words, self);
    relocate(c.peer_link_words, peer);
    relocate(c.status, self);
    for (uint32_t v = 0; v < c.num_vcs; ++v) {
        relocate(c.receivers[v], self);
        relocate(c.peer_receivers[v], peer);
        for (uint32_t d = 0; d < abi::kFabricMaxDirections; ++d) relocate(c.forward[d][v], self);
        if (c.fallback[v].slots) relocate(c.fallback[v], self);  // its relay is on the same chip
        if (c.fallback_in[v].slots) relocate(c.fallback_in[v], self);
    }
    relocate(c.route_table, self);
    relocate(c.detour_table, self);
    relocate(c.fallback_stage, self);
    if (c.record_slots) relocate(c.records, self);
    for (uint32_t s = 0; s < c.num_senders; ++s) relocate(c.senders[s], self);
}

void relocate(abi::FabricWorkerConnection& c, const HostChip& self) {
    relocate(c.lane, self);
    relocate(c.headers, self);
    relocate(c.router_lane, self);
    relocate(c.route_table, self);
    relocate(c.scratch, self);
}

uint32_t packets_of(const ModelPacket& p, uint32_t max_payload) {
    if (p.command != abi::kFabricWrite && p.command != abi::kFabricWriteInc) return 1;
    return p.bytes ? (p.bytes + max_payload - 1) / max_payload : 1;
}

}  // namespace

FabricModel::FabricModel(const std::string& cluster, bool ring, FabricSpec options)
    : spec_(load(cluster)), cluster_(spec_), l1_(spec_.board) {
    // Planned as on a QEMU cluster: the same builder, through the machine seam.
    fabric_ = std::make_unique<transport::FabricBuilder>(transport::fabric_over(cluster_, ring, options));
    start_routers();
}

FabricModel::FabricModel(const std::string& cluster, FabricSpec options, const transport::RouteOf& routes)
    : spec_(load(cluster)), cluster_(spec_), l1_(spec_.board) {
    const ClusterTopology topology = cluster_.topology();
    fabric_ = std::make_unique<transport::FabricBuilder>(
        topology.meshes().size() > 1 ? transport::multi_mesh_fabric(cluster_.board(), topology, options)
                                     : transport::mesh_fabric(cluster_.board(), topology, options, true, routes));
    start_routers();
}

FabricModel::FabricModel(const std::string& cluster, const Plan& plan) : FabricModel(load(cluster), plan) {}

FabricModel::FabricModel(ClusterSpec cluster, const Plan& plan, uint64_t ram_bytes, std::vector<bool> held)
    : spec_(std::move(cluster)), cluster_(spec_, ram_bytes), l1_(spec_.board), held_(std::move(held)) {
    if (!held_.empty() && held_.size() != spec_.num_chips)
        throw std::logic_error("FabricModel: `held` names " + std::to_string(held_.size()) + " chips of " +
                               std::to_string(spec_.num_chips));
    fabric_ = std::make_unique<transport::FabricBuilder>(plan(cluster_));
    start_routers();
}

void FabricModel::start_routers() {
    for (size_t r = 0; r < fabric_->routers().size(); ++r) {
        const transport::FabricRouterPlan& plan = fabric_->routers()[r];
        l1_.keep_out(plan.chip, plan.core, plan.l1);
        if (!holds(plan.chip)) {
            routers_.push_back({&cluster_.core(plan.chip, plan.core), nullptr, nullptr, nullptr, plan.chip, plan.core});
            continue;
        }
        fabric_->write_router(cluster_, r);
        auto* config = reinterpret_cast<abi::FabricRouterConfig*>(
            cluster_.bytes(plan.chip, plan.config_address, sizeof(abi::FabricRouterConfig)));
        relocate(*config, cluster_.memory(plan.chip), cluster_.memory(plan.peer_chip));
        routers_.push_back({&cluster_.core(plan.chip, plan.core), config, nullptr, nullptr, plan.chip, plan.core});
        // A router waits only for its own devices (a reset of a dead cable's queue): they run in its sleeps.
        routers_.back().core->on_sleep = [this] { cluster_.step_devices(); };
    }
    // Every router starts before any worker writes to it, as on the cluster.
    for (RouterCore& r : routers_) {
        if (!r.config) continue;
        r.slots = std::make_unique<uint64_t[]>((fabric::Router::slot_bytes(*r.config) + 7) / 8);
        host_board::run_as(*r.core, [&] { r.router = std::make_unique<fabric::Router>(*r.config, r.slots.get()); });
    }
    worker_of_.assign(spec_.num_chips * transport::kFabricDirections * abi::kFabricMaxLanes, -1);
}

abi::FabricWorkerConnection* FabricModel::connection_for(uint32_t chip, uint32_t core, FabricDirection direction,
                                                         uint32_t lane) {
    const uint64_t at = fabric_->connect(cluster_, l1_, chip, direction, lane, core);
    auto* c = reinterpret_cast<abi::FabricWorkerConnection*>(cluster_.bytes(chip, at, sizeof(abi::FabricWorkerConnection)));
    relocate(*c, cluster_.memory(chip));
    return c;
}

size_t FabricModel::add_worker(uint32_t chip, uint32_t core, FabricDirection direction, uint32_t lane,
                               std::deque<ModelPacket> packets) {
    auto w = std::make_unique<Worker>();
    w->core = &cluster_.core(chip, core);
    w->chip = chip;
    w->connection = connection_for(chip, core, direction, lane);
    w->conn = std::make_unique<fabric::Connection>(*w->connection);
    w->packets = std::move(packets);
    workers_.push_back(std::move(w));
    return workers_.size() - 1;
}

size_t FabricModel::add_program(uint32_t chip, uint32_t core, std::function<bool()> step, std::function<bool()> done) {
    auto w = std::make_unique<Worker>();
    w->core = &cluster_.core(chip, core);
    w->chip = chip;
    w->step = std::move(step);
    w->done = std::move(done);
    workers_.push_back(std::move(w));
    return workers_.size() - 1;
}

fabric::Connection FabricModel::connect(uint32_t chip, uint32_t core, FabricDirection direction, uint32_t lane) {
    return fabric::Connection(*connection_for(chip, core, direction, lane));
}

void FabricModel::send(uint32_t from, uint32_t to, ModelPacket p, uint32_t lane) {
    const transport::FabricRoute route = fabric_->route(from, to);
    p.route.dst = fabric_->node(to);
    p.route.hops = static_cast<uint8_t>(route.hops);
    p.route.route = route.route;
    int& index = worker_of_.at(
        (from * transport::kFabricDirections + static_cast<uint32_t>(route.direction)) * abi::kFabricMaxLanes + lane);
    if (index < 0) {
        const uint32_t core = spec_.board.cores_with_role(CoreRole::kWorker).at(lane);
        index = static_cast<int>(add_worker(from, core, route.direction, lane, {}));
    }
    workers_[index]->packets.push_back(p);
}

// One API call per poll, and only when the lane has room for all its packets:
// a worker here must not block, for what it would wait for runs on this thread.
bool FabricModel::poll(Worker& w) {
    if (w.step) return host_board::run_as(*w.core, w.step);
    return host_board::run_as(*w.core, [&] {
        fabric::Connection& c = *w.conn;
        if (w.packets.empty()) {
            if (w.closed || c.room() < w.connection->lane.slots) return false;
            c.close();  // every packet freed: does not wait
            w.closed = true;
            return true;
        }
        const ModelPacket& p = w.packets.front();
        if (p.after && *reinterpret_cast<const volatile uint32_t*>(bytes(w.chip, p.after, 4)) < p.after_value)
            return false;
        if (c.room() < packets_of(p, c.max_payload())) return false;
        switch (p.command) {
            case abi::kFabricWrite:
            case abi::kFabricWriteInc: c.write(p.route, p.dst, p.src, p.bytes, p.sem, p.inc); break;
            case abi::kFabricAtomicInc: c.atomic_inc(p.route, p.sem, p.inc); break;
            case abi::kFabricInlineWrite: c.inline_write(p.route, p.dst, p.inc); break;
            case abi::kFabricScatterWrite: {
                const uint64_t dst[3] = {p.dst, p.scatter[0], p.scatter[1]};
                c.scatter_write(p.route, dst, p.scatter[1] ? 3 : p.scatter[0] ? 2 : 1, p.src, p.bytes);
                break;
            }
        }
        w.packets.pop_front();
        return true;
    });
}

void FabricModel::check_credits() {
    for (const RouterCore& r : routers_) {
        if (!r.router) continue;
        const auto& link = *reinterpret_cast<const abi::FabricLinkWords*>(r.config->link_words);
        const auto& st = r.router->status();
        for (uint32_t v = 0; v < r.config->num_vcs; ++v)
            if (link.filled[v] - st.receivers[v].freed > r.config->receivers[v].slots)
                throw std::runtime_error("a receiver channel holds more packets than it has slots");
    }
}

const abi::FabricRouterConfig& FabricModel::router_config(size_t r) const {
    return routers_[r].config ? *routers_[r].config : fabric_->routers()[r].config;
}

const abi::FabricRouterStatus& FabricModel::router_status(size_t r) const {
    static const abi::FabricRouterStatus kNone{};
    return routers_[r].router ? routers_[r].router->status() : kNone;
}

bool FabricModel::poll_router(size_t r) {
    if (!holds_router(r)) throw std::logic_error("FabricModel: router " + std::to_string(r) + " is another rank's");
    try {
        return host_board::run_as(*routers_[r].core, [&] { return routers_[r].router->poll(); });
    } catch (const host_board::Panic& p) {  // where and why, as a QEMU chip's fault says
        const transport::FabricRouterPlan& plan = fabric_->routers()[r];
        throw Error("the router of chip " + std::to_string(plan.chip) + " port " +
                    port_name(cluster_.board(), plan.port) + " panicked: " + describe_panic(p.code, p.detail));
    }
}

bool FabricModel::step_router(size_t r, const Touched& touched) {
    RouterCore& rc = routers_[r];
    bool late = false;
    if (rc.asleep) {
        const uint64_t alarm = rc.slept_at + uint64_t(resident::kFallbackWakeUs) * timer::ticks_per_us();
        late = !owned_wait_rung(rc.wait_value, rc.core_id, touched);
        if (late && cluster_.clock().now < alarm) return false;
        rc.asleep = false;
    }
    // As resident::run, it polls again at once while it moves, then sleeps:
    // the devices act on what it issued only after it is asleep, the worst
    // case for a ring it needs. A poll that moved took a tick.
    bool moved = false;
    for (int polls = 0; polls < kPollsPerWake && poll_router(r); ++polls) {
        moved = true;
        ++cluster_.clock().now;
    }
    if (moved && late) ++late_wakes_;
    rc.asleep = true;
    rc.wait_value = router_wait_value(r);
    rc.slept_at = cluster_.clock().now;
    return moved;
}

uint32_t FabricModel::router_wait_value(size_t r) {
    if (!holds_router(r)) return 0;
    return host_board::run_as(*routers_[r].core, [&] { return routers_[r].router->wait_value(); });
}

void FabricModel::step() {
    bool moved = cluster_.step_devices();
    const std::vector<Touched> touched = cluster_.take_touched();
    for (size_t r = 0; r < routers_.size(); ++r)
        if (holds_router(r)) moved |= step_router(r, touched[routers_[r].chip]);
    for (auto& w : workers_) moved |= poll(*w);
    check_credits();
    if (on_step) on_step();
    stalled_ = moved ? 0 : stalled_ + 1;
    cluster_.clock().now += 100;
}

bool FabricModel::idle() {
    for (size_t w = 0; w < workers_.size(); ++w)
        if (!worker_done(w)) return false;
    return cluster_.rings_idle() && stalled_ > 2 && slots_all_back();
}

uint32_t FabricModel::slots_in_use(size_t r) const {
    if (!holds_router(r)) return 0;
    const abi::FabricRouterConfig& c = *routers_[r].config;
    const abi::FabricRouterStatus& s = routers_[r].router->status();
    const auto& link = *reinterpret_cast<const abi::FabricLinkWords*>(c.link_words);
    uint32_t in_use = 0;
    for (uint32_t v = 0; v < c.num_vcs; ++v) in_use += link.filled[v] - s.receivers[v].freed;
    for (uint32_t i = 0; i < c.num_senders; ++i)
        if (c.senders[i].slots)
            in_use += *reinterpret_cast<const volatile uint32_t*>(c.senders[i].written) - s.senders[i].freed;
    return in_use;
}

// Every slot a packet took is free again, on both sides of every cable: a
// router that sleeps through the completion it needs would leave one held.
bool FabricModel::slots_all_back() const {
    for (size_t r = 0; r < routers_.size(); ++r) {
        if (router_status(r).state == abi::kFabricRouterRerouted) continue;  // what its dead cable held stays held
        if (slots_in_use(r)) return false;
    }
    return true;
}

int FabricModel::run(int max_steps) {
    int n = 0;
    for (; n < max_steps && !idle(); ++n) step();
    return n;
}

fabric::Route FabricModel::look_up(uint32_t chip, uint32_t to, uint8_t* first) {
    for (uint32_t d = 0; d < 4; ++d) {
        const FabricDirection way = transport::compass_direction(d);
        if (fabric_->router_index(chip, way) < 0) continue;
        Worker& w = *workers_[add_worker(chip, spec_.board.cores_with_role(CoreRole::kWorker).back(), way, 0, {})];
        w.closed = true;  // it sends nothing
        // Its NoC read completes while it waits: the devices run in its sleeps.
        w.core->on_sleep = [this] { cluster_.step_devices(); };
        return host_board::run_as(*w.core, [&] { return w.conn->route_to(static_cast<uint16_t>(to), first); });
    }
    throw std::runtime_error("chip " + std::to_string(chip) + " has no router");
}

const abi::FabricRouterStatus& FabricModel::status(uint32_t chip, FabricDirection direction) {
    const int r = fabric_->router_index(chip, direction);
    if (r < 0) throw std::runtime_error("no such router");
    return router_status(size_t(r));
}

void FabricModel::command_all(uint32_t command) {
    // As the host writes it into the router's L1 (the status lives there), and rings it.
    for (RouterCore& r : routers_) {
        if (!r.router) continue;
        const_cast<abi::FabricRouterStatus&>(r.router->status()).command = command;
        r.asleep = false;
    }
}

uint32_t FabricModel::packets_left() const {
    uint32_t n = 0;
    for (const auto& w : workers_) n += static_cast<uint32_t>(w->packets.size());
    return n;
}

uint32_t FabricModel::events(uint32_t chip, uint32_t kind) {
    const abi::EventRing& ring = cluster_.memory(chip).control().events;
    uint32_t n = 0;
    for (uint32_t i = ring.head; i != ring.tail; ++i)
        if (ring.slots[i % abi::kEventSlots].kind == kind) ++n;
    return n;
}

}  // namespace weft::model
