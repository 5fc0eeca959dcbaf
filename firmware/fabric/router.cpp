#include "fabric/router.h"

#include "hal/eth.h"
#include "hal/mailbox.h"
#include "hal/noc.h"
#include "hal/status_events.h"
#include "hal/timer.h"
#include "hal/wait.h"
#include "rt/address.h"
#include "rt/fence.h"
#include "weft/abi/fault.h"

namespace weft::fabric {
namespace {

volatile uint32_t* word_at(uint64_t addr) { return pointer_to<volatile uint32_t>(addr); }

// Counters wrap: has the NoC completed every command numbered below `mark`?
bool reached(uint32_t completed, uint32_t mark) { return static_cast<int32_t>(completed - mark) >= 0; }

uint64_t slot_of(const abi::FabricRing& r, uint32_t slot_size, uint32_t n) {
    return r.buffer + uint64_t(slot_size) * (n % r.slots);
}

// What the dropped and timeout events say about a packet: its source chip and number.
uint64_t describe(const abi::FabricPacketHeader& h) {
    return (uint64_t(h.src.mesh) << 48) | (uint64_t(h.src.chip) << 32) | h.seq;
}

// Hands out the slot records of Router's owner's memory, in the order
// slot_bytes counts them.
class SlotCarver {
public:
    explicit SlotCarver(void* at) : at_(static_cast<uint8_t*>(at)) {}
    template <typename T>
    T* take(uint32_t slots) {
        T* t = reinterpret_cast<T*>(at_);
        for (uint32_t i = 0; i < slots; ++i) t[i] = T{};
        at_ += sizeof(T) * slots;
        return t;
    }

private:
    uint8_t* at_;
};

bool fallback_configured(const abi::FabricRouterConfig& c) { return c.fallback[0].slots != 0; }

// Counters wrap: is `count` past `mark`?
bool ahead(uint32_t count, uint32_t mark) { return static_cast<int32_t>(count - mark) > 0; }

// The three per-VC counts a sync or a rejoin mark carries, and back.
static_assert(abi::kFabricMaxVcs == 3, "a sync or mark carries three counts");
void put_counts(abi::FabricPacketHeader& h, const uint32_t counts[abi::kFabricMaxVcs]) {
    h.dst_address = counts[0] | uint64_t(counts[1]) << 32;
    h.sem_address = counts[2];
}
// A note between a cable's two routers (a sync, a mark) from `self`.
abi::FabricPacketHeader note(abi::FabricNodeId self, uint8_t type, const uint32_t counts[abi::kFabricMaxVcs]) {
    abi::FabricPacketHeader h{};
    h.src = self;
    h.send_type = type;
    put_counts(h, counts);
    return h;
}
void get_counts(const abi::FabricPacketHeader& h, uint32_t counts[abi::kFabricMaxVcs]) {
    counts[0] = static_cast<uint32_t>(h.dst_address);
    counts[1] = static_cast<uint32_t>(h.dst_address >> 32);
    counts[2] = static_cast<uint32_t>(h.sem_address);
}

}  // namespace

size_t Router::slot_bytes(const abi::FabricRouterConfig& config) {
    size_t bytes = 0;
    for (uint32_t i = 0; i < config.num_senders && i < abi::kFabricMaxSenders; ++i)
        bytes += sizeof(SentSlot) * config.senders[i].slots;
    for (uint32_t v = 0; v < config.num_vcs && v < abi::kFabricMaxVcs; ++v) {
        bytes += sizeof(uint32_t) * config.receivers[v].slots;
        if (fallback_configured(config)) bytes += sizeof(uint32_t) * config.fallback_in[v].slots;
    }
    return bytes;
}

Router::Router(abi::FabricRouterConfig& config, void* slots)
    : config_(config),
      link_(*pointer_to<abi::FabricLinkWords>(config.link_words)),
      status_(*pointer_to<abi::FabricRouterStatus>(config.status)) {
    if (config.magic != abi::kFabricRouterMagic) mailbox::panic(abi::kPanicBadArgs, 0);
    if (config.num_vcs == 0 || config.num_vcs > abi::kFabricMaxVcs || config.num_senders > abi::kFabricMaxSenders ||
        config.slot_size <= abi::kFabricHeaderBytes || config.slot_size % 64 ||
        (config.dims != 1 && config.dims != 2) || config.compass >= abi::kFabricMaxDirections)
        mailbox::panic(abi::kPanicBadArgs, 1);
    status_ = abi::FabricRouterStatus{};
    stage_free_at_ = noc::issued();
    const uint64_t now = timer::now();
    last_poll_ = now;
    SlotCarver carve(slots);
    for (uint32_t i = 0; i < config.num_senders; ++i) {
        const abi::FabricRing& r = config.senders[i];
        if (r.slots == 0 || r.slots > abi::kFabricMaxSlots || r.vc >= config.num_vcs)
            mailbox::panic(abi::kPanicBadArgs, 100 + i);
        senders_[i].ring = &r;
        senders_[i].slot = carve.take<SentSlot>(r.slots);
        senders_[i].since = now;
        *word_at(r.written) = 0;  // its writer waits for our start before it writes
    }
    hop_ = Hop{config.dims, config.compass, config.self, nullptr};
    if (config.flags & (abi::kFabricMeshClasses | abi::kFabricLongRoutes)) {
        if (config.dims != 2 || !config.route_table) mailbox::panic(abi::kPanicBadArgs, 2);
        hop_.table = pointer_to<const abi::FabricRouteTable>(config.route_table);
    }
    for (uint32_t v = 0; v < config.num_vcs; ++v) {
        const abi::FabricRing& r = config.receivers[v];
        if (r.slots == 0 || r.slots > abi::kFabricMaxSlots) mailbox::panic(abi::kPanicBadArgs, 200 + v);
        receivers_[v].ring = &r;
        receivers_[v].noc_command = carve.take<uint32_t>(r.slots);
        receivers_[v].since = now;
        for (uint32_t d = 0; d < abi::kFabricMaxDirections; ++d)
            if (config.forward[d][v].slots) *word_at(config.forward[d][v].freed) = 0;
        link_.filled[v] = 0;
        link_.acked[v] = 0;
        if (!has_fallback()) continue;
        if (!config.fallback_stage || !config.fallback_in[v].slots || config.fallback_in[v].slots > abi::kFabricMaxSlots)
            mailbox::panic(abi::kPanicBadArgs, 3);
        // Counters in our L1 that our relay writes: what it put in fallback_in, what it freed of fallback.
        *word_at(config.fallback_in[v].written) = 0;
        *word_at(config.fallback[v].freed) = 0;
        fallback_rx_[v].ring = &config.fallback_in[v];
        fallback_rx_[v].noc_command = carve.take<uint32_t>(config.fallback_in[v].slots);
        fallback_rx_[v].since = now;
    }
}

uint64_t Router::peer_word(const volatile uint32_t* word) const {
    return config_.peer_link_words + (address_of(word) - address_of(&link_));
}

bool Router::poll() {
    eth::check(config_.port);  // a refused command faults the router with the port named
    const uint64_t now = timer::now();
    account(now);
    watch_link();
    bool moved = awaits_marks() && poll_fallback(now);
    if (path_ == Path::kRejoining) moved |= poll_rejoin();
    for (uint32_t v = 0; v < config_.num_vcs; ++v) moved |= poll_receiver(v, now);
    moved |= poll_senders(now);
    mailbox::set_progress(status_.delivered + status_.forwarded);
    last_moved_ = moved;
    return moved;
}

// The time since the last poll was busy if that poll moved something, else
// idle (the router slept on its doorbell); then the host's command.
void Router::account(uint64_t now) {
    const uint64_t since = now - last_poll_;
    if (last_moved_) status_.busy_ticks = status_.busy_ticks + since;
    else
        status_.idle_ticks = status_.idle_ticks + since;
    last_poll_ = now;
    status_.heartbeat = now;
    status_.polls = status_.polls + 1;
    const uint32_t c = status_.command;
    if (c == abi::kFabricReroute && path_ == Path::kCable && (config_.dims == 2 || config_.ring_chips) &&
        !eth::link_up(config_.port))
        start_reroute();
    if (c == abi::kFabricRejoin && path_ == Path::kFallback && eth::link_up(config_.port)) start_rejoin();
    if (c == abi::kFabricRejoin && path_ == Path::kRouted && eth::link_up(config_.port)) rejoin_from_tables();
    status_.state = c == abi::kFabricPause                         ? abi::kFabricRouterPaused
                    : c == abi::kFabricDrain || status_.hold_lanes ? abi::kFabricRouterDraining
                    : path_ != Path::kCable                        ? abi::kFabricRouterRerouted
                                                                   : abi::kFabricRouterRunning;
}

// A cable that goes down is reported once, as the EDM does, and the router
// goes on (what it holds for the cable waits, and is reported if it waits
// past the timeout); the control plane decides what traffic does next. With
// a fallback relay whose own cable is up, the router moves onto it at once.
void Router::watch_link() {
    const bool up = eth::link_up(config_.port);
    if (link_was_up_ && !up) {
        status_.link_downs = status_.link_downs + 1;
        status::post(abi::kEventLinkDown, config_.port, 0, status_.link_downs);
        if (has_fallback() && path_ == Path::kCable && eth::link_up(config_.fallback_port)) start_fallback();
    }
    link_was_up_ = up;
}

// The cable died under traffic: which of our packets arrived is known only
// at the far end, so both routers tell each other over the fallback (the
// packets of the dead cable their receivers take: all that had fully landed
// when they saw it die) and each sends the rest again over the fallback, in
// order, before anything new. Commands still queued for the cable are
// dropped; frames already on the wire land if it returns, and are ignored.
// The router stays on the fallback until the fabric is rebuilt: the next
// fabric the control plane plans takes the cable again.
void Router::start_fallback() {
    path_ = Path::kSyncing;
    rt::acquire_fence();
    for (uint32_t v = 0; v < config_.num_vcs; ++v) {
        // A count the cable delivered before an earlier return can trail what we took.
        const uint32_t filled = link_.filled[v];
        frozen_[v] = ahead(filled, receivers_[v].handled) ? filled : receivers_[v].handled;
        rx_live_[v] = false;
    }
    eth::recover(config_.port, /*drop_queued=*/true);
    sync_sent_ = false;
}

// What we tell the peer (a sync, a mark) into fallback[vc], through the
// fallback stage, which it takes only once the NoC has read what was staged
// before. False until it went (tried again at the next poll).
bool Router::tell_peer(const abi::FabricPacketHeader& h, uint32_t vc) {
    if (!reached(noc::completed(), stage_free_at_)) return false;
    header_at(config_.fallback_stage) = h;
    if (!push(config_.fallback[vc], fallback_sent_[vc], config_.fallback_stage, abi::kFabricHeaderBytes)) return false;
    stage_free_at_ = noc::issued();
    return true;
}

// While the cable is down, and after it returned until the peer's marks
// came: the fallback's packets (the sync first).
bool Router::awaits_marks() const {
    if (path_ == Path::kSyncing || path_ == Path::kFallback || path_ == Path::kRejoining) return true;
    if (path_ != Path::kCable) return false;
    for (uint32_t v = 0; v < config_.num_vcs; ++v)
        if (!rx_live_[v]) return true;
    return false;
}

bool Router::poll_fallback(uint64_t now) {
    bool moved = false;
    if (!sync_sent_) sync_sent_ = moved = tell_peer(note(config_.self, abi::kFabricFallbackSync, frozen_), 0);
    for (uint32_t v = 0; v < config_.num_vcs; ++v) moved |= poll_fallback_in(v, now);
    return moved;
}

// The peer's packets that came round through the relays, after every packet
// of the dead cable we take: so a lane's packets stay in order. Its sync
// (always first: it is sent before anything else) waits for no data.
bool Router::poll_fallback_in(uint32_t vc, uint64_t now) {
    Receiver& rx = fallback_rx_[vc];
    bool moved = release_fallback(vc);
    while (rx.handled != *word_at(rx.ring->written)) {
        const uint64_t slot = slot_of(*rx.ring, config_.slot_size, rx.handled);
        abi::FabricPacketHeader& h = header_at(slot);
        if (h.send_type == abi::kFabricFallbackSync) {
            on_sync(h);
        } else if (h.send_type == abi::kFabricRejoinMark) {
            if (!on_rejoin_mark(h)) break;
        } else if (receivers_[vc].handled != frozen_[vc] || !handle_head(rx, vc, h, slot)) {
            break;
        }
        rx.noc_command[rx.handled % rx.ring->slots] = noc::issued();
        ++rx.handled;
        rx.decided = false;
        rx.since = now;
        moved = true;
    }
    return release_fallback(vc) || moved;
}

// The peer took our packets of the dead cable numbered below sync's counts:
// those are done; the rest go again, over the fallback.
void Router::on_sync(const abi::FabricPacketHeader& h) {
    uint32_t took[abi::kFabricMaxVcs];
    get_counts(h, took);
    const uint32_t again = settle(took);
    path_ = Path::kFallback;
    status::post(abi::kEventRerouted, config_.port, config_.fallback_port, again);
}

// The host found our cable dead and rewrote the chip's tables round it: the
// counts it read at both ends say what arrived; the rest, and everything
// after, goes round (route_round).
void Router::start_reroute() {
    uint32_t took[abi::kFabricMaxVcs];
    for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) took[v] = status_.peer_took[v];
    for (uint32_t v = 0; v < config_.num_vcs; ++v) {
        frozen_[v] = status_.freeze_at[v];
        rx_live_[v] = false;
    }
    eth::recover(config_.port, /*drop_queued=*/true);
    const uint32_t again = settle(took);
    path_ = Path::kRouted;
    status::post(abi::kEventRerouted, config_.port, config_.port, again);
}

