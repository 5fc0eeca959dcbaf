// The fabric router (the TT-Fabric architecture spec, "1D Fabric Router" and its 2D VC):
// one per Ethernet port a fabric uses, on the port's ERISC core, started once
// and polled until the host stops it (firmware/resident/resident.h). Written
// against the HAL only, so the same object runs as the `fabric_router`
// resident image, in CMocka and in a host model of many chips.
//
// Each poll:
//   senders (round-robin, one packet each per turn): the head packet of a lane
//     or pass-through channel goes over the cable into the peer's receiver
//     channel of its VC, while the peer has a free slot there (credits: the
//     peer's `acked` count); a slot whose bytes have left is given back to
//     its writer;
//   receivers: the head packet's route decision (route.h) is taken once; it
//     is executed on this chip's NoC, written into the pass-through channel of
//     the router it goes on from (once that has room: 1D the opposite one, 2D
//     the one its route names), or both; the slot goes back to the peer once
//     the NoC has read it.
// A packet that leaves on the ring's dateline cable moves to VC 1, so that no
// cycle of full buffers can close around the ring.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "fabric/route.h"
#include "hal/eth.h"
#include "rt/address.h"
#include "weft/abi/control_protocol.h"
#include "weft/abi/fabric_router.h"

namespace weft::fabric {

// What a router keeps of each packet it sent, until it may free its slot:
// the command that sent it (the NoC's where it went round the cable or over
// the fallback: by_noc), its number among its VC's packets on the cable, and
// that VC.
struct SentSlot {
    uint32_t eth_command;
    uint16_t link_index;
    uint8_t link_vc;
    uint8_t by_noc;
};
static_assert(sizeof(SentSlot) == 8, "SentSlot layout");

class Router {
public:
    // The records a router keeps per slot of its channels live in memory its
    // owner gives it, as many as `config`'s channels have slots: the resident
    // image keeps room for the most a config may have (kMaxSlotBytes), a
    // model of thousands of chips only what each router's channels use.
    static constexpr size_t kMaxSlotBytes =
        abi::kFabricMaxSlots * (abi::kFabricMaxSenders * sizeof(SentSlot) + 2 * abi::kFabricMaxVcs * sizeof(uint32_t));
    static size_t slot_bytes(const abi::FabricRouterConfig& config);
    // `slots`: slot_bytes(config) bytes, 8-byte aligned, for the router's life.
    Router(abi::FabricRouterConfig& config, void* slots);

    // One round over every channel; true if anything moved.
    bool poll();
    // The host asked it to stop: lets the cable and NoC commands it issued finish.
    void stop();
    const abi::FabricRouterStatus& status() const { return status_; }
    // How its sleeps are posted for the hang report (host/transport/fabric/fabric_wait).
    uint32_t wait_kind() const { return abi::kWaitFabricRouter; }
    uint64_t wait_address() const { return address_of(&config_); }
    uint32_t wait_value() const;

private:
    // Which way its packets go: over its cable; waiting for the peer to say
    // which of them arrived before the cable died; over the fallback relay;
    // round the dead cable by the chip's new tables (the host's kFabricReroute);
    // its cable back (the host's kFabricRejoin): a VC's packets take the
    // cable again once its mark went into the fallback after them.
    enum class Path : uint8_t { kCable, kSyncing, kFallback, kRouted, kRejoining };

    // A 2D multicast whose run lies beyond the dead cable goes round as a
    // unicast copy to each chip of the run, one at a time (the copies share
    // the slot's header, rewritten once the NoC has read the last).
    struct RunRound {
        abi::FabricNodeId first{};  // the run's first chip
        uint8_t way = 0;            // the run goes on this way (FabricCompass)
        uint8_t chips = 0;          // 0: no multicast being copied
        uint8_t copied = 0;
        uint32_t read_by = 0;  // the NoC command count once the last copy was read
    };
    struct Sender {
        const abi::FabricRing* ring = nullptr;
        uint32_t sent = 0, freed = 0;
        SentSlot* slot = nullptr;  // ring->slots of them, slot i's at [i]
        uint64_t since = 0;        // mtime the head last moved
        bool reported = false;     // its head's timeout event was posted
        RunRound run;
    };
    struct Receiver {
        const abi::FabricRing* ring = nullptr;
        uint32_t handled = 0, released = 0, credited = 0;
        uint32_t* noc_command = nullptr;                  // ring->slots: the NoC command issued once slot i was handled
        bool decided = false;                             // the head's route decision was taken
        Decision head;
        uint64_t since = 0;
        bool reported = false;
    };

