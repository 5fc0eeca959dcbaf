// Cluster files for clusters too large to write by hand: meshes of the same
// shape laid out as a grid of meshes, each joined to its east and south
// neighbours by a few cables between facing edge chips (the TT-Fabric spec's
// exit nodes). What weft-fabric-model cluster prints and the benches load.
#pragma once
#include <stdint.h>

#include <cstdio>
#include <string>

#include "driver/cluster_file.h"

namespace weft::fabric_model {

struct GridCluster {
    uint32_t meshes = 4;
    uint32_t width = 4, height = 4;  // each mesh's chips
    uint32_t cables = 2;             // per pair of neighbouring meshes, at most the shared edge
    std::string board = "qemu-virt";
    // Add a systems: section (each mesh a system, the grid of meshes a
    // mesh_2d_no_wrap of systems), for the hierarchical all-reduce.
    bool systems = false;
};

// The cluster file's text. Throws weft::Error for a shape the fabric cannot
// number or cable (no chips, more cables than an edge has chips), or systems
// on a grid of meshes with a short last row.
std::string grid_cluster_yaml(const GridCluster& grid);
// Throws weft::Error for a grid without chips or with more cables between
// neighbouring meshes than their shared side has chips.
void check_grid(const GridCluster& grid);

// The same cluster made in memory, without a file: a cluster file holds at
// most kMaxClusterChips chips (it guards QEMU clusters against typos), the
// model runs as many as the fabric's tables address. Throws as
// grid_cluster_yaml does.
ClusterSpec grid_cluster_spec(const GridCluster& grid);

// Writes it to a file of its own under /tmp and returns the path.
std::string write_grid_cluster(const GridCluster& grid);
// write_grid_cluster's file, removed when this goes.
class GridClusterFile {
public:
    explicit GridClusterFile(const GridCluster& g) : path_(write_grid_cluster(g)) {}
    ~GridClusterFile() { std::remove(path_.c_str()); }
    GridClusterFile(const GridClusterFile&) = delete;
    GridClusterFile& operator=(const GridClusterFile&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace weft::fabric_model
