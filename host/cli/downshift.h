// A mesh with rows or columns taken out (the TT-Fabric spec's downshifted
// mesh), as weft routes --remove-row M:Y / --remove-column M:X ask for it:
// the cluster file's control plane after each removal, and what it decided.
#pragma once
#include <string>
#include <vector>

#include "driver/cluster_file.h"
#include "transport/fabric/control_plane.h"

namespace weft::cli {

struct Downshift {
    transport::ControlPlane control;
    std::vector<std::string> decisions;  // one line per removal, for a person
    bool usable = true;                  // no removal cut a mesh or was refused
};

// `rows` and `columns` as the options give them ("M:Y", or "Y" in a cluster
// of one mesh), taken out in that order. Throws UsageError naming a word
// that names no mesh, row or column of the cluster.
Downshift downshift(const ClusterSpec& spec, const std::vector<std::string>& rows,
                    const std::vector<std::string>& columns);

}  // namespace weft::cli
