// Open MPI's MPI_Allreduce as the reference beside weft's all-reduce numbers:
// runs bench/mpi_allreduce.cpp (built as its own MPI program) under
// `mpirun -np ranks` on this machine, shared memory only, and parses its
// JSON lines. Needs the Debian packages openmpi-bin (mpirun, at run time) and
// libopenmpi-dev (to build the program).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace weft::bench {

struct MpiPoint {
    uint64_t bytes;
    double time_us, algbw_gbs, busbw_gbs;  // slowest rank's mean per call; GB = 1e9 B
    uint64_t wrong;                        // wrong result elements, summed over ranks
};

// Runs `mpirun -np ranks` on the given program; returns the points, or an empty vector plus a
// human-readable reason in *why (e.g. "mpirun not found: install openmpi-bin") when it cannot run.
// *why is cleared on a complete run. A run that stops part way (a deadline, a crash) returns the
// sizes it finished and says why in *why, so: empty result = no reference at all; non-empty
// *why = the sweep is incomplete. Wrong elements are data, not failures: check MpiPoint::wrong.
std::vector<MpiPoint> run_mpi_allreduce(const std::string& program, int ranks, uint64_t min_bytes, uint64_t max_bytes,
                                        int factor, std::string* why);

struct MpiRunOptions {
    int timeout_sec = 180;      // mpirun is stopped (SIGTERM, then SIGKILL) after this long
    int iters = 0;              // 0: the program's adaptive count
    int warmup = -1;            // -1: the program's default (2)
    std::string dtype = "f32";  // f32 or i32
    bool verbose = false;       // print the mpirun command line on stderr
};

// The same, with the knobs above.
std::vector<MpiPoint> run_mpi_allreduce(const std::string& program, int ranks, uint64_t min_bytes, uint64_t max_bytes,
                                        int factor, const MpiRunOptions& options, std::string* why);

// Where mpirun is on PATH, or "" when it is not.
std::string find_mpirun();

// What an mpirun run left: everything on stdout, the last 64 KiB of stderr.
struct MpirunOutput {
    std::string out, err;
    int status = 0;  // waitpid status
    bool timed_out = false;
    bool killed_hard = false;  // SIGTERM was not enough
    bool ok() const;           // exited 0 in time
};

// `mpirun -np ranks PROGRAM ARGS...` (program_args: an absolute path first)
// with the command line mpi_reference.cpp explains (shared memory only, root
// allowed, no binding), stopped after timeout_sec; once more without CMA if that failed.
// False, with *why, only when mpirun is missing or cannot start.
bool run_mpirun(const std::vector<std::string>& program_args, int ranks, int timeout_sec, bool verbose,
                MpirunOutput* run, std::string* why);
// Why a run that started did not succeed, in words a reader can act on.
std::string mpirun_failure(const MpirunOutput& run, int timeout_sec);

}  // namespace weft::bench
