// The processes one fabric model runs as: one (the default), or MPI ranks,
// each owning some chips. The engine meets the others only through this:
// reductions at each window's edge and the packets that cross to a chip
// another rank owns. A test or another launcher can implement it too.
#pragma once
#include <stdint.h>

#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace weft::fabric_model {

class Ranks {
public:
    virtual ~Ranks() = default;
    virtual uint32_t rank() const = 0;
    virtual uint32_t size() const = 0;
    virtual uint64_t min(uint64_t value) = 0;
    virtual uint64_t max(uint64_t value) = 0;
    virtual uint64_t sum(uint64_t value) = 0;
    // Sends to[r] to rank r (every rank calls it); returns what each rank
    // sent this one, in rank order, concatenated.
    virtual std::vector<uint8_t> exchange(const std::vector<std::vector<uint8_t>>& to) = 0;
};

// What every rank holds of something, in rank order: each sends `mine` to
// every rank (all call it). One rank: `mine`.
inline std::vector<uint8_t> from_every_rank(Ranks& ranks, const std::vector<uint8_t>& mine) {
    if (ranks.size() == 1) return mine;
    return ranks.exchange(std::vector<std::vector<uint8_t>>(ranks.size(), mine));
}

// The same for values of a plain type (records, words): every rank's, in rank order.
template <typename T>
std::vector<T> values_from_every_rank(Ranks& ranks, const std::vector<T>& mine) {
    static_assert(std::is_trivially_copyable_v<T>, "sent as bytes");
    if (ranks.size() == 1) return mine;
    const auto* bytes = reinterpret_cast<const uint8_t*>(mine.data());
    const std::vector<uint8_t> all =
        from_every_rank(ranks, std::vector<uint8_t>(bytes, bytes + mine.size() * sizeof(T)));
    std::vector<T> out(all.size() / sizeof(T));
    std::memcpy(out.data(), all.data(), out.size() * sizeof(T));
    return out;
}

// This process alone.
class OneRank : public Ranks {
public:
    uint32_t rank() const override { return 0; }
    uint32_t size() const override { return 1; }
    uint64_t min(uint64_t v) override { return v; }
    uint64_t max(uint64_t v) override { return v; }
    uint64_t sum(uint64_t v) override { return v; }
    std::vector<uint8_t> exchange(const std::vector<std::vector<uint8_t>>& to) override { return to.at(0); }
};

// MPI's ranks of MPI_COMM_WORLD when weft was built with Open MPI and this
// process was started by an MPI launcher (MPI_Init on first use,
// MPI_Finalize at exit), else this process alone.
Ranks& world();
// Built with MPI: the model can run under mpirun.
bool have_mpi();

}  // namespace weft::fabric_model
