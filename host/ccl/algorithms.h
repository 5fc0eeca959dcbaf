// How each row of the algorithm table (algorithm_table.h) lowers, defined in
// algorithms.cpp (hierarchical.cpp: seed 003's): the plan builders, and the ops a transport runs itself.
#pragma once
#include "ccl/collective.h"
#include "transport/transport.h"

namespace weft::ccl::plans {

Plan all_gather_ring(const PlanContext& ctx);
Plan all_gather_ring_bidir(const PlanContext& ctx);
Plan all_gather_ring_halfway(const PlanContext& ctx);
Plan all_gather_line(const PlanContext& ctx);
Plan all_gather_2d(const PlanContext& ctx);
Plan reduce_scatter_ring(const PlanContext& ctx);
Plan reduce_scatter_ring_bidir(const PlanContext& ctx);
Plan reduce_scatter_line(const PlanContext& ctx);
Plan all_reduce_ring(const PlanContext& ctx);
Plan all_reduce_full_mesh(const PlanContext& ctx);
Plan all_reduce_reduce_root(const PlanContext& ctx);
Plan all_reduce_tree(const PlanContext& ctx);
Plan all_reduce_naive_ring(const PlanContext& ctx);
Plan all_reduce_recursive_doubling(const PlanContext& ctx);
Plan all_reduce_halving_doubling(const PlanContext& ctx);
Plan all_reduce_2d(const PlanContext& ctx);
// Swing's partners a short way off on a ring or torus (swing.cpp).
Plan all_reduce_swing(const PlanContext& ctx);
// Seed 003's five phases over a cluster of systems (hierarchical.cpp).
Plan all_reduce_hierarchical(const PlanContext& ctx);
// Broadcast and reduce: chains both ways round the ring from the root.
Plan rooted_chain(const PlanContext& ctx);
// Broadcast, reduce, gather, scatter: the root and every other chip directly.
Plan rooted_direct(const PlanContext& ctx);
Plan send_recv_ring(const PlanContext& ctx);

}  // namespace weft::ccl::plans

namespace weft::ccl::native {

// All-gather or broadcast by the transport's multicast (transport::Multicast).
void multicast(const OpRequest& r, const OpLayout& l, transport::Transport& t);

}  // namespace weft::ccl::native

namespace weft::ccl {

// Each chip's part of a multicast all-gather (its block to every other chip)
// or broadcast (the root's whole vector). Throws weft::Error for an
// all-gather along an inner dimension or a block past 4 GiB.
std::vector<transport::MulticastPart> multicast_parts(const OpRequest& r, const OpLayout& l);

}  // namespace weft::ccl
