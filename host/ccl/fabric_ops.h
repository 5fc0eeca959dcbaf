// Collectives written for the fabric itself rather than as streams between
// workers: a block goes out as one multicast packet stream each way and the
// routers deliver it to every chip of the run (tt-metal's fabric all-gather).
// Only over --transport fabric; `auto` does not pick them (the cost model
// knows the lowered ops only).
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "ccl/collective.h"
#include "driver/cluster.h"
#include "transport/fabric/fabric.h"

namespace weft::ccl {

// The fabric-native algorithms of an op (all_gather, broadcast: "multicast").
const std::vector<std::string>& fabric_algorithms(Collective c);
bool is_fabric_algorithm(Collective c, const std::string& algo);

// Runs it: one fabric_multicast kernel per chip. Returns the seconds from the
// first launch to the last kernel's end. Throws weft::Error for an op it
// cannot do (an all-gather along an inner dimension), TimeoutError with the
// hang report past `timeout`, Error naming the router as soon as the fabric
// fails under it (Fabric::fault).
double run_fabric_multicast(Cluster& cluster, const transport::Fabric& running, const OpRequest& r,
                            const OpLayout& l, std::chrono::milliseconds timeout);

}  // namespace weft::ccl
