#include "fabric_model/timed_fabric.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "devices/devices.h"
#include "fabric_model/ranks.h"
#include "fabric_model/stuck_channels.h"
#include "hal/timer.h"

namespace weft::fabric_model {
namespace {

template <typename Ring>
auto& head_command(Ring& ring) {
    return ring.slots[ring.head & (Ring::kSlots - 1)];
}

template <typename Ring>
bool has_command(const Ring& ring) {
    return ring.head != __atomic_load_n(const_cast<uint32_t*>(&ring.tail), __ATOMIC_ACQUIRE);
}

template <typename Ring>
bool reset_pending(const Ring& ring) {
    return __atomic_load_n(const_cast<uint32_t*>(&ring.reset_seq), __ATOMIC_ACQUIRE) != ring.reset_ack;
}

}  // namespace

std::vector<uint32_t> chip_owners(const ClusterTopology& t, uint32_t chips, uint32_t ranks) {
    std::vector<uint32_t> owner(chips, 0);
    const auto& meshes = t.meshes();
    for (uint32_t c = 0; c < chips; ++c) {
        if (meshes.size() >= ranks) {
            const Mesh& m = t.mesh_of(c);
            const size_t index = size_t(&m - meshes.data());
            owner[c] = uint32_t(index * ranks / meshes.size());
        } else {
            owner[c] = uint32_t(uint64_t(c) * ranks / chips);
        }
    }
    return owner;
}

namespace {

// A delivery crossing to another rank: its event's key, then its bytes.
struct Crossing {
    uint64_t t, count, dst, left_ns;
    uint32_t chip, origin, from_chip, port, cable_life, word, len, pad;
};

}  // namespace

TimedFabric::~TimedFabric() = default;

TimedFabric::TimedFabric(model::FabricModel& model, const Costs& costs, Ranks* ranks)
    : model_(model),
      costs_(costs),
      cores_(static_cast<uint32_t>(model.cluster().board().cores.size())),
      ports_(static_cast<uint32_t>(model.cluster().board().ports.size())) {
    const uint32_t chips = model.chips();
    if (!ranks) own_ranks_ = std::make_unique<OneRank>();
    ranks_ = ranks ? ranks : own_ranks_.get();
    if (ranks_->size() > 1 && costs.cable_latency_ns == 0)
        throw Error("the model's ranks need a cable latency above 0 ns: it is their lookahead");
    owner_ = chip_owners(model.cluster().topology(), chips, ranks_->size());
    made_.assign(chips, 0);
    host_made_.assign(chips, 0);
    outgoing_.resize(ranks_->size());
    pollers_of_chip_.resize(chips);
    pollers_of_core_.resize(size_t(chips) * cores_);
    router_of_port_.assign(size_t(chips) * ports_, -1);
    noc_.resize(size_t(chips) * cores_);
    math_.resize(size_t(chips) * cores_);
    eth_.resize(size_t(chips) * ports_);
    failures_.assign(size_t(chips) * ports_, 0);
    // Firmware that blocks (a reset of a dead cable's queue, a table lookup)
    // gets its own chip's commands served at once, outside virtual time.
    for (uint32_t chip = 0; chip < chips; ++chip)
        for (uint32_t core = 0; core < cores_; ++core)
            model.cluster().core(chip, core).on_sleep = [this, chip] { serve_now(chip); };
    add_pollers();
}

void TimedFabric::add_pollers() {
    const size_t routers = model_.router_count();
    while (pollers_.size() < routers + model_.worker_count()) {
        const size_t i = pollers_.size();
        Poller p;
        if (i < routers) {
            const abi::FabricRouterConfig& c = model_.router_config(i);
            p.chip = model_.fabric().routers()[i].chip;
            p.core = model_.router_core(i).id;
            p.port = c.port;
            router_of_port_[size_t(p.chip) * ports_ + p.port] = int(i);
        } else {
            p.chip = model_.worker_chip(i - routers);
            p.core = model_.worker_core(i - routers).id;
            model_.worker_core(i - routers).on_sleep = [this, chip = p.chip] { serve_now(chip); };
        }
        pollers_.push_back(p);
        pollers_of_chip_[p.chip].push_back(uint32_t(i));
        pollers_of_core_[size_t(p.chip) * cores_ + p.core].push_back(uint32_t(i));
        wake(uint32_t(i), now_);
    }
}

bool TimedFabric::owns(uint32_t chip) const { return owner_[chip] == ranks_->rank(); }

void TimedFabric::schedule(uint64_t t, uint32_t chip, Kind kind, uint32_t a, uint32_t b) {
    const uint64_t count = origin_ == kHost ? host_made_[chip]++ : made_[origin_]++;
    queue_.push(Event{t, chip, origin_, count, kind, a, b});
}

void TimedFabric::wake(uint32_t poller, uint64_t t) {
    Poller& p = pollers_[poller];
    if (p.scheduled || !owns(p.chip)) return;
    p.scheduled = true;
    schedule(std::max(t, p.busy_until), p.chip, kPoll, poller);
}

void TimedFabric::wake_chip(uint32_t chip, uint64_t t) {
    for (uint32_t p : pollers_of_chip_[chip]) wake(p, t);
}

void TimedFabric::wake_core(uint32_t chip, uint32_t core, uint64_t t) {
    for (uint32_t p : pollers_of_core_[size_t(chip) * cores_ + core]) wake(p, t);
}

void TimedFabric::wake_for_own(uint32_t chip, uint32_t core, uint64_t t) {
    for (uint32_t p : pollers_of_core_[size_t(chip) * cores_ + core])
        if (p >= model_.router_count() || !(pollers_[p].wait_value & abi::kWaitOthersOnly)) wake(p, t);
}

void TimedFabric::wake_written(uint32_t chip, uint64_t address, uint64_t t) {
    const BoardInfo& board = model_.cluster().board();
    const uint64_t at = model_.cluster().memory(chip).memory().board_address(address);
    for (uint32_t core = 0; core < cores_; ++core)
        if (board.cores[core].l1.contains(at, 1)) return wake_core(chip, core, t);
    for (uint32_t p : pollers_of_chip_[chip])
        if (p >= model_.router_count()) wake(p, t);
}

void TimedFabric::wake_routers(uint64_t at_ns) {
    for (uint32_t r = 0; r < model_.router_count(); ++r) wake(r, std::max(at_ns, now_));
}

uint64_t TimedFabric::router_work(size_t r) const {
    const abi::FabricRouterStatus& s = model_.router_status(r);
    uint64_t n = 0;
    for (const auto& c : s.senders) n += c.done;
    for (const auto& c : s.receivers) n += c.done;
    return n;
}

// A poll that moved something costs its packets' work, and the poller looks
// again once that is done; one that moved nothing sleeps until woken.
void TimedFabric::poll(uint32_t index) {
    Poller& p = pollers_[index];
    p.scheduled = false;
    const size_t routers = model_.router_count();
    const bool router = index < routers;
    const bool moved = router ? model_.poll_router(index) : model_.poll_worker(index - routers);
    uint64_t cost = 0;
    if (router) {
        const uint64_t work = router_work(index);
        cost = (work - p.work) * costs_.router_packet_ns;
        if (moved) cost = std::max(cost, costs_.router_poll_ns);
        p.work = work;
    } else if (moved) {
        cost = costs_.worker_packet_ns;
    }
    p.busy_until = now_ + cost;
    const uint64_t start = router ? now_ + std::min(cost, costs_.router_latency_ns) : p.busy_until;
    kick_noc(p.chip, p.core, start);
    if (!router) kick_math(p.chip, p.core, start);
    if (router) kick_eth(p.chip, p.port, start);
    if (moved) wake(index, p.busy_until);
    else if (router)
        p.wait_value = model_.router_wait_value(index);
}

void TimedFabric::kick_noc(uint32_t chip, uint32_t core, uint64_t t) {
    Server& s = noc_[size_t(chip) * cores_ + core];
    abi::NocRing& ring = control(chip).noc[core];
    if (s.scheduled || !(has_command(ring) || reset_pending(ring))) return;
    s.scheduled = true;
    const uint64_t start = std::max(t, s.free_at);
    const uint32_t len = reset_pending(ring) ? 0 : head_command(ring).len;
    schedule(start + costs_.noc_ns(len), chip, kNocDone, chip * cores_ + core);
}

// A worker's reductions take their time on its core's math engine, one
// command after another, as its NoC copies do on the NoC.
void TimedFabric::kick_math(uint32_t chip, uint32_t core, uint64_t t) {
    Server& s = math_[size_t(chip) * cores_ + core];
    abi::MathRing& ring = control(chip).math[core];
    if (s.scheduled || !has_command(ring)) return;
    s.scheduled = true;
    const abi::MathCommand& c = head_command(ring);
    const uint64_t bytes = c.op == abi::kMathSemInc ? 0 : uint64_t(c.count) * abi::dtype_size(c.dtype);
    schedule(std::max(t, s.free_at) + costs_.math_ns(bytes), chip, kMathDone, chip * cores_ + core);
}

void TimedFabric::math_done(uint32_t slot) {
    const uint32_t chip = slot / cores_, core = slot % cores_;
    Server& s = math_[slot];
    s.scheduled = false;
    s.free_at = now_;
    run_math_ring(model_.cluster().memory(chip).memory(), control(chip).math[core], 1,
                  model_.cluster().devices().counters(chip));
    check_watches(chip);
    wake_core(chip, core, now_);
    kick_math(chip, core, now_);
}

void TimedFabric::noc_done(uint32_t slot) {
    const uint32_t chip = slot / cores_, core = slot % cores_;
    Server& s = noc_[slot];
    s.scheduled = false;
    s.free_at = now_;
    HostChip& mem = model_.cluster().memory(chip);
    abi::NocRing& ring = control(chip).noc[core];
    const bool command = !reset_pending(ring) && has_command(ring);
    const abi::NocCommand c = head_command(ring);
    run_noc_ring(mem.memory(), model_.cluster().board(), ring, 1, model_.cluster().devices().counters(chip));
    check_watches(chip);
    wake_for_own(chip, core, now_);  // its command completed
    if (command && c.op == abi::kNocMulticast) {
        wake_chip(chip, now_);
    } else if (command) {
        wake_written(chip, c.dst, now_);
        if (c.op == abi::kNocWriteInc) wake_written(chip, c.sem, now_);
    }
    kick_noc(chip, core, now_);
}

// The firmware gave up on what it queued (a dead cable's commands): the
// ring starts clean, and what was sent but not acknowledged never will be.
void TimedFabric::reset_eth(uint32_t slot) {
    abi::EthRing& ring = control(slot / ports_).eth[slot % ports_];
    consume_ring(ring, 0, [](const abi::EthCommand&) { return abi::kRingOk; });
    eth_[slot].framed = ring.head;
}

void TimedFabric::kick_eth(uint32_t chip, uint32_t port, uint64_t t) {
    if (port >= ports_) return;
    const uint32_t slot = chip * ports_ + port;
    Server& s = eth_[slot];
    abi::EthRing& ring = control(chip).eth[port];
    if (s.scheduled) return;
    if (reset_pending(ring)) reset_eth(slot);
    const uint32_t tail = __atomic_load_n(const_cast<uint32_t*>(&ring.tail), __ATOMIC_ACQUIRE);
    if (s.framed == tail || control(chip).port[port].state != abi::kLinkUp) return;
    s.scheduled = true;
    const uint64_t start = std::max(t, s.free_at);
    s.free_at = start + costs_.cable_ns(ring.slots[s.framed & (abi::EthRing::kSlots - 1)].len);
    schedule(s.free_at, chip, kEthSent, slot);
}

uint32_t TimedFabric::new_delivery() {
    if (free_deliveries_.empty()) {
        deliveries_.emplace_back();
        return uint32_t(deliveries_.size() - 1);
    }
    const uint32_t index = free_deliveries_.back();
    free_deliveries_.pop_back();
    return index;
}

// The command's last byte left: its bytes land on the peer a cable's latency
// later, and the peer's acknowledgement is back another latency after that,
// when the command completes (the devices' contract: a command completes once
// acknowledged). A port's deliveries and acknowledgements all take as long,
// so they keep their order.
void TimedFabric::eth_sent(uint32_t slot) {
    const uint32_t chip = slot / ports_, port = slot % ports_;
    Server& s = eth_[slot];
    s.scheduled = false;
    abi::ChipControlBlock& cb = control(chip);
    if (reset_pending(cb.eth[port])) reset_eth(slot);
    const uint32_t tail = __atomic_load_n(const_cast<uint32_t*>(&cb.eth[port].tail), __ATOMIC_ACQUIRE);
    if (cb.port[port].state == abi::kLinkUp && s.framed != tail && cb.eth[port].error == abi::kRingOk) {
        const abi::EthCommand c = cb.eth[port].slots[s.framed & (abi::EthRing::kSlots - 1)];
        const uint8_t* src = c.op == abi::kEthSendWord ? nullptr
                                                       : model_.cluster().memory(chip).memory().at(c.src, c.len);
        if (c.op != abi::kEthSendWord && !src) {  // the ring stops, as the devices stop it: the firmware reports it
            cb.eth[port].error_index = s.framed;
            __atomic_store_n(const_cast<uint32_t*>(&cb.eth[port].error), uint32_t(abi::kRingBadAddress),
                             __ATOMIC_RELEASE);
            return wake_chip(chip, now_);
        }
        ++s.framed;
        const uint32_t index = new_delivery();
        Delivery& d = deliveries_[index];
        d.from_chip = chip, d.port = port, d.chip = cb.port[port].peer_chip, d.dst = c.dst;
        d.cable_life = failures_[slot];
        d.word = c.op == abi::kEthSendWord;
        d.left_ns = now_ - std::min(now_, costs_.cable_ns(c.len));
        if (c.op == abi::kEthSendWord) {
            d.bytes.resize(4);
            std::memcpy(d.bytes.data(), &c.value, 4);
        } else {
            d.bytes.assign(src, src + c.len);
        }
        if (owns(d.chip)) {
            schedule(now_ + costs_.cable_latency_ns, d.chip, kDeliver, index);
        } else {
            send_across(d, now_ + costs_.cable_latency_ns, d.chip);
            free_deliveries_.push_back(index);
        }
        schedule(now_ + 2 * costs_.cable_latency_ns, chip, kEthAcked, slot, failures_[slot]);
    }
    kick_eth(chip, port, now_);
}

void TimedFabric::eth_acked(uint32_t slot, uint32_t cable_life) {
    if (cable_life != failures_[slot]) return;  // lost with the cable: the command never completes
    abi::EthRing& ring = control(slot / ports_).eth[slot % ports_];
    if (reset_pending(ring) || ring.head == eth_[slot].framed) return;  // given up on already
    __atomic_store_n(const_cast<uint32_t*>(&ring.head), ring.head + 1, __ATOMIC_RELEASE);
    const int router = router_of_port_[slot];
    if (router >= 0) wake_for_own(pollers_[router].chip, pollers_[router].core, now_);
}

void TimedFabric::deliver(uint32_t index) {
    Delivery& d = deliveries_[index];
    const uint32_t slot = d.from_chip * ports_ + d.port;
    if (d.cable_life != failures_[slot]) return held_[slot].push_back(index);  // the cable failed on its way
    free_deliveries_.push_back(index);
    uint8_t* dst = model_.cluster().memory(d.chip).memory().at(d.dst, d.bytes.size());
    if (dst) std::memcpy(dst, d.bytes.data(), d.bytes.size());
    check_watches(d.chip);
    if (on_packet_hop && !d.word && d.bytes.size() >= abi::kFabricHeaderBytes) {
        abi::FabricPacketHeader h;
        std::memcpy(&h, d.bytes.data(), sizeof h);
        on_packet_hop(PacketHop{d.left_ns, now_, d.from_chip, d.port, d.chip, uint32_t(d.bytes.size()), &h});
    }
    wake_written(d.chip, d.dst, now_);
}

size_t TimedFabric::watch(uint32_t chip, uint64_t address, uint32_t value) {
    if (!owns(chip)) {  // another rank's: latest() leaves it to that rank
        watches_.push_back({nullptr, value});
        return watches_.size() - 1;
    }
    const auto* word = reinterpret_cast<const volatile uint32_t*>(model_.bytes(chip, address, 4));
    watches_.push_back({word, value});
    watches_of_chip_[chip].push_back(watches_.size() - 1);
    check_watches(chip);
    return watches_.size() - 1;
}

void TimedFabric::check_watches(uint32_t chip) {
    const auto it = watches_of_chip_.find(chip);
    if (it == watches_of_chip_.end()) return;
    for (size_t i : it->second) {
        Watch& w = watches_[i];
        if (w.reached == UINT64_MAX && *w.word >= w.value) w.reached = now_;
    }
}

// Outside virtual time: what a blocked core waits for on its own chip.
void TimedFabric::serve_now(uint32_t chip) {
    HostChip& mem = model_.cluster().memory(chip);
    // The math engine runs only here: a reduction takes no virtual time of its
    // own (the worker that waits on it does, by the NoC and the cables).
    for (uint32_t core = 0; core < cores_; ++core) {
        run_noc_ring(mem.memory(), model_.cluster().board(), control(chip).noc[core], abi::NocRing::kSlots,
                     model_.cluster().devices().counters(chip));
        run_math_ring(mem.memory(), control(chip).math[core], abi::MathRing::kSlots,
                      model_.cluster().devices().counters(chip));
    }
    for (uint32_t port = 0; port < ports_; ++port)
        if (reset_pending(control(chip).eth[port])) reset_eth(chip * ports_ + port);
    // What those commands wrote (another router's channel, a worker's word)
    // may be what a sleeping poller waits for: each looks again.
    wake_chip(chip, now_);
}

// Every rank sets every cable's state alike, at the time they all stand at
// (run's end): each wakes its own chips' sides of it.
void TimedFabric::set_cable(uint32_t chip, uint32_t port, bool up) {
    abi::ChipControlBlock& cb = control(chip);
    const uint32_t peer = cb.port[port].peer_chip, peer_port = cb.port[port].peer_port;
    const uint32_t state = up ? abi::kLinkUp : abi::kLinkDown;
    if (!up && cb.port[port].state == abi::kLinkUp) {
        ++failures_[size_t(chip) * ports_ + port];
        ++failures_[size_t(peer) * ports_ + peer_port];
    }
    cb.port[port].state = state;
    control(peer).port[peer_port].state = state;
    for (const auto& [c, p] : {std::pair{chip, port}, std::pair{peer, peer_port}}) {
        if (up) deliver_held(c * ports_ + p);
        if (!owns(c)) continue;
        wake_chip(c, now_);
        kick_eth(c, p, now_);
    }
}

// What the cable from `slot` held when it failed arrives now it is back, in
// the order sent, and each command completes once acknowledged, as the
// TT-link endpoints resend from where they stand (devices/tt_link_cable.h):
// the routers count on it when they take the cable again.
void TimedFabric::deliver_held(uint32_t slot) {
    const auto it = held_.find(slot);
    if (it == held_.end()) return;
    for (uint32_t index : it->second) {
        deliveries_[index].cable_life = failures_[slot];
        schedule(now_ + costs_.cable_latency_ns, deliveries_[index].chip, kDeliver, index);
        schedule(now_ + 2 * costs_.cable_latency_ns, slot / ports_, kEthAcked, slot, failures_[slot]);
    }
    held_.erase(it);
}

bool TimedFabric::owned_rings_idle() {
    for (uint32_t chip = 0; chip < model_.chips(); ++chip) {
        if (!owns(chip)) continue;
        const abi::ChipControlBlock& cb = control(chip);
        for (uint32_t c = 0; c < cores_; ++c)
            if (has_command(cb.noc[c]) || has_command(cb.math[c])) return false;
        for (uint32_t p = 0; p < ports_; ++p)
            if (has_command(cb.eth[p])) return false;
    }
    return true;
}

// This rank's part: a worker on another rank's chip is that rank's to finish
// (the collectives' plans add every chip's programs on every rank).
bool TimedFabric::quiet() {
    for (size_t w = 0; w < model_.worker_count(); ++w)
        if (owns(model_.worker_chip(w)) && !model_.worker_done(w)) return false;
    return owned_rings_idle() && held_packets(model_) == 0;
}

void TimedFabric::run_event(const Event& e) {
    if (on_advance && e.t > now_) on_advance(now_, e.t);
    now_ = e.t;
    model_.cluster().clock().now = now_ * timer::ticks_per_us() / 1000;
    ++events_run_;
    origin_ = e.chip;
    switch (e.kind) {
        case kPoll: poll(e.a); break;
        case kNocDone: noc_done(e.a); break;
        case kMathDone: math_done(e.a); break;
        case kEthSent: eth_sent(e.a); break;
        case kEthAcked: eth_acked(e.a, e.b); break;
        case kDeliver: deliver(e.a); break;
    }
    origin_ = kHost;
}

// A rank's chips live at its own host addresses: what crosses carries the
// board's address of the destination, which every rank maps.
void TimedFabric::send_across(const Delivery& d, uint64_t t, uint32_t chip) {
    const uint64_t dst = model_.cluster().memory(chip).memory().board_address(d.dst);
    const Crossing c{t,
                     made_[origin_]++,
                     dst,
                     d.left_ns,
                     chip,
                     origin_,
                     d.from_chip,
                     d.port,
                     d.cable_life,
                     uint32_t(d.word),
                     uint32_t(d.bytes.size()),
                     0};
    std::vector<uint8_t>& out = outgoing_[owner_[chip]];
    const auto* head = reinterpret_cast<const uint8_t*>(&c);
    out.insert(out.end(), head, head + sizeof c);
    out.insert(out.end(), d.bytes.begin(), d.bytes.end());
}

void TimedFabric::take_across(const std::vector<uint8_t>& in) {
    for (size_t at = 0; at < in.size();) {
        Crossing c;
        std::memcpy(&c, in.data() + at, sizeof c);
        at += sizeof c;
        const uint32_t index = new_delivery();
        Delivery& d = deliveries_[index];
        const ChipMemory& mem = model_.cluster().memory(c.chip).memory();
        d.from_chip = c.from_chip, d.port = c.port, d.chip = c.chip;
        d.dst = c.dst - model_.cluster().board().ram.base + mem.base;
        d.cable_life = c.cable_life, d.word = c.word != 0, d.left_ns = c.left_ns;
        d.bytes.assign(in.data() + at, in.data() + at + c.len);
        at += c.len;
        queue_.push(Event{c.t, c.chip, c.origin, c.count, kDeliver, index});
    }
}

// One rank: every event in time order. Several: windows of one cable
// latency from the earliest event of any rank; no event of a window can
// make one for another rank inside it, so each runs its own, then they
// trade what crossed.
RunResult TimedFabric::run(uint64_t until_ns) {
    add_pollers();
    RunResult r;
    const uint64_t before = events_run_;
    if (ranks_->size() == 1) {
        while (!queue_.empty() && queue_.top().t <= until_ns) {
            const Event e = queue_.top();
            queue_.pop();
            run_event(e);
        }
    } else {
        for (;;) {
            const uint64_t t = ranks_->min(queue_.empty() ? UINT64_MAX : queue_.top().t);
            if (t == UINT64_MAX || t > until_ns) break;
            const uint64_t horizon = std::min(t + costs_.cable_latency_ns, until_ns + 1);
            while (!queue_.empty() && queue_.top().t < horizon) {
                const Event e = queue_.top();
                queue_.pop();
                run_event(e);
            }
            take_across(ranks_->exchange(outgoing_));
            for (auto& out : outgoing_) out.clear();
        }
    }
    // Stopped at the limit: the clock stands there on every rank, so what
    // the caller does next (a cable failing) happens at the same time on
    // each, whatever event a rank ran last.
    const uint64_t next = ranks_->min(queue_.empty() ? UINT64_MAX : queue_.top().t);
    if (next != UINT64_MAX && next > until_ns && until_ns > now_) {
        if (on_advance) on_advance(now_, until_ns);
        now_ = until_ns;
        model_.cluster().clock().now = now_ * timer::ticks_per_us() / 1000;
    }
    r.events = ranks_->sum(events_run_ - before);
    r.end_ns = ranks_->max(now_);
    if (ranks_->min(queue_.empty() ? 1 : 0)) {
        r.finished = ranks_->min(quiet() ? 1 : 0) == 1;
        r.stuck = !r.finished;
    }
    return r;
}

uint64_t TimedFabric::latest(const std::vector<size_t>& watches) {
    uint64_t t = 0;
    for (size_t w : watches)
        if (watches_[w].word) t = std::max(t, watches_[w].reached);
    return ranks_->max(t);
}

}  // namespace weft::fabric_model
