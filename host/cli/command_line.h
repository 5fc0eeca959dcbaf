// The weft command line: parses into one command and runs it. Every way it
// can end is one of the exit codes in exit_codes.h; a usage error names what
// was wrong and prints the command's usage line.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <map>

#include "cli/commands.h"

namespace weft::cli {

class CommandLine {
public:
    CommandLine();
    int run(int argc, char** argv);

private:
    int run_command();
    int refuse(const std::string& message) const;
    const CLI::App& innermost() const;  // the command being parsed when it went wrong

    CLI::App app_;
    Globals globals_;
    std::map<const CLI::App*, std::function<int()>> runners_;
};

}  // namespace weft::cli
