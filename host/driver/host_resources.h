// Whether this host can hold a cluster: its QEMUs' memory and processes,
// estimated before any is started, so a cluster file of 1000 chips is refused
// with what it needs instead of starting until the host runs out.
#pragma once
#include <stdint.h>

#include <string>

#include "driver/cluster_file.h"

namespace weft {

struct HostNeed {
    uint64_t bytes = 0;      // resident memory, all chips and the bridge
    uint64_t processes = 0;  // QEMUs and the bridge
};

struct HostHas {
    uint64_t available_bytes = 0;  // /proc/meminfo MemAvailable
    uint64_t process_limit = 0;    // RLIMIT_NPROC (0: unlimited)
    uint64_t processes_now = 0;    // this user's processes already running
};

// Measured: a chip's QEMU holds ~40 MiB besides the guest RAM an op touches,
// and the bridge ~300 MiB with ring8 busy. Ops touch their buffers only, so
// the estimate adds a fixed share of each chip's DRAM, not all of it.
HostNeed estimate_need(const ClusterSpec& spec);
HostHas measure_host();
// "" if the host can hold it, else why not with both numbers.
std::string refuse_reason(const HostNeed& need, const HostHas& has);
// Throws weft::Error naming the cluster file when the host cannot hold it.
void check_host_can_hold(const ClusterSpec& spec, const std::string& cluster_file);

}  // namespace weft
