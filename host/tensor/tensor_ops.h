// Ops on tensors in any layout (include/weft/abi/tensor.h), over a running
// fabric: all-gather concatenates each chip's part along a dimension into a
// gathered tensor whose memory may differ from the parts' (resharding in
// flight: each page goes straight to its place in the gathered layout);
// send/recv moves one chip's tensor into another memory on another chip.
#pragma once
#include <stdint.h>

#include <chrono>
#include <utility>
#include <vector>

#include "driver/cluster.h"
#include "driver/cluster_topology.h"
#include "transport/fabric/fabric.h"
#include "weft/abi/tensor.h"

namespace weft::tensor {

// The gathered tensor's spec: `part`'s shape with shape[dim] x ranks, in
// `memory` (its banks, grid and shard shape; its shape, dtype and layout are
// replaced).
abi::TensorSpec gathered(const abi::TensorSpec& part, uint32_t dim, uint32_t ranks, abi::TensorSpec memory);
// Throws weft::Error unless 2 to abi::kTensorMaxPeers ranks gather, and
// every page of every rank's part lands inside one page of `whole`, and
// together they fill it without overlap (a tile split by a dimension not a
// multiple of 32, a row-major page across two, ...).
void check_all_gather(const abi::TensorSpec& part, const abi::TensorSpec& whole, uint32_t dim, uint32_t ranks);

// How all_gather moves the parts among `chips` (at least 3, else straight):
// round a ring where each chip's neighbours in the list, the last and the
// first too, are one cable away (a fabric ring, a torus's row); along a line
// where all but the last and the first are (a line, a mesh's row). Off
// those, still round the ring in the list's order while its steps average
// at most two cables (a mesh in snake or row order, several meshes in their
// ring order): each part crosses a few cables per chip, where sent straight
// to every peer it crosses each peer's whole distance. Else straight.
abi::TensorGatherAlgo gather_algo(const transport::FabricBuilder& fabric, const std::vector<uint32_t>& chips);

// All-gather over `fabric` on `chips` (rank order): every chip holds its part
// at `input` and gets the gathered tensor at `output` (the same addresses on
// each). The kernel runs on `core` of each chip (a worker holding no shard of
// either). Throws weft::Error on a bad request, TimeoutError past `timeout`.
void all_gather(Cluster& cluster, transport::Fabric& fabric, const std::vector<uint32_t>& chips,
                const abi::TensorAt& input, const abi::TensorAt& output, uint32_t dim, uint32_t core,
                std::chrono::milliseconds timeout);

// Throws weft::Error unless `whole` cuts into `ranks` tensors shaped `part`
// along shape[dim] (its dtype and page layout, that dimension divided by
// ranks), each of whose pages holds one run of one page of `whole`.
void check_reduce_scatter(const abi::TensorSpec& whole, const abi::TensorSpec& part, uint32_t dim, uint32_t ranks);

// Throws weft::Error unless `sent` moves page for page into `received`: the
// same shape, dtype and page layout, in any memory.
void check_send_recv(const abi::TensorSpec& sent, const abi::TensorSpec& received);
// Send/recv over `fabric`: chip `from`'s tensor at `input` into `output` on
// chip `to` (resharding in flight), by a kernel on `core` of each. Throws
// weft::Error on a bad request, TimeoutError past `timeout`.
void send_recv(Cluster& cluster, transport::Fabric& fabric, uint32_t from, uint32_t to, const abi::TensorAt& input,
               const abi::TensorAt& output, uint32_t core, std::chrono::milliseconds timeout);
// Many at once, each (from, to) as above: each chip sends at most once and
// receives at most once (a shift round a ring: each chip to the next).
void send_recv(Cluster& cluster, transport::Fabric& fabric, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
               const abi::TensorAt& input, const abi::TensorAt& output, uint32_t core,
               std::chrono::milliseconds timeout);

// One axis of a 2D mesh: its rows (each row's chips, west to east) or its
// columns (north to south).
enum class MeshAxis { kRows, kColumns };
// The groups of chips along `axis` of the cluster's one mesh; throws
// weft::Error for a cluster that is not one 2D mesh or torus.
std::vector<std::vector<uint32_t>> mesh_axis_groups(const ClusterTopology& topology, MeshAxis axis);
// An all-gather in every group at once (each chip in at most one group,
// each group its own ranks), as all_gather does for one.
void all_gather_groups(Cluster& cluster, transport::Fabric& fabric, const std::vector<std::vector<uint32_t>>& groups,
                       const abi::TensorAt& input, const abi::TensorAt& output, uint32_t dim, uint32_t core,
                       std::chrono::milliseconds timeout);

}  // namespace weft::tensor
