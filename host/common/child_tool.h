// Running a drawing program (gnuplot for charts, Graphviz for pictures) as a
// child process rather than a library in ours: a crash or a hang in a
// plotting stack cannot take a benchmark's or a model's results down with it,
// and weft builds without the program installed.
#pragma once
#include <string>
#include <vector>

namespace weft {

struct ChildTool {
    const char* program;  // found on PATH
    const char* package;  // the Debian package that provides it: named when it is missing
    const char* purpose;  // what needs it, for the message: "charts", "pictures"
};

// Runs `PROGRAM ARGS...` with no input and its output discarded, and waits
// for it. Throws Error if the program is not installed (naming its package
// and scripts/install-deps), or if it fails, with what it printed on stderr.
void run_child_tool(const ChildTool& tool, const std::vector<std::string>& args);

}  // namespace weft
