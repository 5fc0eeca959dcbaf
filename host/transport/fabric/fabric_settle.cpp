#include "transport/fabric/fabric_settle.h"

#include <utility>

#include "common/fnv1a.h"

namespace weft::transport {
namespace {

uint32_t word_at(Machine& m, uint32_t chip, uint64_t address) {
    uint32_t w = 0;
    m.read(chip, address, &w, sizeof w);
    return w;
}

// The words other cores write into the router's L1: the packets written
// into its channels, and what its peer sent and freed.
void fold_written(Machine& m, const FabricRouterPlan& p, Fnv1a& fold) {
    const abi::FabricRouterConfig& c = p.config;
    for (uint32_t i = 0; i < c.num_senders; ++i)
        if (c.senders[i].slots) fold.add_word(word_at(m, p.chip, c.senders[i].written));
    for (const abi::FabricRing& in : c.fallback_in)
        if (in.slots) fold.add_word(word_at(m, p.chip, in.written));
    abi::FabricLinkWords link{};
    m.read(p.chip, c.link_words, &link, sizeof link);
    for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) fold.add_word(link.filled[v]), fold.add_word(link.acked[v]);
}

// The router's own counts; returns whether a receiver's NoC write is in flight.
bool fold_status(const abi::FabricRouterStatus& s, const abi::FabricRouterConfig& c, Fnv1a& fold) {
    bool writing = false;
    for (uint64_t w : {s.delivered, s.forwarded, s.dropped, s.resent}) fold.add_word(w);
    for (uint32_t v = 0; v < abi::kFabricMaxVcs; ++v) {
        for (uint64_t w : {s.vc_packets_sent[v], s.receivers[v].done, s.receivers[v].freed}) fold.add_word(w);
        writing |= s.receivers[v].done != s.receivers[v].freed;
    }
    for (uint32_t i = 0; i < c.num_senders; ++i) fold.add_word(s.senders[i].done), fold.add_word(s.senders[i].freed);
    return writing;
}

}  // namespace

void SettleWatch::reset() {
    polls_.clear();
    counts_ = 0;
    still_ = 0;
    rings_due_ = true;
}

bool SettleWatch::look(Machine& machine, const FabricBuilder& fabric, const AllRanks& all) {
    const std::vector<FabricRouterPlan>& routers = fabric.routers();
    const bool first = polls_.empty();
    polls_.resize(routers.size());
    Fnv1a fold;
    bool polled = !first, writing = false;
    std::vector<uint32_t> polls(routers.size());
    for (size_t r = 0; r < routers.size(); ++r) {
        const FabricRouterPlan& p = routers[r];
        if (!machine.alive(p.chip)) continue;
        abi::FabricRouterStatus s;
        machine.read(p.chip, p.config.status, &s, sizeof s);
        // Never polled here: on the fabric model's ranks, another rank's router.
        if (s.polls == 0) continue;
        polled &= s.polls != polls_[r];
        polls[r] = s.polls;
        writing |= fold_status(s, p.config, fold);
        fold_written(machine, p, fold);
    }
    rings_due_ = first || polled;
    if (!rings_due_) return all ? all(false) : false;  // a router rung at the last look has not polled yet
    polls_ = std::move(polls);
    const bool still = polled && !writing && fold.value() == counts_;
    counts_ = fold.value();
    still_ = still ? still_ + 1 : 0;
    const bool settled = still_ >= 2;
    return all ? all(settled) : settled;
}

}  // namespace weft::transport
