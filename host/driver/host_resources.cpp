#include "driver/host_resources.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "common/error.h"

namespace weft {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPerQemu = 40 * kMiB;
constexpr uint64_t kBridge = 300 * kMiB;
constexpr uint64_t kTouchedDramPerChip = 64 * kMiB;

uint64_t meminfo_available() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

uint64_t processes_of_this_user() {
    uint64_t n = 0;
    DIR* d = opendir("/proc");
    if (!d) return 0;
    const std::string uid = std::to_string(getuid());
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        std::ifstream status(std::string("/proc/") + e->d_name + "/status");
        for (std::string line; std::getline(status, line);)
            if (line.rfind("Uid:", 0) == 0) {
                std::istringstream f(line.substr(4));
                std::string real;
                f >> real;
                n += real == uid;
                break;
            }
    }
    closedir(d);
    return n;
}

std::string mib(uint64_t bytes) { return std::to_string(bytes / kMiB) + " MiB"; }

}  // namespace

HostNeed estimate_need(const ClusterSpec& spec) {
    HostNeed need;
    const uint64_t touched = std::min<uint64_t>(spec.board.dram.size, kTouchedDramPerChip);
    need.bytes = spec.num_chips * (kPerQemu + touched) + kBridge;
    need.processes = spec.num_chips + 1;
    return need;
}

HostHas measure_host() {
    HostHas has;
    has.available_bytes = meminfo_available();
    rlimit r{};
    if (getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur != RLIM_INFINITY) has.process_limit = r.rlim_cur;
    if (has.process_limit) has.processes_now = processes_of_this_user();
    return has;
}

std::string refuse_reason(const HostNeed& need, const HostHas& has) {
    if (has.available_bytes && need.bytes > has.available_bytes)
        return "it needs about " + mib(need.bytes) + " of memory and the host has " + mib(has.available_bytes) +
               " available";
    if (has.process_limit && has.processes_now + need.processes > has.process_limit)
        return "it needs " + std::to_string(need.processes) + " processes and this user may start " +
               std::to_string(has.process_limit > has.processes_now ? has.process_limit - has.processes_now : 0) +
               " more (RLIMIT_NPROC " + std::to_string(has.process_limit) + ")";
    return "";
}

void check_host_can_hold(const ClusterSpec& spec, const std::string& cluster_file) {
    const std::string why = refuse_reason(estimate_need(spec), measure_host());
    if (!why.empty())
        throw Error("cluster '" + spec.name + "' (" + cluster_file + ", " + std::to_string(spec.num_chips) +
                    " chips) does not fit this host: " + why);
}

}  // namespace weft
