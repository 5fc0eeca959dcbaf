// A model of the chips running a lowered op (ccl/lowering.h), for unit tests
// of the lowering over any routing: every stream holds at most one piece.
#pragma once
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ccl/lowering.h"

namespace weft::ccl::model {

// Runs a lowered op the way the chips would, with each stream holding at
// most one piece (a piece is the stream's whole buffering), and checks that
// every worker finishes (no cycle of waits), that every receive drains a send
// of its size, and that any two accesses of one chip's memory by different
// workers where one writes are ordered by a signal chain or a send/receive
// (vector clocks). Returns "" or what went wrong.
struct Access {
    size_t worker;                // global worker number
    std::vector<uint32_t> clock;  // the worker's vector clock when it ran the op
    uint64_t lo, hi;              // bytes [lo, hi) touched (strided runs: their hull)
    bool writes;
};

inline std::string run_model(const LoweredOp& op) {
    const size_t nw = op.workers.size();
    std::map<std::pair<uint32_t, uint32_t>, size_t> global;  // (chip, index) -> worker
    for (size_t w = 0; w < nw; ++w) global[{op.workers[w].chip, op.workers[w].index}] = w;
    // Each link worker's streams, by channel (the position of the stream's
    // port among the worker's): senders by (chip, port, lane), receivers by the far end.
    std::vector<std::vector<int>> stream_of(nw);
    for (size_t w = 0; w < nw; ++w) stream_of[w].assign(op.workers[w].ports.size(), -1);
    for (size_t s = 0; s < op.streams.size(); ++s) {
        const Stream& x = op.streams[s];
        for (size_t w = 0; w < nw; ++w) {
            const WorkerProgram& p = op.workers[w];
            const uint32_t port = p.receives ? x.peer_port : x.port;
            const uint32_t connection = p.channel_of(port);
            const bool served = connection < p.ports.size();
            const bool tx = !p.receives && p.chip == x.chip && served && p.lane == x.lane;
            const bool rx = p.receives && p.chip == x.peer_chip && served && p.lane == x.lane;
            if (!tx && !rx) continue;
            int& slot = stream_of[w][connection];
            if (slot != -1) return "worker " + std::to_string(w) + " has two streams on one connection";
            slot = static_cast<int>(s);
        }
    }
    struct InFlight {
        uint64_t bytes;
        std::vector<uint32_t> clock;
    };
    std::vector<std::vector<InFlight>> channel(op.streams.size());
    // signals[consumer][producer]: the clocks of the producer at each signal.
    std::vector<std::map<uint32_t, std::vector<std::vector<uint32_t>>>> signals(nw);
    std::vector<std::vector<uint32_t>> clock(nw, std::vector<uint32_t>(nw, 0));
    std::vector<size_t> pc(nw, 0);
    std::map<uint32_t, std::vector<Access>> accesses;  // by chip
    auto join = [](std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
        for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
    };
    auto hull = [](const abi::Pages& p) {
        return std::make_pair(p.base, p.base + (p.count ? (p.count - 1) * p.stride + p.page_size : 0));
    };
    auto touch = [&](size_t w, const abi::Pages& p, bool writes) {
        auto [lo, hi] = hull(p);
        accesses[op.workers[w].chip].push_back({w, clock[w], lo, hi, writes});
    };
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t w = 0; w < nw; ++w) {
            const WorkerProgram& p = op.workers[w];
            while (pc[w] < p.code.size()) {
                const abi::CclInstr& in = p.code[pc[w]];
                const bool link = in.opcode == abi::kCclSend || in.opcode == abi::kCclRecv ||
                                  in.opcode == abi::kCclRecvReduce;
                if (link && in.channel >= stream_of[w].size()) return "an instruction names a channel its worker lacks";
                const int s = link ? stream_of[w][in.channel] : -1;
                if (in.opcode == abi::kCclWait) {
                    const auto& got = signals[w][in.arg];
                    if (got.size() < in.count) break;
                    join(clock[w], got[in.count - 1]);
                } else if (in.opcode == abi::kCclSignal) {
                    signals[global.at({p.chip, in.arg})][p.index].push_back(clock[w]);
                } else if (in.opcode == abi::kCclSend) {
                    if (s < 0) return "a send without a stream";
                    if (!channel[s].empty()) break;  // the channel's buffers hold the last piece still
                    touch(w, in.src, false);
                    std::vector<uint32_t> sent = clock[w];
                    ++sent[w];  // a receiver knows the send read its bytes
                    channel[s].push_back({uint64_t(in.src.page_size) * in.src.count, sent});
                } else if (in.opcode == abi::kCclRecv || in.opcode == abi::kCclRecvReduce) {
                    if (s < 0) return "a receive without a stream";
                    if (channel[s].empty()) break;
                    if (channel[s].front().bytes != uint64_t(in.dst.page_size) * in.dst.count)
                        return "a receive of a size its send did not have";
                    join(clock[w], channel[s].front().clock);
                    channel[s].erase(channel[s].begin());
                    if (in.opcode == abi::kCclRecvReduce && in.src.count) touch(w, in.src, false);  // its other operand
                    touch(w, in.dst, true);
                } else if (in.opcode == abi::kCclCopy || in.opcode == abi::kCclReduce) {
                    touch(w, in.src, false);
                    touch(w, in.dst, true);
                }
                ++clock[w][w];
                ++pc[w];
                progress = true;
            }
        }
    }
    for (size_t w = 0; w < nw; ++w)
        if (pc[w] != op.workers[w].code.size())
            return "chip " + std::to_string(op.workers[w].chip) + " worker " + std::to_string(op.workers[w].index) +
                   " stuck at instruction " + std::to_string(pc[w]);
    for (const auto& ch : channel)
        if (!ch.empty()) return "a piece was sent and never received";
    // a's worker had run a.clock[a.worker] ops before a: b knows of a once it knows of one more.
    auto before = [](const Access& a, const Access& b) { return b.clock[a.worker] > a.clock[a.worker]; };
    for (const auto& [chip, v] : accesses)
        for (size_t i = 0; i < v.size(); ++i)
            for (size_t j = i + 1; j < v.size(); ++j) {
                const Access &a = v[i], &b = v[j];
                if (a.worker == b.worker || !(a.writes || b.writes) || a.hi <= b.lo || b.hi <= a.lo) continue;
                if (!before(a, b) && !before(b, a))
                    return "chip " + std::to_string(chip) + ": workers " + std::to_string(op.workers[a.worker].index) +
                           " and " + std::to_string(op.workers[b.worker].index) + " race on bytes at " +
                           std::to_string(std::max(a.lo, b.lo));
            }
    return "";
}

}  // namespace weft::ccl::model
