// Resident images on a live cluster (abi/resident.h): started once, running
// until stopped, keeping the top of their core's free L1. The control block
// records them (abi::CoreImage), so every process sees which cores run one
// and what L1 they keep, an op's L1 allocator stays out of it
// (transport::L1Allocator::keep_out), and a launch on such a core is refused
// by name.
//
//   auto r = resident::start(cluster, chip, core, image, 64 << 10, configure, 5s);
//   ... ops run beside it ...
//   resident::stop(cluster, chip, core, 5s);
#pragma once
#include <stdint.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "driver/machine.h"
#include "weft/abi/resident.h"

namespace weft::resident {

struct Running {
    uint32_t chip = 0, core = 0;
    std::string name;
    Region l1;             // the L1 it keeps
    uint64_t control = 0;  // its abi::ResidentControl (at l1.base)
};

// Writes the image's own configuration into the kept L1 (after the control
// structure: `free` is what is left of it) and returns its address, or 0.
using Configure = std::function<uint64_t(ChipWriter& memory, uint32_t chip, Region free)>;

// The L1 an image keeping l1_bytes on `core` gets: the top of the core's free
// L1, 64-byte aligned, the same on every chip of the board, so a builder can
// place what the images on two chips tell each other before either starts.
// Throws weft::Error naming (chip, core) if it does not fit.
Region kept_l1(const BoardInfo& board, uint32_t chip, uint32_t core, uint64_t l1_bytes);
// Loads `image` on (chip, core), keeps the top l1_bytes of the core's free L1
// for it, and returns once the image reports it runs. Throws weft::Error
// naming the core when it is busy, the L1 does not fit, or the image faults or
// does not start within `timeout`.
Running start(Machine& machine, uint32_t chip, uint32_t core, const KernelImage& image, uint64_t l1_bytes,
              const Configure& configure, std::chrono::milliseconds timeout);
// Asks the image on (chip, core) to stop, waits for its launch to end, and
// frees its L1. An image that faults stopping or does not stop by the
// deadline (a router whose cable is pulled) is stopped by force (the host's
// stop word, else a reset of its chip): it is gone and its L1 free either
// way. Returns "" for a clean stop, else what happened, naming the image and
// core. Throws weft::Error if none runs there.
std::string stop(Machine& machine, uint32_t chip, uint32_t core, std::chrono::milliseconds timeout);
// Every resident image of the cluster, from the control blocks.
std::vector<Running> list(Machine& machine);

}  // namespace weft::resident
