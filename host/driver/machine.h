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

#include <utility>
#include <vector>

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

// Some chips of a machine as a machine of their own, numbered by index (a
// per-mesh fabric's chips): chip i is chips[i]; `topology` holds the cables
// among them in those numbers (ClusterTopology::among).
class MappedMachine final : public Machine {
public:
    MappedMachine(Machine& whole, std::vector<uint32_t> chips, ClusterTopology topology)
        : whole_(whole), chips_(std::move(chips)), topology_(std::move(topology)) {}
    void write(uint32_t chip, uint64_t address, const void* data, size_t bytes) override {
        whole_.write(chips_.at(chip), address, data, bytes);
    }
    void clear(uint32_t chip, uint64_t address, size_t bytes) override { whole_.clear(chips_.at(chip), address, bytes); }
    void read(uint32_t chip, uint64_t address, void* data, size_t bytes) override {
        whole_.read(chips_.at(chip), address, data, bytes);
    }
    uint32_t chip_count() const override { return static_cast<uint32_t>(chips_.size()); }
    const BoardInfo& board() const override { return whole_.board(); }
    ClusterTopology topology() override { return topology_; }
    FabricSpec fabric_spec() const override { return whole_.fabric_spec(); }

private:
    Machine& whole_;
    std::vector<uint32_t> chips_;
    ClusterTopology topology_;
};

}  // namespace weft
