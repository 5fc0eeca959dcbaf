#include "model/host_kernels.h"

#include <iterator>
#include <utility>

extern "C" int weft_host_ccl_worker(weft::KernelArgs args);
extern "C" int weft_host_edm(weft::KernelArgs args);
extern "C" int weft_host_fabric_router(weft::KernelArgs args);
extern "C" int weft_host_fabric_multicast(weft::KernelArgs args);

namespace weft::model {
namespace {

const std::pair<const char*, HostKernelMain> kKernels[] = {
    {"ccl_worker", weft_host_ccl_worker},
    {"edm", weft_host_edm},
    {"fabric_router", weft_host_fabric_router},
    {"fabric_multicast", weft_host_fabric_multicast},
};

}  // namespace

HostKernelMain host_kernel(const std::string& name) {
    for (const auto& [n, main] : kKernels)
        if (name == n) return main;
    return nullptr;
}

std::string host_kernel_names() {
    std::string out;
    for (const auto& k : kKernels) out += (out.empty() ? "" : ", ") + std::string(k.first);
    return out;
}

}  // namespace weft::model
