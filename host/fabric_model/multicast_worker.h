// The fabric's own multicast algorithms (all_gather/multicast and
// broadcast/multicast) in the model: on each chip a poller does what the
// fabric_multicast kernel does on QEMU (firmware/kernels/fabric_multicast.cpp):
// its block goes out once each way as multicast packets the routers copy off
// at every chip of the run, the last packet of each adding 1 to a semaphore
// at one address on every chip; then it waits for its share of blocks.
#pragma once
#include <stdint.h>

#include "ccl/collective.h"
#include "model/fabric_model.h"

namespace weft::fabric_model {

// Adds one multicast worker per chip to `m` (a 1D fabric), its semaphore at
// `sem` on every chip. Throws weft::Error on a 2D fabric, as weft run does.
void add_multicast_workers(model::FabricModel& m, const ccl::OpRequest& r, const ccl::OpLayout& l, uint64_t sem);

}  // namespace weft::fabric_model
