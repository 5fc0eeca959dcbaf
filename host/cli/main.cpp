// weft: one word per job (weft help lists them; README's "Using a cluster"
// shows them at work). The command line is parsed by CLI11 into one command
// with only its own options, then that command runs (cli/command_line.h).
#include "cli/command_line.h"

int main(int argc, char** argv) { return weft::cli::CommandLine().run(argc, argv); }
