// Every running fabric router of a cluster as the host sees it: where it is,
// what the control plane told it, and what it publishes (its state, packet
// and byte counters, busy and idle time, a heartbeat). Read from the routers'
// own L1 (abi::ResidentControl -> FabricRouterConfig -> FabricRouterStatus),
// so any process attached to the cluster sees them, not only the one that
// started the fabric.
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "driver/cluster.h"
#include "weft/abi/fabric_router.h"

namespace weft::transport {

struct RouterView {
    uint32_t chip = 0, core = 0, port = 0;
    std::string way;     // the way its cable leaves the chip: N, E, S or W
    bool relay = false;  // a fallback relay (abi::kFabricRelay), carrying another router's traffic
    uint32_t flags = 0;  // its config's (abi::FabricRouterFlags)
    uint32_t num_vcs = 0;
    abi::FabricRouterStatus status{};
    uint64_t status_address = 0;
    uint64_t packets_sent() const;
    uint64_t packets_received() const;
};

const char* router_state_name(uint32_t state);
// How a fabric with routers' `flags` keeps from deadlocking, for people:
// "bubble flow control (every packet on VC 0)", "datelines (...)", ...
std::string deadlock_avoidance(uint32_t flags);

// The resident fabric routers running now, by chip and core.
std::vector<RouterView> read_routers(Machine& cluster);
// Writes `command` (abi::FabricRouterCommand) to every running router and
// wakes it; returns how many got it.
size_t command_routers(Machine& cluster, uint32_t command);

}  // namespace weft::transport
