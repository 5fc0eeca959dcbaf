// The ERISC data mover kernel. args: config(2) — the address of the
// abi::EdmConfig the host EDM builder wrote into this core's L1.
#include "edm/edm.h"
#include "kernels/kernel.h"

extern "C" int kernel_main(weft::KernelArgs args) {
    weft::edm::Edm edm(*reinterpret_cast<weft::abi::EdmConfig*>(args.u64(0)));
    return edm.run();
}
