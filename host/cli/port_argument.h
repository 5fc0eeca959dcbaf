// Where a command takes a link end: "CHIP PORT" or "CHIP.PORT", the port by
// number (1) or by name as weft status prints it (E, W1, p3). Names need the
// board, so the words are kept as typed and resolved once the cluster is known.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "driver/board.h"

namespace weft::cli {

struct PortWords {
    std::string chip, port;  // port "" when chip is "C.P"
};

struct ChipPort {
    uint32_t chip = 0, port = 0;
};

// Adds CHIP and PORT positionals (PORT optional: "0.E" alone is both).
void add_chip_port(CLI::App& cmd, PortWords& into);
// Throws UsageError naming the chip or port and what there is.
ChipPort resolve(const PortWords& words, const BoardInfo& board, uint32_t chips);

}  // namespace weft::cli
