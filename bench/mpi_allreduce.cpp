// Reference point for weft's all-reduce numbers: Open MPI's MPI_Allreduce(SUM)
// over the same message sizes, run by bench/mpi_reference.cpp under mpirun.
//
//   mpi_allreduce [--min BYTES] [--max BYTES] [--factor F] [--iters N]
//                 [--warmup W] [--dtype f32|i32]
//
// Defaults: --min 1024 --max 67108864 --factor 2 --warmup 2 --dtype f32, and
// adaptive iterations (see pick_iters). Rank 0 prints one JSON object per size:
//   {"bytes":B,"count":C,"time_us":T,"algbw_gbs":A,"busbw_gbs":S,"wrong":W}
// time_us is the slowest rank's mean time per MPI_Allreduce; algbw = bytes/time
// and busbw = algbw * 2(n-1)/n, the nccl-tests convention (GB = 1e9 bytes);
// wrong is the number of wrong result elements summed over all ranks, checked
// after the last timed iteration. Diagnostics go to stderr. Exit status is 0
// when every size ran (wrong elements are reported, not fatal), 2 on bad usage.
// The C API only: keep Open MPI / MPICH from pulling in the deprecated C++
// bindings (whose headers warn under -Wextra).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
    uint64_t min_bytes = 1024;
    uint64_t max_bytes = 64ull << 20;
    uint64_t factor = 2;
    int iters = 0;  // 0: adaptive
    int warmup = 2;
    bool is_float = true;
};

bool parse_u64(const char* s, uint64_t* out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-') return false;
    *out = v;
    return true;
}

// Returns an error message, or an empty string when the arguments are good.
std::string parse(int argc, char** argv, Options* o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
        uint64_t n = 0;
        if (a == "--dtype") {
            if (!v) return "--dtype needs a value";
            if (std::strcmp(v, "f32") == 0) o->is_float = true;
            else if (std::strcmp(v, "i32") == 0)
                o->is_float = false;
            else
                return std::string("--dtype must be f32 or i32, not ") + v;
        } else if (a == "--min" || a == "--max" || a == "--factor" || a == "--iters" || a == "--warmup") {
            if (!parse_u64(v, &n)) return a + " needs a non-negative integer";
            if (a == "--min") o->min_bytes = n;
            else if (a == "--max")
                o->max_bytes = n;
            else if (a == "--factor")
                o->factor = n;
            else if (a == "--iters")
                o->iters = static_cast<int>(std::min<uint64_t>(n, 1000000));
            else
                o->warmup = static_cast<int>(std::min<uint64_t>(n, 1000000));
        } else if (a == "-h" || a == "--help") {
            return "usage";
        } else {
            return "unknown argument " + a;
        }
        ++i;
    }
    if (o->min_bytes < 4) return "--min must be at least 4 bytes (one element)";
    if (o->max_bytes < o->min_bytes) return "--max must be >= --min";
    if (o->factor < 2) return "--factor must be at least 2";
    if (o->iters < 0 || o->warmup < 0) return "--iters/--warmup must be >= 0";
    return {};
}

// Adaptive iteration count: 20 for small messages, fewer once one all-reduce
// takes long, so each size costs at most ~2 s of timed loop (8 ranks on 2 cores
// take ~0.3-0.6 s per 64 MiB all-reduce), and the whole sweep stays inside
// kTotalSec even on a loaded machine: once the sweep is behind, the sizes left
// share what remains, down to one iteration each. warm_sec is the slowest
// rank's warm-up time per call and elapsed_sec rank 0's time since the sweep began, so
// every rank computes the same count.
int pick_iters(double warm_sec, double elapsed_sec, int sizes_left) {
    constexpr double kPerSizeSec = 2.0, kTotalSec = 45.0;
    constexpr int kMax = 20;
    if (warm_sec <= 0) return kMax;
    double budget = std::min(kPerSizeSec, std::max(0.0, kTotalSec - elapsed_sec) / std::max(1, sizes_left));
    return static_cast<int>(std::clamp(budget / warm_sec, 1.0, double(kMax)));
}

