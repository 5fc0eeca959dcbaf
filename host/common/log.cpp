#include "common/log.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

#include "common/error.h"
#include "common/knobs.h"

namespace weft::log {
namespace {

Level parse(std::string v) {
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v.empty()) return Level::kOff;
    if (v == "warn") return Level::kWarn;
    if (v == "info") return Level::kInfo;
    if (v == "trace") return Level::kTrace;
    throw Error("WEFT_DEBUG=" + v + " must be warn, info or trace (or unset: no logs)");
}

std::string hostname() {
    char h[256] = "";
    gethostname(h, sizeof h - 1);
    return h;
}

FILE* sink() {
    static FILE* out = [] {
        std::string path = knobs::text(knobs::knob("WEFT_DEBUG_FILE"));
        if (path.empty()) return stderr;
        for (size_t at; (at = path.find("%h")) != std::string::npos;) path.replace(at, 2, hostname());
        for (size_t at; (at = path.find("%p")) != std::string::npos;) path.replace(at, 2, std::to_string(getpid()));
        FILE* f = std::fopen(path.c_str(), "a");
        if (!f) throw Error("WEFT_DEBUG_FILE=" + path + ": cannot open it for writing");
        return f;
    }();
    return out;
}

}  // namespace

Level level() {
    static const Level l = [] {
        const Level asked = parse(knobs::text(knobs::knob("WEFT_DEBUG")));
        if (asked != Level::kOff) sink();  // a WEFT_DEBUG_FILE that cannot be opened is named up front
        return asked;
    }();
    return l;
}

void write(Level l, const char* subsystem, const char* fmt, ...) {
    static const std::string who = hostname() + ":" + std::to_string(getpid());
    static std::mutex mutex;
    static const char* names[] = {"", "WARN", "INFO", "TRACE"};
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    std::lock_guard<std::mutex> lock(mutex);
    FILE* out = sink();
    std::fprintf(out, "%s weft %s [%s] %s\n", who.c_str(), names[static_cast<int>(l)], subsystem, text);
    std::fflush(out);
}

}  // namespace weft::log
