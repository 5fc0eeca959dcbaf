// The ERISC data mover kernel. Arguments: abi::EdmArgs, the address of the
// abi::EdmConfig the host EDM builder wrote into this core's L1.
#include "edm/edm.h"
#include "kernels/kernel.h"
#include "rt/address.h"

extern "C" int kernel_main(weft::KernelArgs args) {
    weft::edm::Edm edm(*weft::pointer_to<weft::abi::EdmConfig>(args.as<weft::abi::EdmArgs>().config));
    return edm.run();
}
