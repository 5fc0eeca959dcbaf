// By hand: the Open MPI all-reduce reference as a table.
//   mpi_reference_main PROGRAM [--np N] [--min BYTES] [--max BYTES] [--factor F]
//                      [--iters N] [--warmup W] [--dtype f32|i32] [--timeout S] [-v]
// PROGRAM is the built bench/mpi_allreduce.cpp. Exit status 0 when the sweep
// completed with every element right, 1 otherwise.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpi_reference.h"

namespace {

std::string human_bytes(uint64_t b) {
    char s[32];
    if (b >= (1u << 20) && b % (1u << 20) == 0) std::snprintf(s, sizeof s, "%llu MiB", (unsigned long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        std::snprintf(s, sizeof s, "%llu KiB", (unsigned long long)(b >> 10));
    else
        std::snprintf(s, sizeof s, "%llu B", (unsigned long long)b);
    return s;
}

int usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s PROGRAM [--np N] [--min BYTES] [--max BYTES] [--factor F] [--iters N] "
                 "[--warmup W] [--dtype f32|i32] [--timeout S] [-v]\n",
                 argv0);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return usage(argv[0]);
    std::string program = argv[1];
    int ranks = 8, factor = 2;
    uint64_t min_bytes = 1024, max_bytes = 64ull << 20;
    weft::bench::MpiRunOptions opt;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-v") {
            opt.verbose = true;
            continue;
        }
        if (i + 1 >= argc) return usage(argv[0]);
        const char* v = argv[++i];
        if (a == "--np") ranks = std::atoi(v);
        else if (a == "--min")
            min_bytes = std::strtoull(v, nullptr, 10);
        else if (a == "--max")
            max_bytes = std::strtoull(v, nullptr, 10);
        else if (a == "--factor")
            factor = std::atoi(v);
        else if (a == "--iters")
            opt.iters = std::atoi(v);
        else if (a == "--warmup")
            opt.warmup = std::atoi(v);
        else if (a == "--dtype")
            opt.dtype = v;
        else if (a == "--timeout")
            opt.timeout_sec = std::atoi(v);
        else
            return usage(argv[0]);
    }

    auto t0 = std::chrono::steady_clock::now();
    std::string why;
    auto points = weft::bench::run_mpi_allreduce(program, ranks, min_bytes, max_bytes, factor, opt, &why);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    std::printf("Open MPI MPI_Allreduce(SUM, %s), %d ranks, busbw = algbw * 2(n-1)/n\n", opt.dtype.c_str(), ranks);
    std::printf("%10s %14s %12s %12s %8s\n", "size", "time (us)", "algbw GB/s", "busbw GB/s", "wrong");
    uint64_t wrong = 0;
    for (const auto& p : points) {
        std::printf("%10s %14.1f %12.4f %12.4f %8llu\n", human_bytes(p.bytes).c_str(), p.time_us, p.algbw_gbs,
                    p.busbw_gbs, (unsigned long long)p.wrong);
        wrong += p.wrong;
    }
    std::printf("wall time %.1f s (mpirun start-up included)\n", wall);
    if (!why.empty()) std::printf("%s: %s\n", points.empty() ? "no reference" : "incomplete", why.c_str());
    return why.empty() && wrong == 0 ? 0 : 1;
}
