#include "bridge/qemu_config.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "common/error.h"

namespace weft {
namespace {

// What the bridge cannot do without, and why, for the error that says so.
const std::map<std::string, std::string>& required() {
    static const std::map<std::string, std::string> r = {
        {"RAM_MB", "the chip's RAM must be the board's size"},
        {"RAM_FD", "the chip's RAM must be the memory the bridge and the driver share"},
        {"HARTS", "the chip must have the board's cores"},
        {"BOOT_ELF", "the chip must boot the board's firmware"},
        {"UART_FD", "the chip's UART carries its console and its doorbell"},
        {"QMP_SOCKET", "the bridge resets the chip through it"},
    };
    return r;
}

std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
    return out;
}

bool is_name_char(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

// One line at a time: the option, its value, and the placeholders in them.
class QemuConfig::Parser {
public:
    explicit Parser(const std::string& path) { config_.path_ = path; }

    QemuConfig parse(const std::string& text) {
        std::istringstream in(text);
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) parse_line(line, n);
        check_complete();
        return std::move(config_);
    }

private:
    [[noreturn]] void fail(int line, const std::string& msg) const {
        throw Error(config_.path_ + ":" + std::to_string(line) + ": " + msg);
    }

    void parse_line(const std::string& line, int n) {
        std::istringstream words(line);
        std::vector<std::string> tokens((std::istream_iterator<std::string>(words)),
                                        std::istream_iterator<std::string>());
        if (tokens.empty() || tokens[0][0] == '#') return;
        if (tokens[0][0] != '-' || tokens[0].size() < 2)
            fail(n, "'" + tokens[0] + "' is not a QEMU option: each line is an option (-name) and its value, if any");
        if (tokens.size() > 2)
            fail(n, "one option and at most one value per line, not " + std::to_string(tokens.size()) + " words");
        for (const std::string& t : tokens) config_.args_.push_back(Arg{n, pieces(t, n)});
    }

    std::vector<Piece> pieces(const std::string& word, int n) {
        std::vector<Piece> out;
        size_t at = 0;
        while (at < word.size()) {
            const size_t open = word.find("${", at);
            if (open != at) {
                Piece literal;
                literal.text = word.substr(at, open - at);
                out.push_back(literal);
                if (open == std::string::npos) break;
            }
            const size_t close = word.find('}', open);
            if (close == std::string::npos) fail(n, "'" + word.substr(open) + "' has no closing '}'");
            out.push_back(placeholder(word.substr(open + 2, close - open - 2), n));
            at = close + 1;
        }
        return out;
    }

    Piece placeholder(const std::string& inside, int n) {
        Piece p;
        p.placeholder = true;
        const size_t dash = inside.find(":-");
        p.text = inside.substr(0, dash);
        if (dash != std::string::npos) {
            p.has_default = true;
            p.fallback = inside.substr(dash + 2);
        }
        const auto& known = placeholders();
        if (p.text.empty() || !std::all_of(p.text.begin(), p.text.end(), is_name_char) ||
            std::find(known.begin(), known.end(), p.text) == known.end())
            fail(n, "unknown placeholder ${" + inside + "} (the bridge fills in " + join(known) + ")");
        used_.insert(p.text);
        return p;
    }

    void check_complete() const {
        if (config_.args_.empty()) throw Error(config_.path_ + ": no QEMU options in it");
        for (const auto& [name, why] : required())
            if (!used_.count(name)) throw Error(config_.path_ + ": never uses ${" + name + "}, but " + why);
    }

    QemuConfig config_;
    std::set<std::string> used_;
};

const std::vector<std::string>& QemuConfig::placeholders() {
    static const std::vector<std::string> names = {"RAM_MB",  "RAM_FD",     "HARTS",     "BOOT_ELF",
                                                   "UART_FD", "QMP_SOCKET", "QEMU_ACCEL"};
    return names;
}

QemuConfig QemuConfig::parse(const std::string& text, const std::string& path) { return Parser(path).parse(text); }

QemuConfig QemuConfig::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open QEMU configuration '" + path + "' (how the chip's QEMU is started)");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return parse(text, path);
}

std::vector<std::string> QemuConfig::args(const std::map<std::string, std::string>& values) const {
    std::vector<std::string> out;
    for (const Arg& a : args_) {
        std::string word;
        for (const Piece& p : a.pieces) {
            if (!p.placeholder) {
                word += p.text;
                continue;
            }
            auto it = values.find(p.text);
            if (it != values.end() && !it->second.empty()) word += it->second;
            else if (p.has_default)
                word += p.fallback;
            else
                throw Error(path_ + ":" + std::to_string(a.line) + ": ${" + p.text + "} has no value and no default");
        }
        out.push_back(word);
    }
    return out;
}

}  // namespace weft
