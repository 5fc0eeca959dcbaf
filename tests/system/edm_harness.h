// Runs EDM traffic over one link of a live cluster and checks every byte:
// `channels` channels in each direction asked for, one worker core per
// direction and chip serving all of them, optionally launched in a shuffled
// order with random delays.
#pragma once
#include <algorithm>
#include <random>
#include <thread>

#include "system_test.h"
#include "transport/edm/edm_builder.h"
#include "weft/abi/pattern.h"

namespace weft::test {

struct EdmRun {
    PortRef a, b;
    transport::EdmOptions options;
    uint32_t channels = 1;  // per direction
    bool both_directions = true;
    uint32_t page_size = 4096;
    uint32_t pages = 16;          // per channel
    uint32_t finish = 0;          // worker finish mode (see EdmLinkBuilder::WorkerJob)
    uint32_t sender_workers = 1;  // >1: round robin or shared
    uint32_t receiver_workers = 1;
    bool shuffle = false;
    uint32_t seed = 1;
    // Worker cores: at end a, first_worker_a sends and first_worker_a + 1 receives;
    // likewise at end b (more workers per role step by 2). kFirstWorker: the board's first.
    static constexpr uint32_t kFirstWorker = ~0u;
    uint32_t first_worker_a = kFirstWorker, first_worker_b = kFirstWorker;
};

struct EdmResult {
    uint64_t bytes = 0, wrong = 0;
    double seconds = 0;  // slowest EDM's time on the chip clock
};

inline uint64_t edm_region(const EdmRun& r) { return uint64_t(r.pages) * r.page_size; }

// Runs on a set of links at once when given several (each with its own worker cores).
inline std::vector<EdmResult> run_edm(Cluster& c, const std::vector<EdmRun>& runs) {
    const BoardInfo& b = c.board();
    transport::L1Allocator mem(b);
    std::vector<std::unique_ptr<transport::EdmLinkBuilder>> links;
    std::vector<Launch> launches;
    struct Check {
        uint32_t chip;
        uint64_t addr, bytes;
        uint32_t seed;
        size_t run;
    };
    std::vector<Check> checks;
    for (size_t ri = 0; ri < runs.size(); ++ri) {
        const EdmRun& r = runs[ri];
        auto link = std::make_unique<transport::EdmLinkBuilder>(mem, b, r.a, r.b, r.options);
        const uint64_t region = edm_region(r);
        std::vector<transport::EdmLinkBuilder::WorkerJob> send_jobs[2][transport::EdmLinkBuilder::kMaxJobWorkers],
            recv_jobs[2][transport::EdmLinkBuilder::kMaxJobWorkers];
        for (int dir = 0; dir < (r.both_directions ? 2 : 1); ++dir) {
            const PortRef from = dir == 0 ? r.a : r.b, to = dir == 0 ? r.b : r.a;
            const uint32_t board_first = b.worker_core(0);
            auto first = [&](uint32_t w) { return w == EdmRun::kFirstWorker ? board_first : w; };
            const uint32_t from_first = first(dir == 0 ? r.first_worker_a : r.first_worker_b);
            const uint32_t to_first = first(dir == 0 ? r.first_worker_b : r.first_worker_a);
            std::vector<uint32_t> senders, receivers;
            for (uint32_t w = 0; w < r.sender_workers; ++w) senders.push_back(from_first + 2 * w);
            for (uint32_t w = 0; w < r.receiver_workers; ++w) receivers.push_back(to_first + 1 + 2 * w);
            for (uint32_t k = 0; k < r.channels; ++k) {
                const uint32_t messages = (r.pages + link->pages_per_message(r.page_size) - 1) /
                                          link->pages_per_message(r.page_size);
                auto ch = link->add_sender_channel(dir, senders, messages);
                link->add_receiver_channel(ch.id, receivers);
                // Each (link, direction, channel) gets its own DRAM region on both chips.
                const uint64_t slot = (ri * 2 + dir) * 16 + k;
                const uint64_t src = b.dram.base + slot * region, dst = b.dram.base + (64ull << 20) + slot * region;
                const uint32_t seed = r.seed * 1000003u + static_cast<uint32_t>(slot);
                std::vector<uint32_t> data(region / 4);
                for (uint32_t i = 0; i < data.size(); ++i) data[i] = abi::pattern_word(seed, i);
                c.chip(from.chip).write(src, data.data(), region);
                std::memset(c.chip(to.chip).host_ptr(dst, region), 0, region);
                checks.push_back({to.chip, dst, region, seed, ri});
                const bool shared = r.options.sharing == abi::kEdmShared;
                // Round robin (one page per message): worker w takes messages w, w + W, ...
                for (uint32_t w = 0; w < r.sender_workers; ++w) {
                    const uint32_t n = r.sender_workers;
                    send_jobs[dir][w].push_back({ch.id, w, src + uint64_t(w) * r.page_size, r.page_size,
                                                 r.page_size * n, r.pages / n, r.finish});
                }
                for (uint32_t w = 0; w < r.receiver_workers; ++w) {
                    if (shared) {  // every shared receiver sees every message: each gets its own copy
                        uint64_t into = w == 0 ? dst : b.dram.base + (128ull << 20) + (slot * 4 + w) * region;
                        if (w > 0) checks.push_back({to.chip, into, region, seed, ri});
                        recv_jobs[dir][w].push_back({ch.id, w, into, r.page_size, r.page_size, r.pages, r.finish});
                        continue;
                    }
                    const uint32_t n = r.receiver_workers;
                    recv_jobs[dir][w].push_back({ch.id, w, dst + uint64_t(w) * r.page_size, r.page_size,
                                                 r.page_size * n, r.pages / n, r.finish});
                }
            }
        }
        link->write(c);
        launches.push_back(link->edm_launch(0));
        launches.push_back(link->edm_launch(1));
        for (int dir = 0; dir < 2; ++dir)
            for (uint32_t w = 0; w < transport::EdmLinkBuilder::kMaxJobWorkers; ++w) {
                if (!send_jobs[dir][w].empty()) launches.push_back(link->sender_worker(send_jobs[dir][w]));
                if (!recv_jobs[dir][w].empty()) launches.push_back(link->receiver_worker(recv_jobs[dir][w]));
            }
        links.push_back(std::move(link));
    }
    std::vector<std::pair<CoreRef, uint32_t>> launched;
    if (runs.front().shuffle) {
        std::mt19937 rng(runs.front().seed);
        std::shuffle(launches.begin(), launches.end(), rng);
        for (const Launch& l : launches) {
            launched.push_back(c.launch_all({l})[0]);
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 15));
        }
    } else {
        launched = c.launch_all(launches);
    }
    std::vector<KernelResult> results = c.wait_all(launched, std::chrono::seconds(30));
    std::vector<EdmResult> out(runs.size());
    for (size_t i = 0; i < launches.size(); ++i) {
        if (launches[i].kernel->name != "edm") continue;
        for (size_t ri = 0; ri < links.size(); ++ri)
            if (links[ri]->port(0).chip == launches[i].chip || links[ri]->port(1).chip == launches[i].chip)
                out[ri].seconds = std::max(out[ri].seconds, double(results[i].ticks) / b.timebase_hz);
    }
    for (const Check& k : checks) {
        const auto* got = reinterpret_cast<const uint32_t*>(c.chip(k.chip).host_ptr(k.addr, k.bytes));
        for (uint64_t i = 0; i < k.bytes / 4; ++i)
            if (got[i] != abi::pattern_word(k.seed, static_cast<uint32_t>(i))) out[k.run].wrong += 4;
        out[k.run].bytes += k.bytes;
    }
    return out;
}

}  // namespace weft::test
