// Resident images: ERISC (or worker) firmware started once and running until
// told to stop, such as a fabric router, as opposed to a kernel launched per
// op. The host keeps the top of the core's free L1 for it (the region is
// recorded in the control block's abi::CoreImage), places this control
// structure at the base of that region, and launches the image with
// ResidentArgs. To stop it the host sets `stop`, rings the core (HostArea::ring)
// and waits for the launch to finish.
#pragma once
#include <stdint.h>

#include "weft/abi/kernel_args.h"

namespace weft::abi {

inline constexpr uint32_t kResidentMagic = 0x5253'4431;  // "RSD1"

enum ResidentState : uint32_t {
    kResidentStarting = 0,
    kResidentRunning = 1,  // polling its work
    kResidentStopped = 2,  // stopped on request; the launch returns next
};

struct ResidentControl {
    uint32_t magic;           // host
    volatile uint32_t stop;   // host: non-zero asks the image to stop
    volatile uint32_t state;  // image: ResidentState
    volatile uint32_t polls;  // image: polls that did work, for reports
    uint64_t config;          // host: the image's own configuration (in the kept L1), 0: none
    uint64_t l1_base;         // host: the L1 the image keeps, this structure first
    uint64_t l1_size;
    uint64_t reserved;
};
static_assert(sizeof(ResidentControl) == 48, "ResidentControl layout");

// The control structure's share of the kept L1; the image's own data follows.
inline constexpr uint32_t kResidentControlBytes = 64;
static_assert(sizeof(ResidentControl) <= kResidentControlBytes, "ResidentControl fits its share");

struct ResidentArgs {
    uint64_t control;  // this image's ResidentControl
};
static_assert(sizeof(ResidentArgs) == 8 && kIsKernelArgs<ResidentArgs>, "ResidentArgs layout");

}  // namespace weft::abi
