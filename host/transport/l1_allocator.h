// Places buffers and semaphores in cores' L1 for one program (an op), so
// kernels and host never disagree on a layout and nothing is placed by hand.
// The L1 a resident image keeps (driver/resident.h) is the top of a core's
// free L1; keep_out leaves it alone.
#pragma once
#include <stdint.h>

#include <map>
#include <string>
#include <utility>

#include "common/error.h"
#include "driver/board.h"

namespace weft::transport {

using weft::L1Shortage;

class L1Allocator {
public:
    explicit L1Allocator(const BoardInfo& board) : board_(board) {}

    // Bytes in the free L1 of (chip, core), aligned; throws L1Shortage naming
    // the core, what did not fit and how much room is left.
    uint64_t allocate(uint32_t chip, uint32_t core, uint64_t bytes, uint64_t align, const std::string& what);
    uint64_t used(uint32_t chip, uint32_t core) const;
    uint64_t capacity(uint32_t core) const { return board_.l1_free(core).size; }
    // Nothing is placed at or above `kept.base` on (chip, core) from now on.
    void keep_out(uint32_t chip, uint32_t core, const Region& kept);

private:
    Region free_of(uint32_t chip, uint32_t core) const;

    const BoardInfo& board_;
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> next_;  // (chip, core) -> next free address
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> end_;   // (chip, core) -> below a kept region
};

}  // namespace weft::transport
