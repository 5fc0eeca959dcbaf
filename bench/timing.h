// What every bench table does with its timings: the median of repeated runs,
// runs taken in turns, and sizes written the way the tables print them.
#pragma once
#include <stdint.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace weft::bench {

// Seconds of wall time since `t0`.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The middle value (the mean of the middle two for an even count).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Runs each of `runs` `reps` times, in turns (all of them once, then again),
// and returns the median of each one's results: a host that slows down for a
// while (two cores, many QEMUs) then slows every run alike instead of
// whichever happened to run then.
// Each round starts with the next one, so none always runs first (or right
// after the same neighbour).
inline std::vector<double> medians_in_turns(const std::vector<std::function<double()>>& runs, uint32_t reps) {
    std::vector<std::vector<double>> results(runs.size());
    for (uint32_t rep = 0; rep < reps; ++rep)
        for (size_t k = 0; k < runs.size(); ++k) {
            const size_t i = (rep + k) % runs.size();
            results[i].push_back(runs[i]());
        }
    std::vector<double> out;
    for (const auto& r : results) out.push_back(median(r));
    return out;
}

// 1024 -> "1K", 64 MiB -> "64M".
inline std::string human_size(uint64_t b) {
    char s[32];
    if (b >= (1u << 20)) snprintf(s, sizeof s, "%lluM", (unsigned long long)(b >> 20));
    else if (b >= 1024)
        snprintf(s, sizeof s, "%lluK", (unsigned long long)(b >> 10));
    else
        snprintf(s, sizeof s, "%llu", (unsigned long long)b);
    return s;
}

}  // namespace weft::bench
