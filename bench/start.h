// How every bench program starts. Its output goes out a line at a time: make
// bench tees the report into bench/results, and the terminal keeps up. --help
// says what the program measures and which arguments it takes; an argument
// it does not take is refused (exit 2) rather than starting a sweep of many
// minutes.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace weft::bench {

// `first`: the words the first argument may be; none: the program takes no argument.
inline void start(int argc, char** argv, const char* usage, const std::vector<std::string>& first = {}) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::printf("%s", usage);
            std::exit(0);
        }
    if (argc < 2) return;
    for (const std::string& w : first)
        if (argv[1] == w) return;
    std::fprintf(stderr, "%s: no argument '%s'\n%s", argv[0], argv[1], usage);
    std::exit(2);
}

}  // namespace weft::bench
