// A worker feeding EDM sender channels: packs pages into messages.
// Arguments: see edm_worker_common.h.
#include "edm_worker_common.h"

extern "C" int kernel_main(weft::KernelArgs a) { return weft::serve_edm_channels<true>(a); }
