#include "ccl/lanes.h"

#include <algorithm>

#include "common/error.h"
#include "weft/abi/edm.h"

namespace weft::ccl {

void check_workers_per_link(uint32_t workers_per_link, uint32_t worker_cores) {
    const std::string k = std::to_string(workers_per_link);
    if (workers_per_link == 0) throw Error("workers_per_link must be at least 1 (1: one worker per port and role)");
    if (2ull * workers_per_link > worker_cores)
        throw Error("workers_per_link " + k + " needs " + std::to_string(2ull * workers_per_link) +
                    " worker cores on a chip that receives and passes on (" + k + " receivers and " + k +
                    " senders) but the board has " + std::to_string(worker_cores) + "; use at most " +
                    std::to_string(std::max<uint32_t>(1, worker_cores / 2)));
    if (2ull * workers_per_link > abi::kEdmMaxChannels)
        throw Error("workers_per_link " + k + " needs " + std::to_string(2ull * workers_per_link) +
                    " EDM channels on a link used both ways but an EDM holds " + std::to_string(abi::kEdmMaxChannels));
}

std::vector<uint32_t> choose_lanes(const std::vector<LinkDirection>& directions,
                                   const std::vector<uint32_t>& workers_in_use, uint32_t worker_cores,
                                   uint32_t workers_per_link) {
    std::vector<uint32_t> lanes(directions.size(), 1);
    std::vector<uint32_t> spare(workers_in_use.size());
    for (size_t c = 0; c < spare.size(); ++c)
        spare[c] = worker_cores > workers_in_use[c] ? worker_cores - workers_in_use[c] : 0;
    for (uint32_t level = 2; level <= workers_per_link; ++level)
        for (size_t d = 0; d < directions.size(); ++d) {
            const LinkDirection& x = directions[d];
            if (x.pieces < level || lanes[d] + 1 != level) continue;  // no piece would use it; or it fell behind
            // One more sender core at the start and one more receiver core at the end.
            const bool fits = x.from_chip == x.to_chip ? spare[x.from_chip] >= 2
                                                       : spare[x.from_chip] >= 1 && spare[x.to_chip] >= 1;
            if (!fits) continue;
            --spare[x.from_chip];
            --spare[x.to_chip];
            lanes[d] = level;
        }
    return lanes;
}

}  // namespace weft::ccl
