// weft console CHIP: what a chip's firmware printed (its UART, kept in the run
// directory), one core's lines with --core, followed as it grows with -f.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "driver/control_client.h"
#include "driver/paths.h"

namespace weft::cli {
namespace {

constexpr uint32_t kEveryCore = UINT32_MAX;

struct ConsoleArgs {
    uint32_t chip = 0;
    bool follow = false;
    uint32_t core = kEveryCore;
};

std::string console_file(const std::string& run_dir, uint32_t chip, uint32_t core) {
    ControlClient c(run_dir);
    const nlohmann::json info = c.request({{"cmd", "info"}});
    const auto& chips = info.at("chips");
    if (chip >= chips.size())
        throw UsageError("CHIP: the cluster has chips 0 to " + std::to_string(chips.size() - 1) + ", not " +
                         std::to_string(chip));
    if (core != kEveryCore) {
        const BoardInfo board = paths::load_built_board(info.at("board").get<std::string>());
        if (core >= board.cores.size())
            throw UsageError("--core: board " + board.name + " has cores 0 to " +
                             std::to_string(board.cores.size() - 1) + ", not " + std::to_string(core));
    }
    return chips[chip].at("console").get<std::string>();
}

// Prints the complete lines of `text` (a partial last line stays in it).
void print_lines(std::string& text, uint32_t core) {
    const std::string tag = "[core " + std::to_string(core) + "] ";
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = text.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (core == kEveryCore || line.rfind(tag, 0) == 0) std::printf("%s\n", line.c_str());
    }
    text.erase(0, start);
    std::fflush(stdout);
}

int console(const ConsoleArgs& a, const std::string& run_dir) {
    const std::string path = console_file(run_dir, a.chip, a.core);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read chip " + std::to_string(a.chip) + "'s console " + path);
    std::string pending;
    char buf[4096];
    for (;;) {
        while (in.read(buf, sizeof buf) || in.gcount() > 0) pending.append(buf, in.gcount());
        in.clear();
        print_lines(pending, a.core);
        if (!a.follow) break;
        // Following ends when the cluster goes down.
        if (access(paths::control_socket(run_dir).c_str(), F_OK) != 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!pending.empty()) std::printf("%s\n", pending.c_str());
    return 0;
}

}  // namespace

Command add_console(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("console", "what a chip's firmware printed on its console (-f: follow it)");
    auto a = std::make_shared<ConsoleArgs>();
    add_whole(*cmd, "CHIP", "", a->chip, kIds, "the chip")->required();
    cmd->add_flag("-f,--follow", a->follow, "keep printing what comes, until the cluster goes down or Ctrl-C");
    add_whole(*cmd, "--core", "N", a->core, {0, 63}, "only the lines core N printed");
    add_run_dir(*cmd, g.run_dir);
    return {cmd, [a, &g] { return console(*a, g.run_dir); }};
}

}  // namespace weft::cli
