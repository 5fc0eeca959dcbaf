// What weft run and weft bench share: the op and its type, reduction,
// algorithm and root, checked as they are parsed, and the request they make.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "ccl/runner.h"

namespace weft::cli {

struct CclArgs {
    std::string op, dtype = "f32", redop = "sum", algo = "auto", transport = "auto";
    uint32_t root = 0;
    std::string cluster;
    // Whether --root and --redop were given: an op they mean nothing to refuses them.
    const CLI::Option* root_option = nullptr;
    const CLI::Option* redop_option = nullptr;
};

// OP, --dtype, --redop, --algo, --transport, --root, --cluster. A sweep's --algo may also be "all".
void add_ccl_args(CLI::App& cmd, CclArgs& a, bool sweep);

// --algo's algorithms: for a sweep's "all", every one of the op's that runs
// over --transport (and on a grid, with `grid`), else the one asked for.
// Throws UsageError for one the op does not have, or --transport cannot run.
std::vector<std::string> algorithms_of(const CclArgs& a, bool sweep, bool grid = false);
// The runner's options with --transport.
ccl::RunnerOptions runner_options(const CclArgs& a);
// The op as asked for, its --algo checked.
ccl::OpRequest request_of(const CclArgs& a, bool sweep);
// Every op's algorithms, for the help.
std::string algorithms_help();

std::string ring_text(const ccl::CollectiveRunner& run);
inline double algbw(uint64_t bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

}  // namespace weft::cli
