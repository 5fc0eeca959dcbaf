// Moves a buffer over every link of a cluster, in both directions at once,
// and checks every byte on the host (and every word on the receiving chip).
#pragma once
#include <chrono>
#include <vector>

#include "driver/cluster.h"

namespace weft {

struct LinkTransfer {
    uint32_t from_chip, from_port, to_chip, to_port;
    uint64_t bytes = 0;
    uint64_t wrong_bytes = 0;   // host check
    uint64_t chip_checked = 0;  // bytes the receiving kernel checked itself
    int32_t wrong_words = 0;    // ... and the words it found wrong
    double seconds = 0;         // sender's time on the chip clock
};

struct LinkTestOptions {
    uint64_t bytes = 64 * 1024;
    uint32_t packet = 16 * 1024;
    uint32_t seed = 1;
    uint64_t chip_check_limit = 64 * 1024;  // receivers check at most this much on the chip
    std::chrono::milliseconds timeout{20000};
};

std::vector<LinkTransfer> run_link_test(Cluster& cluster, const LinkTestOptions& options);

}  // namespace weft
