// What several host-model tests share: router settings that fit the small
// board's L1, and the process's resident memory for tests of growth.
#pragma once
#include <stdint.h>
#include <unistd.h>

#include <fstream>

#include "driver/fabric_spec.h"

namespace weft::test {

// Router settings small enough for the small board's L1 (and quick to run).
inline FabricSpec small_options() {
    FabricSpec o;
    o.slots = 4;
    o.packet_bytes = 4096;
    o.lanes = 2;
    return o;
}

// Resident memory of this process now, in MB (/proc/self/statm: pages).
inline double resident_mb() {
    std::ifstream statm("/proc/self/statm");
    unsigned long size = 0, resident = 0;
    statm >> size >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

}  // namespace weft::test
