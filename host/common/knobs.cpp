#include "common/knobs.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/process.h"
#include "common/tuning_file.h"

namespace weft::knobs {
namespace {

// The variable's value, or null when it is unset or empty.
const char* env(const Knob& k) {
    const char* v = std::getenv(std::string(k.name).c_str());
    return v && *v ? v : nullptr;
}

void expect(const Knob& k, Type t) {
    if (k.type != t) throw Error("internal: " + std::string(k.name) + " read as the wrong type");
}

// strtoll and strtod skip leading blanks, which no other weft number takes:
// " 4096" is refused as the sizes' parser refuses it.
bool starts_blank(const std::string& v) { return !v.empty() && std::isspace(static_cast<unsigned char>(v[0])); }

// "WEFT_X=value must be ..." from the environment; "FILE:LINE: key = value
// must be ... (WEFT_X)" from the tuning file.
[[noreturn]] void refuse(const Knob& k, const std::string& value, const std::string& where) {
    const std::string range = " must be " + range_text(k);
    if (where.empty()) throw KnobError(std::string(k.name) + "=" + value + range);
    throw KnobError(where + " = " + value + range + " (" + std::string(k.name) + ")");
}

}  // namespace

long long parse_integer(const Knob& k, const std::string& value, const std::string& where) {
    expect(k, Type::kInteger);
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(value.c_str(), &end, 0);  // 0x10000 too, as the tunables always took
    if (value.empty() || starts_blank(value) || *end != '\0' || errno == ERANGE || x < k.min || x > k.max ||
        x % k.step != 0)
        refuse(k, value, where);
    return x;
}

long long integer(const Knob& k) {
    expect(k, Type::kInteger);
    if (const char* v = env(k)) return parse_integer(k, v, "");
    if (k.tunable) {
        const std::string path = text(knob("WEFT_CCL_CONFIG"));
        if (!path.empty())
            if (const auto f = tuning_file_value(path, k)) return parse_integer(k, f->text, f->where);
    }
    return k.fallback;
}

double real(const Knob& k) {
    expect(k, Type::kReal);
    const char* v = env(k);
    if (!v) return double(k.fallback);
    char* end = nullptr;
    const double x = std::strtod(v, &end);
    if (starts_blank(v) || *end != '\0' || !std::isfinite(x) || x < double(k.min) ||
        (k.max != kUnbounded && x > double(k.max)))
        refuse(k, v, "");
    return x;
}

bool flag(const Knob& k) {
    expect(k, Type::kFlag);
    const char* v = env(k);
    return v && std::string(v) != "0";
}

std::string text(const Knob& k) {
    if (k.type != Type::kPath && k.type != Type::kProgram) expect(k, Type::kText);
    if (const char* v = env(k)) return v;
    if (k.tunable) {
        const std::string path = text(knob("WEFT_CCL_CONFIG"));
        if (!path.empty())
            if (const auto f = tuning_file_value(path, k)) return f->text;
    }
    return std::string(k.text_fallback);
}

bool is_set(const Knob& k) { return env(k) != nullptr; }

void check(Reader reader) {
    for (const Knob& k : kKnobs) {
        if (k.reader != reader) continue;
        if (k.type == Type::kInteger) integer(k);
        if (k.type == Type::kReal) real(k);
        if (k.type == Type::kProgram && env(k) && find_program(env(k)).empty())
            throw KnobError(std::string(k.name) + "=" + env(k) + ": no such program" +
                            (std::string(env(k)).find('/') == std::string::npos ? " on PATH" : " (or not executable)"));
    }
}

std::string range_text(const Knob& k) {
    const std::string to = k.max == kUnbounded ? " up" : " to " + std::to_string(k.max);
    switch (k.type) {
        case Type::kInteger:
            if (k.step > 1) return "a multiple of " + std::to_string(k.step) + " from " + std::to_string(k.min) + to;
            return "a whole number from " + std::to_string(k.min) + to;
        case Type::kReal: return "a number from " + std::to_string(k.min) + to;
        case Type::kFlag: return "on when set to anything but 0";
        case Type::kText: return "text";
        case Type::kPath: return "a path";
        case Type::kProgram: return "a program (a path, or a name on PATH)";
    }
    return "";
}

std::string default_text(const Knob& k) {
    if (!k.shown_default.empty()) return std::string(k.shown_default);
    switch (k.type) {
        case Type::kInteger: return std::to_string(k.fallback);
        case Type::kFlag: return "off";
        default: return k.text_fallback.empty() ? "none" : std::string(k.text_fallback);
    }
}

std::string_view reader_name(Reader r) {
    switch (r) {
        case Reader::kCluster: return "weft and libweft";
        case Reader::kBridge: return "weft-bridge (weft up checks them first)";
        case Reader::kCcl: return "collective ops";
        case Reader::kBench: return "make bench";
        case Reader::kTest: return "tests";
    }
    return "";
}

std::string file_key(const Knob& k) {
    std::string key(k.name.substr(5));  // without "WEFT_"
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return key;
}

}  // namespace weft::knobs
