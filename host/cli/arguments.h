// Options and positionals whose values are checked where they are parsed:
// a refusal names the argument and the range it must be in, e.g.
//     weft bench: --maxbytes: must be a size from 1 to 1024G (e.g. 4096, 16K, 1M), not '-1'
// A name with dashes is an option ("-b,--minbytes"), one without a positional
// ("CHIP"). `value` names an option's value in the help ("SIZE"); each helper
// appends the range to `help`.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace weft::cli {

// The largest size any argument takes: far beyond a chip's DRAM, far below
// where a size times the chips or a sweep's factor could wrap.
inline constexpr uint64_t kMaxBytes = 1ull << 40;

struct Bounds {
    uint64_t min, max;
    uint64_t step = 1;  // sizes: a multiple of it
};

CLI::Option* add_whole(CLI::App& app, const std::string& name, const std::string& value, uint32_t& into, Bounds b,
                       const std::string& help);
CLI::Option* add_size(CLI::App& app, const std::string& name, const std::string& value, uint64_t& into, Bounds b,
                      const std::string& help);
// No upper bound when max is infinity.
CLI::Option* add_real(CLI::App& app, const std::string& name, double& into, double min, double max,
                      const std::string& help);
// A word `check` accepts, or the weft::Error it throws is the refusal.
CLI::Option* add_word(CLI::App& app, const std::string& name, const std::string& value, std::string& into,
                      std::function<void(const std::string&)> check, const std::string& help);
CLI::Option* add_run_dir(CLI::App& app, std::string& into);
// A file a command writes once its work is done, tried before the work: a
// folder that does not exist should not cost a long op's time. Throws
// weft::Error naming the option and the path.
void check_writable(const std::string& option, const std::string& path);

// A check for add_word: "must be up or down, not 'x'".
std::function<void(const std::string&)> one_of(std::vector<std::string> words);

// Chip and port ids: the cluster checks its own range; here they must not
// lose bits on their way to it.
inline constexpr Bounds kIds{0, UINT32_MAX};

// The check behind add_whole, for words that are parsed later (--shape):
// throws weft::Error "must be a whole number from MIN to MAX, not 'W'".
uint64_t parse_whole(const std::string& word, uint64_t min, uint64_t max);
// An address: 0x-prefixed hex or decimal; throws weft::Error naming the word.
uint64_t parse_address(const std::string& word);
std::string size_text(uint64_t bytes);  // 1099511627776 -> "1024G", 65536 -> "64K"

}  // namespace weft::cli
