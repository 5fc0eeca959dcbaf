// Host CPU a set of processes used: user + system seconds over all threads;
// the cluster's processes; and the whole machine's idle time.
#pragma once
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "driver/cluster.h"

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

// A cluster's bridge and its QEMUs, apart: they compete for the same cores.
inline int bridge_pid(Cluster& c) { return c.info()["bridge_pid"].get<int>(); }
inline std::vector<int> chip_pids(Cluster& c) {
    std::vector<int> pids;
    for (const auto& chip : c.info()["chips"]) pids.push_back(chip["pid"]);
    return pids;
}
inline std::vector<int> cluster_pids(Cluster& c) {
    std::vector<int> pids = chip_pids(c);
    pids.push_back(bridge_pid(c));
    return pids;
}

// Seconds all the machine's cores spent idle since boot (/proc/stat's idle
// and iowait columns): across a measurement, how much of the host went unused.
inline double machine_idle_seconds() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    unsigned long long user, nice, system, idle, iowait;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait)) return 0;
    return double(idle + iowait) / sysconf(_SC_CLK_TCK);
}

}  // namespace weft::bench
