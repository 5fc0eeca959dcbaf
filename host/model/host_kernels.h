// The firmware's kernels built for the host board, by the names their images
// have on a chip: what the host-model machine runs when the host launches
// that image (host_cluster.h). Each is the kernel's own source, its
// kernel_main renamed (boards/host/CMakeLists.txt).
#pragma once
#include <string>

#include "kernels/kernel.h"

namespace weft::model {

using HostKernelMain = int (*)(KernelArgs);

// The kernel named `name` ("ccl_worker", "edm", "fabric_router",
// "fabric_multicast"), or nullptr
// if none is built for the host board.
HostKernelMain host_kernel(const std::string& name);
// The names there are, for an error that lists them.
std::string host_kernel_names();

}  // namespace weft::model