// The cable is back (the host's kFabricRejoin). Nothing is held: a VC's
// packets go on over the fallback until its mark follows them there, and
// over the cable after it (send_head); once every VC is marked, the router
// is on its cable again.
void Router::start_rejoin() {
    path_ = Path::kRejoining;
    marks_ = 0;
}

bool Router::poll_rejoin() {
    if (!sync_sent_) return false;  // the peer waits for it before anything else of ours
    bool moved = false;
    for (uint32_t v = 0; v < config_.num_vcs; ++v) moved |= !marked(v) && push_mark(v);
    if (marks_ != (1u << config_.num_vcs) - 1) return moved;
    path_ = Path::kCable;
    status::post(abi::kEventRejoined, config_.port, config_.fallback_port, 0);
    return true;
}

// VC vc's mark carries how many packets we had sent into the peer's
// receivers when the cable died: the peer skips those it never took (they
// went again over the fallback; the cable, lossless, still delivers them
// first when it returns) and reads that VC off the cable from there.
bool Router::push_mark(uint32_t vc) {
    abi::FabricPacketHeader mark = note(config_.self, abi::kFabricRejoinMark, peer_sent_);
    mark.vc = static_cast<uint8_t>(vc);
    if (!tell_peer(mark, vc)) return false;
    marks_ |= 1u << vc;
    return true;
}

