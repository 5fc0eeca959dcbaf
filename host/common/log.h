// Levelled logs in the manner of NCCL_DEBUG: WEFT_DEBUG=warn|info|trace
// turns them on (off by default), WEFT_DEBUG_FILE sends them to a file instead
// of stderr (%h: the host name, %p: the process id, as NCCL_DEBUG_FILE).
// A line: "host:pid weft INFO [cluster] cluster 'pair' up: 2 chips ...".
#pragma once
#include <cstdarg>

namespace weft::log {

enum class Level { kOff = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// From WEFT_DEBUG, read once; throws weft::Error naming a bad value.
Level level();
inline bool enabled(Level l) { return level() >= l; }

void write(Level l, const char* subsystem, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

#define WEFT_LOG(lvl, subsystem, ...)                                                   \
    do {                                                                                \
        if (::weft::log::enabled(lvl)) ::weft::log::write(lvl, subsystem, __VA_ARGS__); \
    } while (0)
#define WEFT_WARN(subsystem, ...) WEFT_LOG(::weft::log::Level::kWarn, subsystem, __VA_ARGS__)
#define WEFT_INFO(subsystem, ...) WEFT_LOG(::weft::log::Level::kInfo, subsystem, __VA_ARGS__)
#define WEFT_TRACE(subsystem, ...) WEFT_LOG(::weft::log::Level::kTrace, subsystem, __VA_ARGS__)

}  // namespace weft::log
