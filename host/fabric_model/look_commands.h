// The weft-fabric-model commands that write something to look at rather
// than a number to read: the fabric's state as JSON (state), a record of
// every packet's hops (trace), pictures of the cluster and its routes
// (picture), and run's optional heat map and deadlock picture. main.cpp
// parses the command line; these do the work.
#pragma once
#include <stdint.h>

#include <optional>
#include <string>
#include <vector>

#include "fabric_model/traffic.h"

namespace weft::fabric_model {

// What traffic to run: a ring collective (all_gather, reduce_scatter,
// all_reduce) or "shift" (ring_shift by `distance`).
struct Traffic {
    std::string op;
    uint64_t bytes = 0;
    uint32_t distance = 1;
    // The CCL algorithm whose plan runs (plan_traffic.h); "": all_gather,
    // reduce_scatter and all_reduce run as their ring's packets, the other
    // ops by their first algorithm's plan.
    std::string algo;
};
// Cables failed at virtual time 0, before any traffic: "5.E" (chip 5's E
// port, as cluster files name ports).
using Failures = std::vector<std::string>;

struct StateRequest {
    std::optional<Traffic> traffic;  // none: the fabric at rest
    uint64_t at_ns = 0;              // with traffic: the state once this much virtual time passed
    bool tables = false;
    Failures fail;
};
// Prints the state JSON (state_json.h) on stdout.
void state_command(const ModelOptions& options, const StateRequest& request);

struct TraceRequest {
    Traffic traffic;
    std::string out;  // the trace's JSON file
    size_t max_packets = 1'000'000;
    Failures fail;
};
// Runs the traffic with a TrafficRecorder, writes the record, prints a summary.
void trace_command(const ModelOptions& options, const TraceRequest& request);

struct PictureRequest {
    std::string out_dir;
    std::optional<uint32_t> routes_of;
    Failures fail;
};
// Writes out_dir/cluster.svg (and .dot), and out_dir/routes-of-N.svg with --routes-of.
void picture_command(const ModelOptions& options, const PictureRequest& request);

struct RunRequest {
    Traffic traffic;
    std::string occupancy_png;  // "": no heat map
    uint64_t every_ns = 200;    // between occupancy samples (more are merged on a long run)
    std::string picture;        // "": none; else the cluster, with the cycle if the fabric deadlocks
    Failures fail;
};
// Runs the traffic; draws what was asked for even when the fabric deadlocks
// (then throws the deadlock's report).
OpTime run_command(const ModelOptions& options, const RunRequest& request);

}  // namespace weft::fabric_model