// The cable is back after the control plane routed round it by tables: it
// paused both routers and waited until every packet they had sent round
// was delivered, so nothing sent over the cable now can pass one. Its
// counts (freeze_at: how many packets the peer had sent into each of our
// receivers) say where the peer's sending stands; we skip what the cable
// lost (it went round) and read the cable again from there.
void Router::rejoin_from_tables() {
    for (uint32_t v = 0; v < config_.num_vcs; ++v)  // every packet the dead cable brought handled and read
        if (receivers_[v].handled != frozen_[v] || receivers_[v].released != receivers_[v].handled) return;
    for (uint32_t i = 0; i < config_.num_senders; ++i)
        if (senders_[i].run.chips) return;  // a multicast's copies round the cable still going
    for (uint32_t v = 0; v < config_.num_vcs; ++v) {
        Receiver& rx = receivers_[v];
        rx.handled = rx.released = frozen_[v] = status_.freeze_at[v];
        rx.decided = false;
        rx_live_[v] = true;
    }
    path_ = Path::kCable;
    status::post(abi::kEventRejoined, config_.port, config_.port, 0);
}

// The peer's mark for VC h.vc: all it sent over the fallback on that VC came
// before it, so our receiver of that VC reads the cable again, from the
// peer's count. False while the receiver still holds slots of the dead cable.
bool Router::on_rejoin_mark(const abi::FabricPacketHeader& h) {
    if (h.vc >= config_.num_vcs) return true;  // a corrupt mark: nothing to rejoin
    Receiver& rx = receivers_[h.vc];
    if (rx.handled != frozen_[h.vc] || rx.released != rx.handled) return false;
    uint32_t sent[abi::kFabricMaxVcs];
    get_counts(h, sent);
    rx.handled = rx.released = frozen_[h.vc] = sent[h.vc];
    rx.decided = false;
    rx_live_[h.vc] = true;  // release() gives the peer its credits from here
    return true;
}

