// A set of chips as the host runtime's builders and planners see it,
// whatever runs them: the QEMU cluster (driver/cluster.h) or the host-model
// machine (host/model/host_cluster.h), where the firmware's own code runs on
// host memory. The transports' builders place and write their configuration
// through this alone, so a fabric is planned the same way on both.
// Launching kernels, resident images and hang reports are the cluster's
// still (driver/cluster.h).
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "driver/board.h"
#include "driver/chip_writer.h"
#include "driver/cluster_topology.h"
#include "driver/fabric_spec.h"

namespace weft {

class Machine : public ChipWriter {
public:
    virtual uint32_t chip_count() const = 0;
    virtual const BoardInfo& board() const = 0;
    // Meshes, coordinates and cables, with each cable's state now.
    virtual ClusterTopology topology() = 0;
    // The cluster file's fabric: settings.
    virtual FabricSpec fabric_spec() const = 0;
    virtual void read(uint32_t chip, uint64_t address, void* data, size_t bytes) = 0;
};

}  // namespace weft