// Value of element i on rank r: small integers, so the float sum over any
// number of ranks and any summation order is exact.
inline int32_t value(int rank, uint64_t i) { return (rank % 16 + 1) * static_cast<int32_t>(i % 7 + 1); }

template <typename T>
void run_size(const Options& o, uint64_t bytes, MPI_Datatype type, int rank, int ranks, double start, int sizes_left) {
    const uint64_t count = bytes / sizeof(T);
    bytes = count * sizeof(T);
    std::vector<T> send(count), recv(count);
    for (uint64_t i = 0; i < count; ++i) send[i] = static_cast<T>(value(rank, i));
    const int icount = static_cast<int>(count);

    // Warm-up, timed so the adaptive iteration count can be agreed on.
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int w = 0; w < o.warmup; ++w) MPI_Allreduce(send.data(), recv.data(), icount, type, MPI_SUM, MPI_COMM_WORLD);
    double warm = o.warmup ? (MPI_Wtime() - t0) / o.warmup : 0.0;
    int iters = o.iters;
    if (iters == 0) {
        double mine[2] = {warm, rank == 0 ? MPI_Wtime() - start : 0.0}, all[2] = {0, 0};
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        iters = pick_iters(all[0], all[1], sizes_left);
    }
    if (iters == 0) iters = 1;

    std::fill(recv.begin(), recv.end(), T(-1));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int it = 0; it < iters; ++it) MPI_Allreduce(send.data(), recv.data(), icount, type, MPI_SUM, MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - t0;

    // Expected sum over ranks: sum_r (r%16+1) * (i%7+1).
    int64_t rank_sum = 0;
    for (int r = 0; r < ranks; ++r) rank_sum += r % 16 + 1;
    unsigned long long wrong = 0;
    for (uint64_t i = 0; i < count; ++i)
        if (recv[i] != static_cast<T>(rank_sum * static_cast<int64_t>(i % 7 + 1))) ++wrong;

    double elapsed_max = 0;
    unsigned long long wrong_sum = 0;
    MPI_Reduce(&elapsed, &elapsed_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &wrong_sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;

    const double sec = elapsed_max / iters;
    const double algbw = sec > 0 ? double(bytes) / sec / 1e9 : 0.0;
    const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
    std::printf("{\"bytes\":%" PRIu64 ",\"count\":%" PRIu64
                ",\"time_us\":%.3f,\"algbw_gbs\":%.6f,\"busbw_gbs\":%.6f,\"wrong\":%llu"
                ",\"iters\":%d,\"ranks\":%d,\"dtype\":\"%s\"}\n",
                bytes, count, sec * 1e6, algbw, busbw, wrong_sum, iters, ranks, o.is_float ? "f32" : "i32");
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);

    Options o;
    std::string err = parse(argc, argv, &o);
    if (!err.empty()) {
        if (rank == 0)
            std::fprintf(stderr,
                         "%s%susage: %s [--min BYTES] [--max BYTES] [--factor F] [--iters N] "
                         "[--warmup W] [--dtype f32|i32]\n",
                         err == "usage" ? "" : err.c_str(), err == "usage" ? "" : "\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (o.max_bytes / 4 > uint64_t(INT32_MAX)) {
        if (rank == 0) std::fprintf(stderr, "--max too large for one MPI_Allreduce call\n");
        MPI_Finalize();
        return 2;
    }

    std::vector<uint64_t> sizes;
    for (uint64_t bytes = o.min_bytes;; bytes *= o.factor) {
        sizes.push_back(bytes);
        if (bytes > o.max_bytes / o.factor) break;  // next step would pass max (or overflow)
    }
    const double start = MPI_Wtime();
    for (size_t k = 0; k < sizes.size(); ++k) {
        const int left = static_cast<int>(sizes.size() - k);
        if (o.is_float) run_size<float>(o, sizes[k], MPI_FLOAT, rank, ranks, start, left);
        else
            run_size<int32_t>(o, sizes[k], MPI_INT32_T, rank, ranks, start, left);
    }
    MPI_Finalize();
    return 0;
}