// Frees our packets of the dead cable the peer took (numbered below took[vc]
// on their VC); the rest are to be sent again. Returns how many.
uint32_t Router::settle(const uint32_t took[abi::kFabricMaxVcs]) {
    uint32_t again = 0;
    for (uint32_t i = 0; i < config_.num_senders; ++i) {
        Sender& s = senders_[i];
        const uint32_t before = s.freed;
        for (; s.freed != s.sent; ++s.freed) {
            const uint32_t p = s.freed % s.ring->slots;
            if (static_cast<int16_t>(s.slot[p].link_index - static_cast<uint16_t>(took[s.slot[p].link_vc])) >= 0) break;
        }
        if (s.freed != before)
            noc::semaphore_inc(*reinterpret_cast<const volatile uint64_t*>(&s.ring->freed), s.freed - before);
        again += s.sent - s.freed;
        s.sent = s.freed;
    }
    status_.resent = status_.resent + again;
    return again;
}

// A packet for the dead cable gets a new route from this chip, by its
// tables, through the router of its first direction (a pass-through channel
// from us, on vc_round_dead_cable's VC); a multicast, a copy to each chip of
// its run (copy_run_round). One with no other way is dropped and reported.
bool Router::route_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot) {
    if (config_.dims == 1) return send_back(s, h, slot);
    if (s.run.chips || (h.send_type == abi::kFabricMulticast && h.mcast_count > 1)) return copy_run_round(s, h, slot);
    return route_unicast_round(s, h, slot);
}

bool Router::route_unicast_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot) {
    const uint64_t at = config_.detour_table ? config_.detour_table : config_.route_table;
    const auto& table = *pointer_to<const abi::FabricRouteTable>(at);
    const abi::FabricRouteEntry e = abi::fabric_route_entry(table, config_.self.mesh, h.dst);
    if ((h.send_type != abi::kFabricUnicast && h.send_type != abi::kFabricMulticast) || e.hops == 0 ||
        e.first == config_.compass ||
        !config_.forward[e.first][0].slots)  // every VC's channel exists where VC 0's does
        return drop_sent(s, h);
    const uint32_t command = noc::issued();
    const uint32_t vc = vc_round_dead_cable(s.ring->vc, config_.flags);
    const abi::FabricPacketHeader was = h;
    h.hops = e.hops;
    h.route = e.route;
    h.vc = static_cast<uint8_t>(vc);
    h.keeps_escape = status_.detours_keep_vc ? 1 : 0;
    if (!forward(config_.forward[e.first][vc], slot, abi::kFabricHeaderBytes + h.payload_bytes)) {
        h = was;  // as it came: tried again later, round or (the cable back) over it
        return false;
    }
    s.slot[s.sent % s.ring->slots] = {command, 0, 0, 1};
    return true;
}

