// make bench, small ops: a 1 KiB all-reduce on ring8 is paid in core
// wake-ups, not in bytes. For each algorithm: its time, the doorbells it
// rings (per op and per chip per step of its critical path), the QEMUs' CPU
// per doorbell, and the same op's time as a multiple of Open MPI's; beside
// them the floor, what one core woken by its own timer costs the host.
#pragma once
#include <nlohmann/json.hpp>

#include "ccl/runner.h"
#include "driver/cluster.h"

namespace weft::bench {

// mpi_us: Open MPI's MPI_Allreduce of the same size on this host (0: none).
nlohmann::json small_ops(Cluster& c, ccl::CollectiveRunner& run, uint64_t bytes, double mpi_us);

}  // namespace weft::bench
