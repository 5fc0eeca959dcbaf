#include "cli/arguments.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/sizes.h"

namespace weft::cli {
namespace {

using Check = std::function<void(std::string&)>;  // may rewrite the word; throws weft::Error to refuse

// CLI11 prefixes a validator's message with the argument's name.
CLI::Validator validator(Check check) {
    return CLI::Validator(
        [check](std::string& word) {
            try {
                check(word);
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string();
        },
        "");
}

CLI::Option* add(CLI::App& app, const std::string& name, const std::string& value, const std::string& help,
                 std::function<void(const std::string&)> assign) {
    const auto callback = [assign](const CLI::results_t& words) {
        assign(words.back());
        return true;
    };
    CLI::Option* o = app.add_option(name, callback, help);
    // A positional's name says what it is; an option names its value.
    o->option_text(o->get_positional() ? " " : value);
    return o;
}

std::string whole_range(uint64_t min, uint64_t max) { return std::to_string(min) + " to " + std::to_string(max); }

std::string size_range(Bounds b) { return size_text(b.min) + " to " + size_text(b.max); }

// "a size from 1 to 1024G", "a multiple of 4 bytes from 4 to 1024G"
std::string size_kind(Bounds b) {
    return (b.step > 1 ? "a multiple of " + std::to_string(b.step) + " bytes" : std::string("a size")) + " from " +
           size_range(b);
}

std::string real_range(double min, double max) {
    const auto text = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", v);
        return std::string(buf);
    };
    return std::isinf(max) ? "at least " + text(min) : text(min) + " to " + text(max);
}

}  // namespace

uint64_t parse_whole(const std::string& word, uint64_t min, uint64_t max) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size() || v < min || v > max)
        throw Error("must be a whole number from " + whole_range(min, max) + ", not '" + word + "'");
    return v;
}

uint64_t parse_address(const std::string& word) {
    const bool hex = word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X');
    const char* first = word.data() + (hex ? 2 : 0);
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(first, word.data() + word.size(), v, hex ? 16 : 10);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size())
        throw Error("must be an address (0x81900000 or decimal), not '" + word + "'");
    return v;
}

std::string size_text(uint64_t bytes) {
    for (const auto& [shift, unit] : {std::pair{30, "G"}, {20, "M"}, {10, "K"}})
        if (bytes && bytes % (1ull << shift) == 0) return std::to_string(bytes >> shift) + unit;
    return std::to_string(bytes);
}

CLI::Option* add_whole(CLI::App& app, const std::string& name, const std::string& value, uint32_t& into, Bounds b,
                       const std::string& help) {
    const auto assign = [&into](const std::string& word) { into = static_cast<uint32_t>(std::stoul(word)); };
    CLI::Option* o = add(app, name, value, help + " (" + whole_range(b.min, b.max) + ")", assign);
    return o->transform(validator([b](std::string& word) { word = std::to_string(parse_whole(word, b.min, b.max)); }));
}

CLI::Option* add_size(CLI::App& app, const std::string& name, const std::string& value, uint64_t& into, Bounds b,
                      const std::string& help) {
    const auto assign = [&into](const std::string& word) { into = std::stoull(word); };
    const std::string range = b.step > 1 ? "a multiple of " + std::to_string(b.step) + ", " + size_range(b)
                                         : size_range(b);
    CLI::Option* o = add(app, name, value, help + " (" + range + ")", assign);
    return o->transform(validator([b](std::string& word) {
        const std::string refusal = "must be " + size_kind(b) + " (e.g. 4096, 16K, 1M), not '" + word + "'";
        uint64_t v = 0;
        try {
            v = parse_size(word);
        } catch (const Error&) {
            throw Error(refusal);  // a sign, an overflow, a typo: all outside the range
        }
        if (v < b.min || v > b.max || v % b.step) throw Error(refusal);
        word = std::to_string(v);
    }));
}

CLI::Option* add_real(CLI::App& app, const std::string& name, double& into, double min, double max,
                      const std::string& help) {
    const auto assign = [&into](const std::string& word) { into = std::stod(word); };
    CLI::Option* o = add(app, name, "X", help + " (" + real_range(min, max) + ")", assign);
    return o->transform(validator([min, max](std::string& word) {
        double v = NAN;
        const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
        if (word.empty() || ec != std::errc() || end != word.data() + word.size() || !std::isfinite(v) || v < min ||
            v > max)
            throw Error("must be a number " + std::string(std::isinf(max) ? "of " : "from ") + real_range(min, max) +
                        ", not '" + word + "'");
    }));
}

CLI::Option* add_word(CLI::App& app, const std::string& name, const std::string& value, std::string& into,
                      std::function<void(const std::string&)> check, const std::string& help) {
    const auto assign = [&into](const std::string& word) { into = word; };
    return add(app, name, value, help, assign)->transform(validator([check](std::string& word) { check(word); }));
}

CLI::Option* add_run_dir(CLI::App& app, std::string& into) {
    const auto assign = [&into](const std::string& word) { into = word; };
    return add(app, "--run-dir", "DIR", "the cluster's run directory; default $WEFT_RUN_DIR or /tmp/weft-UID", assign);
}

void check_writable(const std::string& option, const std::string& path) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(path, ec));
    {
        std::ofstream f(path, std::ios::app);
        if (!f) throw Error(option + " " + path + ": cannot write it (" + std::strerror(errno) + ")");
    }
    if (!existed) std::filesystem::remove(path, ec);
}

std::function<void(const std::string&)> one_of(std::vector<std::string> words) {
    return [words](const std::string& word) {
        if (std::find(words.begin(), words.end(), word) != words.end()) return;
        std::string list;
        for (size_t i = 0; i < words.size(); ++i)
            list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
        throw Error("must be " + list + ", not '" + word + "'");
    };
}

}  // namespace weft::cli