// Chip k of a multicast's run: k cables on from its first chip, its way
// (round the mesh's wrap, on a torus: a run never spans a ring).
abi::FabricNodeId Router::run_chip(const RunRound& run, uint32_t k) const {
    const auto& table = *pointer_to<const abi::FabricRouteTable>(config_.route_table);
    const uint32_t width = config_.mesh_width ? config_.mesh_width : 1, height = table.chips / width;
    uint32_t x = run.first.chip % width, y = run.first.chip / width;
    switch (run.way) {
        case abi::kFabricNorth: y = (y + height - k % height) % height; break;
        case abi::kFabricSouth: y = (y + k) % height; break;
        case abi::kFabricEast: x = (x + k) % width; break;
        default: x = (x + width - k % width) % width; break;
    }
    return {run.first.mesh, static_cast<uint16_t>(x + y * width)};
}

// The head multicast of sender s, whose run of chips lies beyond the dead
// cable: a unicast copy to each chip of the run, in order, each routed round
// as a unicast. False until the last copy is on its way.
bool Router::copy_run_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot) {
    RunRound& run = s.run;
    if (!run.chips) {
        // Short of its first chip, the run starts there and goes on the way
        // its last cable goes; within the run (or one cable from its start)
        // it goes on across this cable, straight on.
        if (h.hops > 1) {
            run.first = h.dst;
            run.way = static_cast<uint8_t>((h.route >> (2 * (h.hops - 2))) & 3);
        } else {
            run.way = static_cast<uint8_t>(config_.compass);
            run.first = config_.self;
            run.first = run_chip(run, 1);
        }
        run.chips = h.mcast_count;
        run.copied = 0;
        run.read_by = noc::issued();
    }
    while (run.copied < run.chips) {
        if (!reached(noc::completed(), run.read_by)) return false;  // the last copy's header is still to be read
        h.send_type = abi::kFabricUnicast;
        h.mcast_count = 1;
        h.dst = run_chip(run, run.copied);
        if (!route_unicast_round(s, h, slot)) return false;  // tried again at the next poll
        run.read_by = noc::issued();
        ++run.copied;
    }
    run.chips = 0;
    return true;
}

// On a ring a packet for the dead cable goes the other way round, through
// the chip's other router, on the escape VC (kFabricRingEscape): its
// destination is ring_chips - hops cables back. A multicast's run of chips
// lies wholly beyond the cable (a run never spans the whole ring), so it
// starts at the run's far end, as many cables back, and delivers the same
// chips in the other order.
bool Router::send_back(Sender& s, abi::FabricPacketHeader& h, uint64_t slot) {
    const abi::FabricRing& back = config_.forward[0][config_.num_vcs - 1];
    const bool multicast = h.send_type == abi::kFabricMulticast && h.mcast_count > 1;
    const uint32_t far_end = h.hops + (multicast ? h.mcast_count - 1u : 0u);  // cables to the last chip
    if ((h.send_type != abi::kFabricUnicast && h.send_type != abi::kFabricMulticast) || h.hops == 0 ||
        far_end >= config_.ring_chips || !back.slots)
        return drop_sent(s, h);
    const uint32_t command = noc::issued();
    const uint8_t hops = h.hops;
    const uint8_t vc = h.vc;
    h.hops = static_cast<uint8_t>(config_.ring_chips - far_end);
    h.vc = static_cast<uint8_t>(config_.num_vcs - 1);
    if (!forward(back, slot, abi::kFabricHeaderBytes + h.payload_bytes)) {
        h.hops = hops, h.vc = vc;  // tried again at the next poll, from the packet as it was
        return false;
    }
    s.slot[s.sent % s.ring->slots] = {command, 0, 0, 1};
    return true;
}

// Sender s's head packet, which has no way round the dead cable, is
// dropped and reported; its slot is freed with nothing to wait for.
bool Router::drop_sent(Sender& s, const abi::FabricPacketHeader& h) {
    const uint32_t command = noc::issued();
    drop(abi::kEventRoutingError, static_cast<uint32_t>(&s - senders_), h);
    s.slot[s.sent % s.ring->slots] = {command - 1, 0, 0, 1};  // nothing to wait for
    return true;
}

// Into a ring another router reads (a pass-through or fallback channel), if it has room.
bool Router::push(const abi::FabricRing& f, uint32_t& count, uint64_t slot, uint32_t bytes) {
    if (count - *word_at(f.freed) >= f.slots) return false;
    noc::async_write(slot, slot_of(f, config_.slot_size, count), bytes);
    noc::semaphore_inc(f.written, 1);  // ordered after the bytes on this core's NoC queue
    ++count;
    return true;
}

bool Router::send_over_fallback(Sender& s, abi::FabricPacketHeader& h, uint64_t slot, uint32_t bytes) {
    const uint32_t vc = h.vc < config_.num_vcs ? h.vc : 0;
    const uint32_t command = noc::issued();
    if (!push(config_.fallback[vc], fallback_sent_[vc], slot, bytes)) return false;
    s.slot[s.sent % s.ring->slots] = {command, 0, 0, 1};
    return true;
}

// Fallback slots whose NoC reads are done go back to our relay.
bool Router::release_fallback(uint32_t vc) {
    Receiver& rx = fallback_rx_[vc];
    const uint32_t done = noc::completed();
    const uint32_t before = rx.released;
    while (rx.released < rx.handled && reached(done, rx.noc_command[rx.released % rx.ring->slots])) ++rx.released;
    if (rx.released == before) return false;
    noc::semaphore_inc(rx.ring->freed, rx.released - before);
    return true;
}

