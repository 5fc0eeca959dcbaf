// MPI_COMM_WORLD as the fabric model's ranks (ranks.h), or one rank when weft
// was built without MPI (WEFT_HAVE_MPI unset) or runs outside a launcher.
#include <cstdlib>

#include "fabric_model/ranks.h"

#ifdef WEFT_HAVE_MPI
#include <mpi.h>
#endif

namespace weft::fabric_model {

#ifdef WEFT_HAVE_MPI
namespace {

class MpiRanks : public Ranks {
public:
    MpiRanks() {
        int ready = 0;
        MPI_Initialized(&ready);
        if (!ready) {
            MPI_Init(nullptr, nullptr);
            std::atexit([] { MPI_Finalize(); });
        }
        int r = 0, n = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        rank_ = uint32_t(r), size_ = uint32_t(n);
    }
    uint32_t rank() const override { return rank_; }
    uint32_t size() const override { return size_; }
    uint64_t min(uint64_t v) override { return reduce(v, MPI_MIN); }
    uint64_t max(uint64_t v) override { return reduce(v, MPI_MAX); }
    uint64_t sum(uint64_t v) override { return reduce(v, MPI_SUM); }

    std::vector<uint8_t> exchange(const std::vector<std::vector<uint8_t>>& to) override {
        std::vector<int> send_counts(size_), recv_counts(size_), send_at(size_), recv_at(size_);
        std::vector<uint8_t> out;
        for (uint32_t r = 0; r < size_; ++r) {
            send_at[r] = int(out.size());
            send_counts[r] = int(to[r].size());
            out.insert(out.end(), to[r].begin(), to[r].end());
        }
        MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
        int total = 0;
        for (uint32_t r = 0; r < size_; ++r) recv_at[r] = total, total += recv_counts[r];
        std::vector<uint8_t> in(static_cast<size_t>(total));
        MPI_Alltoallv(out.data(), send_counts.data(), send_at.data(), MPI_BYTE, in.data(), recv_counts.data(),
                      recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
        return in;
    }

private:
    uint64_t reduce(uint64_t v, MPI_Op op) {
        if (size_ == 1) return v;
        uint64_t out = 0;
        MPI_Allreduce(&v, &out, 1, MPI_UINT64_T, op, MPI_COMM_WORLD);
        return out;
    }
    uint32_t rank_ = 0, size_ = 1;
};

}  // namespace

// Started by an MPI launcher (Open MPI's mpirun, or a PMI one such as srun)?
// Outside one, the model stays one plain process: no MPI start-up at all.
bool launched_by_mpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

Ranks& world() {
    if (!launched_by_mpi()) {
        static OneRank one;
        return one;
    }
    static MpiRanks ranks;
    return ranks;
}
bool have_mpi() { return true; }
#else
Ranks& world() {
    static OneRank one;
    return one;
}
bool have_mpi() { return false; }
#endif

}  // namespace weft::fabric_model
