// How weft's generated help reads: "Commands" and "Arguments", and a usage
// line that shows the whole command, a nested one's parents' arguments
// included ("weft fault CHIP PORT drop RATE").
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace weft::cli {

class HelpFormat : public CLI::Formatter {
public:
    HelpFormat();
    std::string make_usage(const CLI::App* app, std::string name) const override;
};

}  // namespace weft::cli