// The worker lanes are the first senders; the pass-through channels follow.
bool Router::is_lane(uint32_t sender) const { return sender < abi::fabric_lanes(config_); }

// A packet entering a ring, not one going on round it: from a worker's lane,
// or on a torus from a router of the other dimension (a turn). Packets from
// the opposite router go straight on, round the same ring.
uint32_t Router::needs_bubble(uint32_t sender) const {
    if (!(config_.flags & abi::kFabricBubble)) return 0;
    if (is_lane(sender)) return 1;
    if (config_.dims != 2) return 0;
    const uint32_t group = (sender - abi::fabric_lanes(config_)) / config_.num_vcs;
    return abi::fabric_pass_source(config_.compass, group, config_.flags) == (config_.compass ^ 2) ? 0 : 1;
}

// Paused: nothing goes over the cable. Draining: the worker lanes wait, what
// passes through goes on.
bool Router::may_send(uint32_t sender) const { return abi::fabric_router_sends(status_.state, is_lane(sender)); }

bool Router::poll_senders(uint64_t now) {
    bool moved = false;
    const uint32_t n = config_.num_senders;
    uint32_t first = next_sender_;
    for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = (first + k) % n;
        Sender& s = senders_[i];
        moved |= free_sent(s, now);
        if (send_head(s, now)) {
            moved = true;
            next_sender_ = (i + 1) % n;
        }
        if (s.since == now) status_.senders[i].stuck_us = 0;
        status_.senders[i].done = s.sent;
        status_.senders[i].freed = s.freed;
    }
    return moved;
}

bool Router::send_head(Sender& s, uint64_t now) {
    const abi::FabricRing& r = *s.ring;
    const uint32_t index = static_cast<uint32_t>(&s - senders_);
    // A multicast half copied round a dead cable goes on: its copies share
    // the slot, which nothing may take while they are being made.
    if (!may_send(index) && !s.run.chips) {
        s.since = now;  // held by command, not stuck
        return false;
    }
    if (s.sent == *word_at(r.written)) {
        // Nothing to send; packets sent but not yet off the cable (a pulled
        // cable holds them) count as stuck as much as one not sent.
        if (s.freed == s.sent) s.since = now;
        else
            overdue(index, s.since, now, s.reported, header_at(slot_of(r, config_.slot_size, s.freed)),
                    status_.senders[index].stuck_us);
        return false;
    }
    if (path_ == Path::kSyncing) return false;  // until the peer says what arrived
    const uint64_t slot = slot_of(r, config_.slot_size, s.sent);
    abi::FabricPacketHeader& h = header_at(slot);
    const bool cross = abi::fabric_crosses_dateline(config_.dateline, config_.flags, r.vc, h.keeps_escape);
    const uint32_t vc = cross ? 1 : r.vc;
    if (path_ != Path::kCable && !(path_ == Path::kRejoining && marked(vc))) {
        // round the dead cable: by the new tables, or over the fallback relay
        if (path_ != Path::kRouted) {
            cross_cable(h, cross);
            h.vc = static_cast<uint8_t>(vc);
        }
        const bool went = path_ == Path::kRouted
                              ? route_round(s, h, slot)
                              : send_over_fallback(s, h, slot, abi::kFabricHeaderBytes + h.payload_bytes);
        if (!went) {
            overdue(index, s.since, now, s.reported, h, status_.senders[index].stuck_us);
            return false;
        }
        ++s.sent;
        s.since = now;
        s.reported = false;
        return true;
    }
    const abi::FabricRing& peer = config_.receivers[vc];  // the peer's receiver VC has our layout
    const bool room = peer_sent_[vc] - link_.acked[vc] + needs_bubble(index) < peer.slots &&
                      tx_room(2 + config_.num_vcs);
    if (!room) {
        overdue(index, s.since, now, s.reported, h, status_.senders[index].stuck_us);
        return false;
    }
    cross_cable(h, cross);
    const uint32_t bytes = abi::kFabricHeaderBytes + (h.payload_bytes <= config_.slot_size - abi::kFabricHeaderBytes
                                                          ? h.payload_bytes
                                                          : 0);  // the receiver drops it as corrupt
    s.slot[s.sent % r.slots] = {eth::issued(config_.port), static_cast<uint16_t>(peer_sent_[vc]),
                                static_cast<uint8_t>(vc), 0};
    const uint64_t remote = config_.peer_receivers[vc] + uint64_t(config_.slot_size) * (peer_sent_[vc] % peer.slots);
    eth::send_bytes(config_.port, slot, remote, bytes);
    record(h, vc, now);
    status_.bytes_sent = status_.bytes_sent + bytes;
    status_.vc_bytes_sent[vc] = status_.vc_bytes_sent[vc] + bytes;
    status_.vc_packets_sent[vc] = status_.vc_packets_sent[vc] + 1;
    ++peer_sent_[vc];
    eth::send_word(config_.port, peer_word(&link_.filled[vc]), peer_sent_[vc]);
    ++s.sent;
    s.since = now;
    s.reported = false;
    return true;
}

