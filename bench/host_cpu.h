// Host CPU a set of processes used: user + system seconds over all threads.
#pragma once
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace weft::bench {

inline double cpu_seconds(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (s.empty()) return 0;
    std::istringstream rest(s.substr(s.rfind(')') + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
    }
    return double(utime + stime) / sysconf(_SC_CLK_TCK);
}

inline double cpu_seconds(const std::vector<int>& pids) {
    double total = 0;
    for (int pid : pids) total += cpu_seconds(pid);
    return total;
}

}  // namespace weft::bench
