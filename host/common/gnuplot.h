// Running gnuplot, the program that draws weft's charts. It runs as a child
// process (common/child_tool.h): a crash or a hang in a plotting stack cannot
// take a benchmark's results down with it, and weft builds without it.
#pragma once
#include <string>
#include <vector>

namespace weft {

// The Debian package that provides a gnuplot with the pngcairo terminal;
// error messages name it.
inline constexpr const char* kGnuplotPackage = "gnuplot-nox";

// Runs `gnuplot ARGS...` (found on PATH) with no input and waits for it.
// Throws Error if gnuplot is not installed (naming kGnuplotPackage), or if it
// fails, with what it printed on stderr.
void run_gnuplot(const std::vector<std::string>& args);

// Throws the same errors if charts cannot be drawn: no gnuplot, or one without
// the pngcairo terminal. For callers that would rather fail before a long run
// than after it.
void check_gnuplot();

}  // namespace weft