// Whether the peer has given back the slot our `packet` went into: its bytes
// then surely left ours, even if our Ethernet ring has yet to say so.
bool Router::acked(const Sender& s, uint32_t packet) const {
    const uint32_t p = packet % s.ring->slots;
    return static_cast<int16_t>(s.slot[p].link_index - static_cast<uint16_t>(link_.acked[s.slot[p].link_vc])) < 0;
}

// Slots whose bytes are on the wire go back to their writer, all in one increment.
bool Router::free_sent(Sender& s, uint64_t now) {
    if (path_ == Path::kSyncing) return false;  // the dead cable's completions say nothing of what arrived
    const uint32_t before = s.freed;
    const uint32_t noc_done = noc::completed();
    auto done = [&](uint32_t packet) {
        const SentSlot& sent = s.slot[packet % s.ring->slots];
        return sent.by_noc ? reached(noc_done, sent.eth_command + 1)
                           : eth::done(config_.port, sent.eth_command) || acked(s, packet);
    };
    while (s.freed < s.sent && done(s.freed)) ++s.freed;
    if (s.freed == before) return false;
    s.since = now;
    s.reported = false;
    // A lane's writer says where its counter is when it opens the lane.
    noc::semaphore_inc(*reinterpret_cast<const volatile uint64_t*>(&s.ring->freed), s.freed - before);
    return true;
}

bool Router::poll_receiver(uint32_t vc, uint64_t now) {
    Receiver& rx = receivers_[vc];
    bool moved = release(vc);
    // After a return, counts the cable still delivered from before its death
    // trail what the receiver took: only a count past it is news.
    const uint32_t filled = rx_live_[vc] ? link_.filled[vc] : frozen_[vc];
    while (ahead(filled, rx.handled)) {
        const uint64_t slot = slot_of(*rx.ring, config_.slot_size, rx.handled);
        abi::FabricPacketHeader& h = header_at(slot);
        if (!handle_head(rx, vc, h, slot)) {
            if (overdue(config_.num_senders + vc, rx.since, now, rx.reported, h, status_.receivers[vc].stuck_us)) {
                drop(abi::kEventDroppedPacket, config_.num_senders + vc, h);  // the timeout event is posted
            } else {
                break;
            }
        }
        rx.noc_command[rx.handled % rx.ring->slots] = noc::issued();
        status_.bytes_received = status_.bytes_received + abi::kFabricHeaderBytes + h.payload_bytes;
        status_.vc_bytes_received[vc] = status_.vc_bytes_received[vc] + abi::kFabricHeaderBytes + h.payload_bytes;
        ++rx.handled;
        rx.decided = false;
        rx.since = now;
        rx.reported = false;
        moved = true;
    }
    if (!ahead(filled, rx.handled)) rx.since = now;
    if (rx.since == now) status_.receivers[vc].stuck_us = 0;
    status_.receivers[vc].done = rx.handled;
    return release(vc) || moved;
}

// Takes the head's route decision once; false while it waits for room to forward.
bool Router::handle_head(Receiver& rx, uint32_t vc, abi::FabricPacketHeader& h, uint64_t slot) {
    if (config_.flags & abi::kFabricRelay)  // a relay passes everything to its chip's router, as it came
        return forward(config_.forward[0][vc], slot, abi::kFabricHeaderBytes + h.payload_bytes);
    if (!rx.decided) {
        rx.head = on_receive(h, hop_);
        rx.decided = true;
    }
    const Decision d = rx.head;
    const uint32_t channel = config_.num_senders + vc;
    if (d.expired) {
        drop(abi::kEventDroppedPacket, channel, h);
        return true;
    }
    if (d.lost) {
        drop(abi::kEventRoutingError, channel, h);
        return true;
    }
    if (h.payload_bytes > config_.slot_size - abi::kFabricHeaderBytes) {
        drop(abi::kEventDroppedPacket, channel, h);  // a corrupt header: its payload cannot be in the slot
        return true;
    }
    if (d.forward) {
        const uint32_t out_vc = config_.dims == 2 ? vc_after_turn(vc, d.next, config_.compass, config_.flags) : vc;
        if (!config_.forward[d.next][out_vc].slots) {
            drop(abi::kEventRoutingError, channel, h);  // the line (or mesh) ends here
            return true;
        }
        if (!forward(config_.forward[d.next][out_vc], slot, abi::kFabricHeaderBytes + h.payload_bytes)) {
            status_.receivers[vc].waits_for = 1 + d.next + 256 * out_vc;
            return false;
        }
        status_.receivers[vc].waits_for = 0;
    }
    if (d.deliver) execute(h, slot + abi::kFabricHeaderBytes);
    return true;
}

// Into another router's pass-through channel, if it has room.
bool Router::forward(const abi::FabricRing& f, uint64_t slot, uint32_t bytes) {
    if (!push(f, forwarded_[&f - &config_.forward[0][0]], slot, bytes)) return false;
    status_.forwarded = status_.forwarded + 1;
    return true;
}

