#include "cli/port_argument.h"

#include <algorithm>

#include "cli/arguments.h"
#include "cli/exit_codes.h"
#include "driver/cluster_file.h"

namespace weft::cli {

namespace {

// What can be checked before the board is known: numbers fit 32 bits, names look like names.
void check_port_word(const std::string& w) {
    if (!w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        parse_whole(w, 0, UINT32_MAX);
        return;
    }
    if (w.empty() || std::string("NESWp").find(w[0]) == std::string::npos ||
        !std::all_of(w.begin() + 1, w.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw Error("a port is a number or a name (N, E, S, W with an optional plane: E1; pN), not '" + w + "'");
}

}  // namespace

void add_chip_port(CLI::App& cmd, PortWords& into) {
    add_word(
        cmd, "CHIP", "", into.chip,
        [](const std::string& w) {
            const size_t dot = w.find('.');
            parse_whole(w.substr(0, dot), 0, UINT32_MAX);
            if (dot != std::string::npos) check_port_word(w.substr(dot + 1));
        },
        "the chip, or CHIP.PORT (e.g. 0.E)")
        ->required();
    // "weft link 0.E down" puts the state here: link lets up and down through.
    add_word(
        cmd, "PORT", "", into.port,
        [](const std::string& w) {
            if (w != "up" && w != "down") check_port_word(w);
        },
        "its port: a number or a name as weft status shows it (N, E, S, W; E1 for plane 1)");
}

ChipPort resolve(const PortWords& w, const BoardInfo& board, uint32_t chips) {
    std::string chip = w.chip, port = w.port;
    if (const size_t dot = chip.find('.'); dot != std::string::npos) {
        if (!port.empty()) throw UsageError("CHIP '" + chip + "' names its port already; PORT '" + port + "' is extra");
        port = chip.substr(dot + 1);
        chip.erase(dot);
    }
    if (port.empty()) throw UsageError("PORT is required (or CHIP.PORT, e.g. 0.E)");
    ChipPort r;
    try {
        r.chip = static_cast<uint32_t>(parse_whole(chip, 0, chips - 1));
    } catch (const Error&) {
        throw UsageError("CHIP: the cluster has chips 0 to " + std::to_string(chips - 1) + ", not '" + chip + "'");
    }
    const int id = port_named(board, port);
    if (id < 0) {
        std::string names;
        for (const PortInfo& p : board.ports)
            names += (names.empty() ? "" : ", ") + port_name(board, p.id) + " (" + std::to_string(p.id) + ")";
        throw UsageError("PORT: board " + board.name + " has no port '" + port + "' (its ports: " + names + ")");
    }
    r.port = static_cast<uint32_t>(id);
    return r;
}

}  // namespace weft::cli
