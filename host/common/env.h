// Integer knobs from the environment (the WEFT_* tunables).
#pragma once
#include <cstdlib>
#include <string>

#include "common/error.h"

namespace weft {

// `fallback` when the variable is unset or empty; throws weft::Error naming
// the variable when it is not a whole number or is below `min`.
inline long long env_integer(const char* name, long long fallback, long long min) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 0);
    if (*end != '\0') throw Error(std::string(name) + "=" + v + " is not a number");
    if (x < min) throw Error(std::string(name) + "=" + v + " must be at least " + std::to_string(min));
    return x;
}

}  // namespace weft
