// The `fabric_router` resident image: one 1D fabric router (router.h) on the
// ERISC core of its port, configured by the host fabric builder
// (abi::ResidentControl::config is its abi::FabricRouterConfig).
#include "fabric/router.h"
#include "kernels/kernel.h"
#include "resident/resident.h"
#include "rt/address.h"

using namespace weft;

extern "C" int kernel_main(KernelArgs a) {
    const auto& args = a.as<abi::ResidentArgs>();
    const auto& control = *pointer_to<const abi::ResidentControl>(args.control);
    if (!control.config) mailbox::panic(abi::kPanicBadArgs, 0);
    alignas(8) uint8_t slots[fabric::Router::kMaxSlotBytes];
    fabric::Router router(*pointer_to<abi::FabricRouterConfig>(control.config), slots);
    return resident::run(args, router);
}
