// Ethernet MACs and the wires between linked ports. A port's TX ring is served
// in order; a frame carries the destination address (TT-link style), so the
// receiving MAC writes the payload straight into the peer chip's memory.
#pragma once
#include <stdint.h>

#include <atomic>
#include <memory>
#include <vector>

#include "bridge/chip_process.h"
#include "driver/cluster_file.h"

namespace weft {

struct LinkDirectionCounters {
    std::atomic<uint64_t> frames{0}, bytes{0}, retransmits{0}, crc_errors{0};
};

struct Link {
    PortRef end[2];
    int line = 0;  // cluster file line that made it
    std::atomic<bool> up{true};
    LinkDirectionCounters dir[2];  // dir[i]: traffic sent by end[i]
    std::atomic<uint64_t> retrains{0};
};

class Ethernet {
public:
    Ethernet(const ClusterSpec& spec, std::vector<std::unique_ptr<ChipProcess>>& chips);

    // Serves up to `budget` commands of (chip, port)'s TX ring.
    uint32_t run_port(uint32_t chip, uint32_t port, uint32_t budget);
    // Publishes every port's state into the chips' control blocks.
    void publish_port_states();
    void set_link_up(size_t link, bool up);
    // A chip died: its links go down.
    void chip_died(uint32_t chip);
    const std::vector<std::unique_ptr<Link>>& links() const { return links_; }
    int link_index(uint32_t chip, uint32_t port) const;
    // The chip at the other end of a port's cable, or -1.
    int peer_chip(uint32_t chip, uint32_t port) const;

private:
    uint32_t exec(uint32_t chip, uint32_t port, const abi::EthCommand& c);

    const ClusterSpec& spec_;
    std::vector<std::unique_ptr<ChipProcess>>& chips_;
    std::vector<std::unique_ptr<Link>> links_;
    std::vector<int> link_of_port_;  // chip * kMaxPorts + port -> link index or -1
};

}  // namespace weft
