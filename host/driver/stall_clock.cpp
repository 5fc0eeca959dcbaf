#include "driver/stall_clock.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace weft {

StallClock::StallClock(std::vector<int> pids)
    : pids_(std::move(pids)), last_(std::chrono::steady_clock::now()), prev_(sample()) {}

namespace {

// Whether a thread of `pid` is running or waits to run.
bool wants_cpu(int pid) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = opendir(dir.c_str());
    if (!d) return false;
    bool runnable = false;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.' || runnable) continue;
        FILE* f = fopen((dir + "/" + e->d_name + "/stat").c_str(), "r");
        if (!f) continue;
        char state = 0;
        if (fscanf(f, "%*d (%*[^)]) %c", &state) == 1) runnable = state == 'R';
        fclose(f);
    }
    closedir(d);
    return runnable;
}

}  // namespace

StallClock::Sample StallClock::sample() const {
    static const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    Sample s;
    for (int pid : pids_) {
        FILE* f = fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
        if (!f) continue;  // gone: the caller finds out by other means
        unsigned long utime = 0, stime = 0;
        // pid (comm) state, then 10 fields, then utime and stime: the whole process's.
        const int n = fscanf(f, "%*d (%*[^)]) %*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %lu", &utime, &stime);
        fclose(f);
        if (n != 2) continue;
        s.cpu_ms += static_cast<double>(utime + stime) * ms_per_tick;
        s.runnable = s.runnable || wants_cpu(pid);
    }
    return s;
}

void StallClock::look(bool moved) {
    const auto now = std::chrono::steady_clock::now();
    const Sample s = sample();
    const double wall_ms = std::chrono::duration<double, std::milli>(now - last_).count();
    // Runnable now or at the last look: the interval was (partly) spent waiting for the CPU.
    const double ran_ms = s.runnable || prev_.runnable ? std::min(wall_ms, s.cpu_ms - prev_.cpu_ms) : wall_ms;
    total_ms_ += ran_ms;
    stalled_ms_ = moved ? 0 : stalled_ms_ + ran_ms;
    last_ = now;
    prev_ = s;
}

}  // namespace weft
