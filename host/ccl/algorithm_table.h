// Every collective algorithm, one row each: the op it serves, its name, what
// it needs, and how it lowers. The one list that the runner chooses from and
// that the CLI (help, completion, --algo), the bench and the tests read; a
// transport is chosen through the seam (transport.h) by what a row needs,
// never by its name (as NCCL's selectTransport asks each transport).
#pragma once
#include <stdint.h>

#include <string>
#include <vector>

#include "ccl/collective.h"
#include "transport/transport.h"

namespace weft::ccl {

// What an algorithm needs of the cluster (bits). A ring, a line and both
// directions say what its plan walks: every cluster has a ring and a line
// order (topology.h), so they decide nothing. A grid does: such a row runs
// only on a cluster of one mesh or torus (is_grid).
enum Need : uint32_t {
    kRing = 1u << 0,      // walks the ring order
    kLine = 1u << 1,      // walks the line order
    kBothWays = 1u << 2,  // sends both ways at once: both directions of each cable
    kGrid = 1u << 3,      // rows, then columns of one mesh or torus
    kSystems = 1u << 4,   // the meshes as systems: a cluster file with a systems: section
};

// Lowers an algorithm to sends between workers, which any transport carries.
using PlanBuilder = Plan (*)(const PlanContext& ctx);
// Places an op a transport runs itself, through the capability it needs.
using NativeBuilder = void (*)(const OpRequest& r, const OpLayout& l, transport::Transport& t);

struct Algorithm {
    Collective op;
    const char* name;
    uint32_t needs;         // Need bits
    uint32_t capabilities;  // transport::Capability bits the transport must offer
    PlanBuilder plan;       // one of these two
    NativeBuilder native;
};

// In order: an op's first row is its default fixed choice.
const std::vector<Algorithm>& algorithm_table();
// op's row named `name`; nullptr if it has none.
const Algorithm* find_algorithm(Collective op, const std::string& name);
// Whether a transport of these capabilities offers all a needs of it.
bool capable(const Algorithm& a, uint32_t capabilities);
// On a cluster that is one mesh or torus (`grid`) or not, without systems
// (algorithms_on asks of a cluster's whole shape).
bool can_run(const Algorithm& a, bool grid, uint32_t capabilities);
// The Need bits of shape a cluster offers: kGrid, kSystems.
uint32_t shape_of(const ClusterTopology& t);
// What op's algorithms run on a cluster of that shape over a transport of these capabilities.
std::vector<std::string> algorithms_on(Collective op, const ClusterTopology& t, uint32_t capabilities = 0);
// op's algorithms that can run on a grid (or not) over a transport of these
// capabilities, in table order.
std::vector<std::string> algorithms(Collective op, bool grid = false, uint32_t capabilities = 0);
// Every algorithm of op, wherever it runs.
std::vector<std::string> all_algorithms(Collective op);
// The transport kinds (transport_kinds()) that offer all a's capabilities.
std::vector<std::string> transports_for(const Algorithm& a);
// Why `a` cannot run over the transport named `transport` with these
// capabilities, naming both and the kind that would do; "" if it can.
std::string cannot_run(const Algorithm& a, const std::string& transport, uint32_t capabilities);

// Kept for programs written against 0.7: the grid's own algorithms.
[[deprecated("use ccl::algorithms(op, /*grid=*/true) (algorithm_table.h)")]] std::vector<std::string> grid_algorithms(
    Collective op);

// The overlay plan of `algo` (not "auto"); throws weft::Error for an unknown
// one, or one the transport runs itself.
Plan build_plan(const PlanContext& ctx, const std::string& algo);

}  // namespace weft::ccl