// The packet's NoC command on this chip.
void Router::execute(const abi::FabricPacketHeader& h, uint64_t payload) {
    switch (h.noc_command) {
        case abi::kFabricWrite: noc::async_write(payload, h.dst_address, h.payload_bytes); break;
        case abi::kFabricAtomicInc: noc::semaphore_inc(h.sem_address, h.inc_value); break;
        case abi::kFabricWriteInc:
            noc::async_write_inc(payload, h.dst_address, h.payload_bytes, h.sem_address, h.inc_value);
            break;
        case abi::kFabricInlineWrite: noc::async_inline_write(h.dst_address, h.inc_value); break;
        case abi::kFabricScatterWrite: {
            const uint64_t dst[abi::kFabricMaxScatter] = {h.dst_address, h.scatter[0], h.scatter[1]};
            const uint32_t parts = h.scatter[1] ? 3 : h.scatter[0] ? 2 : 1;
            const uint32_t part = h.payload_bytes / parts;
            for (uint32_t i = 0; i < parts; ++i) noc::async_write(payload + uint64_t(part) * i, dst[i], part);
            break;
        }
        default: drop(abi::kEventDroppedPacket, config_.num_senders, h); return;
    }
    status_.delivered = status_.delivered + 1;
}

// Asleep, a router is rung only for work from others (packets, credits,
// freed slots) unless it holds something that waits on its own commands: a
// slot to give back once the NoC has read it, sends held for room in the
// Ethernet ring, frees off the cable (the NoC's completions drive them), or
// a channel so full that its writer waits for the slots we sent. The sent
// slots of a channel with room can wait: the peer's credit frees them.
uint32_t Router::wait_value() const {
    for (uint32_t v = 0; v < config_.num_vcs; ++v)
        if (receivers_[v].released != receivers_[v].handled || fallback_rx_[v].released != fallback_rx_[v].handled)
            return 0;
    if (path_ != Path::kCable || !tx_room(2 + config_.num_vcs)) return 0;
    for (uint32_t i = 0; i < config_.num_senders; ++i) {
        const Sender& s = senders_[i];
        if (s.sent != s.freed && *word_at(s.ring->written) - s.freed >= s.ring->slots) return 0;
    }
    return abi::kWaitOthersOnly;
}

// Slots whose NoC reads are done go back to the peer: one credit word for all.
bool Router::release(uint32_t vc) {
    Receiver& rx = receivers_[vc];
    const uint32_t done = noc::completed();
    while (rx.released < rx.handled && reached(done, rx.noc_command[rx.released % rx.ring->slots])) ++rx.released;
    status_.receivers[vc].freed = rx.released;
    // Nobody reads credits over a dead cable: they wait for the peer's mark,
    // and `credited` stays what the peer was last sent (the cable, lossless,
    // still delivers it when it returns).
    if (!rx_live_[vc] || rx.released == rx.credited || !tx_room(1)) return false;
    rx.credited = rx.released;
    eth::send_word(config_.port, peer_word(&link_.acked[vc]), rx.credited);
    return true;
}

// A few words per packet into this router's own L1, only when the host
// asked for a log: the header's bytes stay in the slot, which is reused.
void Router::record(const abi::FabricPacketHeader& h, uint32_t vc, uint64_t now) {
    if (!config_.record_slots) return;
    const uint32_t i = status_.recorded;
    auto& r = pointer_to<abi::FabricPacketRecord>(config_.records)[i % config_.record_slots];
    r.src = h.src;
    r.dst = h.dst;
    r.seq = h.seq;
    r.noc_command = h.noc_command;
    r.send_type = h.send_type;
    r.vc = static_cast<uint8_t>(vc);
    r.hops = h.hops;
    r.payload_bytes = h.payload_bytes;
    r.inc_value = h.inc_value;
    r.dst_address = h.dst_address;
    r.sem_address = h.sem_address;
    r.sent_ticks = now;
    status_.recorded = i + 1;
}

void Router::drop(uint32_t kind, uint32_t channel, const abi::FabricPacketHeader& h) {
    status_.dropped = status_.dropped + 1;
    status::post(kind, config_.port, channel, describe(h));
}

bool Router::overdue(uint32_t channel, uint64_t since, uint64_t now, bool& reported, const abi::FabricPacketHeader& h,
                     volatile uint32_t& stuck_us) {
    const uint64_t us = (now - since) / timer::ticks_per_us();
    stuck_us = us > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(us);
    if (!config_.timeout_us || us < config_.timeout_us || reported) return false;
    reported = true;
    status_.timeouts = status_.timeouts + 1;
    status::post(abi::kEventTimeout, config_.port, channel, describe(h));
    return (config_.flags & abi::kFabricDropStuck) && channel >= config_.num_senders;
}

void Router::stop() {
    // A pulled cable never drains: what is queued for it is dropped, not
    // waited for, so a fabric stops even with a dead cable.
    const uint32_t port = config_.port;
    wait_active([&] { return eth::completed(port) == eth::issued(port) || !eth::link_up(port); }, abi::kWaitEthRing,
                port);
    if (eth::completed(port) != eth::issued(port)) eth::recover(port, /*drop_queued=*/true);
    noc::barrier();
}

}  // namespace weft::fabric
