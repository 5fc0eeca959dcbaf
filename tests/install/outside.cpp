// A program outside weft's tree, linked against the installed library: starts
// a pair cluster from the install's clusters, runs an all-reduce, checks it.
#include <unistd.h>

#include <cstdio>

#include "weft.h"

int main() {
    try {
        weft::init();
        auto cluster =
            weft::Cluster::start(weft::paths::cluster_file("pair"), "/tmp/weft-outside-" + std::to_string(getpid()));
        weft::ccl::CollectiveRunner run(*cluster);
        weft::ccl::OpRequest r;
        r.bytes = 64 << 10;
        const weft::ccl::CaseResult res = weft::ccl::run_case(run, *cluster, r, 7);
        std::printf("outside: all_reduce of %llu bytes with %s: %llu of %llu elements wrong; firmware from %s\n",
                    (unsigned long long)r.bytes, res.timing.algo.c_str(), (unsigned long long)res.check.wrong,
                    (unsigned long long)res.check.checked, weft::paths::firmware_dir(cluster->board().name).c_str());
        return res.check.wrong || res.check.checked == 0 ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "outside: %s\n", e.what());
        return 1;
    }
}