    void account(uint64_t now);
    void watch_link();
    bool has_fallback() const { return config_.fallback[0].slots != 0; }
    void start_fallback();
    bool poll_fallback(uint64_t now);
    bool poll_fallback_in(uint32_t vc, uint64_t now);
    void on_sync(const abi::FabricPacketHeader& h);
    bool tell_peer(const abi::FabricPacketHeader& h, uint32_t vc);
    bool awaits_marks() const;
    void start_rejoin();
    bool poll_rejoin();
    bool push_mark(uint32_t vc);
    bool marked(uint32_t vc) const { return marks_ >> vc & 1; }
    bool on_rejoin_mark(const abi::FabricPacketHeader& h);
    void rejoin_from_tables();
    uint32_t settle(const uint32_t took[abi::kFabricMaxVcs]);
    void start_reroute();
    bool route_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot);
    bool copy_run_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot);
    bool route_unicast_round(Sender& s, abi::FabricPacketHeader& h, uint64_t slot);
    abi::FabricNodeId run_chip(const RunRound& run, uint32_t k) const;
    bool send_back(Sender& s, abi::FabricPacketHeader& h, uint64_t slot);
    bool drop_sent(Sender& s, const abi::FabricPacketHeader& h);
    bool push(const abi::FabricRing& to, uint32_t& count, uint64_t slot, uint32_t bytes);
    bool send_over_fallback(Sender& s, abi::FabricPacketHeader& h, uint64_t slot, uint32_t bytes);
    bool release_fallback(uint32_t vc);
    bool is_lane(uint32_t sender) const;
    bool may_send(uint32_t sender) const;
    // 1 where sender's packets need a slot free beyond their own (kFabricBubble), else 0.
    uint32_t needs_bubble(uint32_t sender) const;
    bool poll_senders(uint64_t now);
    bool send_head(Sender& s, uint64_t now);
    bool free_sent(Sender& s, uint64_t now);
    bool acked(const Sender& s, uint32_t packet) const;
    bool poll_receiver(uint32_t vc, uint64_t now);
    bool handle_head(Receiver& rx, uint32_t vc, abi::FabricPacketHeader& h, uint64_t slot);
    bool forward(const abi::FabricRing& to, uint64_t slot, uint32_t bytes);
    void execute(const abi::FabricPacketHeader& h, uint64_t payload);
    bool release(uint32_t vc);
    void record(const abi::FabricPacketHeader& h, uint32_t vc, uint64_t now);
    void drop(uint32_t kind, uint32_t channel, const abi::FabricPacketHeader& h);
    // The head of a channel has not moved since `since`: report it once past
    // the timeout; true if it should be dropped.
    bool overdue(uint32_t channel, uint64_t since, uint64_t now, bool& reported, const abi::FabricPacketHeader& h,
                 volatile uint32_t& stuck_us);
    bool tx_room(uint32_t commands) const { return eth::has_room(config_.port, commands); }
    uint64_t peer_word(const volatile uint32_t* word) const;
    abi::FabricPacketHeader& header_at(uint64_t slot) const { return *pointer_to<abi::FabricPacketHeader>(slot); }

    abi::FabricRouterConfig& config_;
    abi::FabricLinkWords& link_;
    abi::FabricRouterStatus& status_;
    Sender senders_[abi::kFabricMaxSenders];
    Receiver receivers_[abi::kFabricMaxVcs];
    uint32_t peer_sent_[abi::kFabricMaxVcs] = {};  // packets sent into the peer's receiver VC v
    // packets written into each forward ring (FabricRouterConfig::forward, flattened)
    uint32_t forwarded_[abi::kFabricMaxDirections * abi::kFabricMaxVcs] = {};
    Hop hop_;  // where it stands, for route decisions
    Path path_ = Path::kCable;
    // kSyncing, kFallback: the dead cable's packets our receivers take (the
    // count when it died); later ones it delivers when it returns are stale.
    uint32_t frozen_[abi::kFabricMaxVcs] = {};
    // Whether receiver v reads its cable: not from the cable's death until
    // the peer's kFabricRejoinMark for v came round the fallback.
    bool rx_live_[abi::kFabricMaxVcs] = {true, true, true};
    bool sync_sent_ = false;
    uint32_t marks_ = 0;  // kRejoining: bit v, VC v's mark went into the fallback
    // The NoC command count from which the fallback stage is ours again: the
    // sync or a mark pushed from it may not have been read yet.
    uint32_t stage_free_at_ = 0;
    Receiver fallback_rx_[abi::kFabricMaxVcs];         // the peer's packets, through our relay
    uint32_t fallback_sent_[abi::kFabricMaxVcs] = {};  // packets written into fallback[vc]
    uint32_t next_sender_ = 0;                         // round-robin: who goes first next time
    uint64_t last_poll_ = 0;                           // mtime of the previous poll
    bool last_moved_ = false;                          // whether it moved anything
    bool link_was_up_ = true;
};

}  // namespace weft::fabric
