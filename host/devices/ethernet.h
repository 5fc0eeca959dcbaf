// Ethernet MACs and the cables between linked ports. A port's TX ring is
// served in order: each command is cut into TT-link frames of at most the
// link's mtu, carrying the destination address, and handed to the port's MAC,
// which writes the payload straight into the peer chip's memory; Go-Back-N
// delivers every frame exactly once and in order, so a word sent after bytes
// lands after them. A command completes (the ring head passes it) once every
// frame of it is acknowledged. While a cable is pulled or retraining, commands
// wait: the firmware's own timeouts decide when to give up.
#pragma once
#include <stdint.h>

#include <functional>
#include <memory>
#include <vector>

#include "devices/device_chip.h"
#include "devices/devices.h"
#include "devices/tt_link_cable.h"
#include "driver/cluster_file.h"

namespace weft {

struct Link {
    PortRef end[2];
    int line = 0;  // cluster file line that made it
    // Which end (0 or 1) is `chip`'s `port`; the far end is 1 - side.
    int side(uint32_t chip, uint32_t port) const { return end[0].chip == chip && end[0].port == port ? 0 : 1; }
    std::unique_ptr<TtLinkCable> cable;
    // Frames whose header the wire corrupted into an address outside the
    // receiving chip's memory and whose CRC still matched (1 in 2^32 corrupted frames).
    std::atomic<uint64_t> misaddressed{0};
};

class Ethernet {
public:
    // Monotonic µs: the cables' retransmit timers, flapping and shaping run on
    // it. The host's steady clock in the bridge; a simulator's time elsewhere.
    using Clock = std::function<uint64_t()>;
    static uint64_t steady_now_us();

    // chips[i] is chip i of the spec; they outlive the Ethernet.
    Ethernet(const ClusterSpec& spec, std::vector<DeviceChip*> chips, Clock now_us = steady_now_us);

    // Serves (chip, port)'s TX ring: frames its commands and moves frames on
    // its cable. Returns the commands completed (plus one if frames moved but
    // none completed), 0 when nothing progressed.
    uint32_t run_port(uint32_t chip, uint32_t port, uint32_t budget);
    // Publishes every port's state into the chips' control blocks.
    void publish_port_states();
    // Plugs or pulls a link's cable (pulled: frames wait, nothing fails).
    void set_link_up(size_t link, bool up);
    // A chip died: its links go down and their commands fail.
    void chip_died(uint32_t chip);
    const std::vector<std::unique_ptr<Link>>& links() const { return links_; }
    int link_index(uint32_t chip, uint32_t port) const;
    // The chip at the other end of a port's cable, or -1.
    int peer_chip(uint32_t chip, uint32_t port) const;
    // A plugged cable still has frames to deliver or acknowledge: its
    // retransmit timer needs the engine awake (a pulled one waits for a plug).
    bool in_flight() const;
    // µs (at least 1) until a plugged shaped cable's next frame is due
    // (tt_link_cable.h's next_due_us); -1 if none is on a wire.
    long until_frame_due_us() const;
    // The cores of `chip` whose L1 frames landed in since the last call.
    CoreTouches take_landed(uint32_t chip);

private:
    // Where a port's ring stands between head (completed) and tail (queued).
    struct TxPort {
        uint32_t next = 0;                         // ring index of the command being cut into frames
        uint32_t offset = 0;                       // bytes of it already framed
        uint64_t queued = 0;                       // frames handed to the MAC, ever
        uint64_t last_frame[abi::kEthSlots] = {};  // per ring slot: `queued` once its command was framed
    };

    uint32_t frame_commands(uint32_t chip, uint32_t port, int side, abi::EthRing& ring, TxPort& tx);
    uint32_t complete_commands(abi::EthRing& ring, TxPort& tx, uint64_t frames_done);
    void deliver(const Link& link, int receiver, uint64_t dst, const uint8_t* payload, size_t len);

    const ClusterSpec& spec_;
    std::vector<DeviceChip*> chips_;
    Clock now_us_;
    std::vector<std::unique_ptr<Link>> links_;
    uint32_t ports_;                   // the board's, per chip
    std::vector<int> link_of_port_;    // chip * ports_ + port -> link index or -1
    std::vector<TxPort> tx_;           // chip * ports_ + port
    uint32_t frame_payload_;           // payload bytes per frame: the link model's mtu
    std::vector<CoreTouches> landed_;  // per chip
};

}  // namespace weft
