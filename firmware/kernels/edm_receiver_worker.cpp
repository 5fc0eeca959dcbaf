// A worker draining EDM receiver channels: unpacks messages into pages.
// Arguments: see edm_worker_common.h.
#include "edm_worker_common.h"

extern "C" int kernel_main(weft::KernelArgs a) { return weft::serve_edm_channels<false>(a); }
