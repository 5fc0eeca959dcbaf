// Helpers for system tests: real clusters of QEMU chips started through
// libweft, each in a run directory of its own.
#pragma once
#include <unistd.h>

#include <signal.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/error.h"
#include "common/knobs.h"
#include "common/process.h"
#include "driver/cluster.h"
#include "driver/paths.h"
#include "driver/platform_kernels.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

namespace weft::test {

inline std::string source_dir() { return knobs::text(knobs::knob("WEFT_SOURCE_DIR")); }

inline std::unique_ptr<Cluster> start_cluster(const std::string& name) {
    const std::string run_dir = "/tmp/weft-test-" + std::to_string(getpid()) + "-" + name;
    return Cluster::start(source_dir() + "/clusters/" + name + ".yaml", run_dir);
}

// For a cmocka group setup: start cluster `name` into *into, timing it; on
// failure say why and return -1 so the group is skipped, not crashed.
inline int start_for_group(const std::string& name, std::unique_ptr<Cluster>* into) {
    try {
        auto t0 = std::chrono::steady_clock::now();
        *into = start_cluster(name);
        fprintf(stderr, "%s up in %.2f s\n", name.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return 0;
    } catch (const std::exception& e) {
        fprintf(stderr, "cannot start %s: %s\n", name.c_str(), e.what());
        return -1;
    }
}

inline bool process_exists(int pid) { return process_running(pid); }

// Processes exit a moment after closing their sockets: allow them 3 s.
inline bool process_gone_soon(int pid) {
    for (int i = 0; i < 300; ++i) {
        if (!process_exists(pid)) return true;
        usleep(10000);
    }
    return false;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace weft::test
