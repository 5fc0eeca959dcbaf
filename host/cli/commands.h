// weft's commands. Each add_* adds one command to the `weft` app, with the
// options it takes (nothing else), and returns what runs it once the command
// line has parsed; the runner returns an exit code (exit_codes.h).
#pragma once
#include <CLI/CLI.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/cluster.h"

namespace weft::cli {

// What every command shares: --run-dir, before or after the command.
struct Globals {
    std::string run_dir;
    // The words of each group after a ':' (weft launch A ... : B ...: several
    // kernels at once, as mpirun's MPMD form); only weft launch takes them.
    std::vector<std::vector<std::string>> groups;
};

struct Command {
    CLI::App* app;
    std::function<int()> run;
};

Command add_up(CLI::App& weft, Globals& g);
Command add_down(CLI::App& weft, Globals& g);
Command add_status(CLI::App& weft, Globals& g);
Command add_linktest(CLI::App& weft, Globals& g);
Command add_link(CLI::App& weft, Globals& g);
Command add_fault(CLI::App& weft, Globals& g);
Command add_reset(CLI::App& weft, Globals& g);
Command add_run(CLI::App& weft, Globals& g);
Command add_bench(CLI::App& weft, Globals& g);
Command add_launch(CLI::App& weft, Globals& g);
Command add_console(CLI::App& weft, Globals& g);
Command add_gdb(CLI::App& weft, Globals& g);
Command add_fabric(CLI::App& weft, Globals& g);
Command add_replay(CLI::App& weft, Globals& g);
Command add_routes(CLI::App& weft);
Command add_help(CLI::App& weft);
Command add_completion(CLI::App& weft);

// --cluster C: a cluster file or name, checked as it is parsed.
CLI::Option* add_cluster(CLI::App& cmd, std::string& into);

// The running cluster in run_dir, or with --cluster (or none up) a temporary
// one started from `cluster`, else from `fallback`.
std::unique_ptr<Cluster> attach_or_start(const std::string& run_dir, const std::string& cluster,
                                         const std::string& fallback);

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace weft::cli
