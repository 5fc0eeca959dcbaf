#include "driver/link_test.h"

#include <string.h>

#include <algorithm>
#include <map>

#include "common/error.h"
#include "driver/platform_kernels.h"
#include "weft/abi/pattern.h"

namespace weft {
namespace {

// Where a transfer's buffers sit: each chip's DRAM holds a TX and an RX buffer
// per port, so all links can run at once without sharing memory.
uint64_t tx_buffer(const BoardInfo& b, uint32_t port, uint64_t bytes) { return b.dram.base + (2 * port) * bytes; }
uint64_t rx_buffer(const BoardInfo& b, uint32_t port, uint64_t bytes) { return b.dram.base + (2 * port + 1) * bytes; }

}  // namespace

std::vector<LinkTransfer> run_link_test(Cluster& cluster, const LinkTestOptions& opt) {
    cluster.claim("linktest");
    const BoardInfo& board = cluster.board();
    if (opt.bytes == 0 || opt.bytes % 4) throw Error("link test size must be a positive multiple of 4 bytes");
    if (opt.packet == 0) throw Error("link test packet size must be positive");
    if (2 * board.ports.size() * opt.bytes > board.dram.size)
        throw Error("link test size " + std::to_string(opt.bytes) + " is too large for the chips' DRAM");
    const std::vector<uint32_t> workers = board.cores_with_role(CoreRole::kWorker);

    std::vector<LinkTransfer> transfers;
    for (const LinkInfo& l : cluster.links()) {
        if (!l.up) {
            std::string why;
            for (uint32_t chip : {l.chip_a, l.chip_b})
                if (!cluster.chip(chip).alive()) why = " (chip " + std::to_string(chip) + " is dead: 'weft status')";
            throw Error("link chip " + std::to_string(l.chip_a) + " port " + port_name(board, l.port_a) + " <-> chip " +
                        std::to_string(l.chip_b) + " port " + port_name(board, l.port_b) + " is down" + why);
        }
        transfers.push_back({l.chip_a, l.port_a, l.chip_b, l.port_b});
        transfers.push_back({l.chip_b, l.port_b, l.chip_a, l.port_a});
    }

    // One checking worker per receiving port of a chip.
    std::map<uint32_t, uint32_t> next_worker;
    std::vector<Launch> receivers, senders;
    for (size_t i = 0; i < transfers.size(); ++i) {
        LinkTransfer& t = transfers[i];
        t.bytes = opt.bytes;
        const uint32_t seed = opt.seed * 7919u + static_cast<uint32_t>(i);
        Chip& from = cluster.chip(t.from_chip);
        Chip& to = cluster.chip(t.to_chip);
        uint32_t& w = next_worker[t.to_chip];
        if (w >= workers.size())
            throw Error("chip " + std::to_string(t.to_chip) + " has more links than worker cores to check them");
        const uint32_t worker = workers[w++];
        const uint64_t flag = board.l1_free(worker).base;

        std::vector<uint32_t> data(opt.bytes / 4);
        for (uint32_t k = 0; k < data.size(); ++k) data[k] = abi::pattern_word(seed, k);
        from.write(tx_buffer(board, t.from_port, opt.bytes), data.data(), opt.bytes);
        memset(to.host_ptr(rx_buffer(board, t.to_port, opt.bytes), opt.bytes), 0, opt.bytes);
        to.write32(flag, 0);

        t.chip_checked = std::min(opt.bytes, opt.chip_check_limit);
        receivers.push_back(kernels::recv_check(board, t.to_chip, worker, flag, 1,
                                                rx_buffer(board, t.to_port, opt.bytes),
                                                static_cast<uint32_t>(t.chip_checked), seed));
        senders.push_back(kernels::eth_send(board, t.from_chip, board.ports.at(t.from_port).core, t.from_port,
                                            tx_buffer(board, t.from_port, opt.bytes),
                                            rx_buffer(board, t.to_port, opt.bytes), static_cast<uint32_t>(opt.bytes),
                                            opt.packet, 1, flag, 1));
    }
    std::vector<Launch> all = receivers;
    all.insert(all.end(), senders.begin(), senders.end());
    std::vector<KernelResult> results = cluster.run(all, opt.timeout);

    for (size_t i = 0; i < transfers.size(); ++i) {
        LinkTransfer& t = transfers[i];
        t.wrong_words = results[i].return_code;
        const KernelResult& sent = results[receivers.size() + i];
        if (sent.return_code != 0)
            throw Error("eth_send on chip " + std::to_string(t.from_chip) + " port " + std::to_string(t.from_port) +
                        " returned " + std::to_string(sent.return_code) + " (link down?)");
        t.seconds = double(sent.ticks) / board.timebase_hz;
        const uint32_t seed = opt.seed * 7919u + static_cast<uint32_t>(i);
        const auto* got = reinterpret_cast<const uint8_t*>(
            cluster.chip(t.to_chip).host_ptr(rx_buffer(board, t.to_port, opt.bytes), opt.bytes));
        for (uint64_t k = 0; k < opt.bytes / 4; ++k) {
            const uint32_t want = abi::pattern_word(seed, static_cast<uint32_t>(k));
            for (int b = 0; b < 4; ++b)
                if (got[k * 4 + b] != uint8_t(want >> (8 * b))) ++t.wrong_bytes;
        }
    }
    return transfers;
}

}  // namespace weft
