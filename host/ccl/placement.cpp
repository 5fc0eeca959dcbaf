#include "ccl/placement.h"

#include <map>
#include <string>

#include "common/error.h"
#include "driver/kernel_args.h"

namespace weft::ccl {

namespace {

// Where each worker's program, signals and channel table live.
struct WorkerPlace {
    uint64_t program = 0, signals = 0, channels = 0;
};

// Each worker's channel table, in the order of its ports (CclInstr::channel),
// filled with the ends the transport gave every stream.
std::vector<std::vector<abi::ChannelRef>> channel_tables(const LoweredOp& op,
                                                         const std::vector<transport::StreamEnds>& ends) {
    std::vector<std::vector<abi::ChannelRef>> tables(op.workers.size());
    std::map<std::pair<uint32_t, uint32_t>, size_t> worker_at;  // (chip, core) -> worker
    for (size_t w = 0; w < op.workers.size(); ++w) {
        tables[w].resize(op.workers[w].ports.size());
        worker_at[{op.workers[w].chip, op.workers[w].core}] = w;
    }
    auto entry = [&](uint32_t chip, uint32_t core, uint32_t port) -> abi::ChannelRef& {
        const size_t w = worker_at.at({chip, core});
        const uint32_t c = op.workers[w].channel_of(port);
        if (c == op.workers[w].ports.size()) throw Error("internal: a stream on a port its worker does not serve");
        return tables[w][c];
    };
    for (size_t s = 0; s < op.streams.size(); ++s) {
        const Stream& x = op.streams[s];
        entry(x.chip, x.sender_core, x.port) = ends[s].sender;
        entry(x.peer_chip, x.receiver_core, x.peer_port) = ends[s].receiver;
    }
    return tables;
}

WorkerPlace place_worker(const WorkerProgram& p, size_t channels, transport::L1Allocator& mem) {
    WorkerPlace at;
    const std::string what = "CCL program of " + std::to_string(p.code.size()) + " instructions";
    at.program = mem.allocate(p.chip, p.core, p.code.size() * sizeof(abi::CclInstr), 64, what);
    at.signals = mem.allocate(p.chip, p.core, 4 * abi::kCclMaxProducers, 16, "CCL signal semaphores");
    if (channels)
        at.channels = mem.allocate(p.chip, p.core, sizeof(abi::ChannelRef) * channels, 16, "CCL channel table");
    return at;
}

}  // namespace

PlacedOp place_op(const LoweredOp& op, transport::Transport& transport, transport::L1Allocator& mem,
                  const KernelImage* worker_kernel) {
    PlacedOp placed;
    for (const Stream& s : op.streams) placed.ends.push_back(transport.add_stream(s));
    const auto tables = channel_tables(op, placed.ends);
    std::vector<WorkerPlace> at(op.workers.size());
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> signals_of;  // (chip, worker index)
    for (size_t w = 0; w < op.workers.size(); ++w) {
        at[w] = place_worker(op.workers[w], tables[w].size(), mem);
        signals_of[{op.workers[w].chip, op.workers[w].index}] = at[w].signals;
    }
    transport.write(placed.memory);
    placed.launches = transport.launches();
    for (size_t w = 0; w < op.workers.size(); ++w) {
        WorkerProgram p = op.workers[w];
        for (abi::CclInstr& in : p.code)
            if (in.opcode == abi::kCclSignal) {
                in.dst.base = signals_of.at({p.chip, in.arg}) + 4ull * p.index;
                in.arg = p.index;
            }
        if (!p.code.empty())
            placed.memory.write(p.chip, at[w].program, p.code.data(), p.code.size() * sizeof(abi::CclInstr));
        placed.memory.clear(p.chip, at[w].signals, 4 * abi::kCclMaxProducers);
        if (at[w].channels)
            placed.memory.write(p.chip, at[w].channels, tables[w].data(), sizeof(abi::ChannelRef) * tables[w].size());
        abi::CclWorkerArgs args{};
        args.program = at[w].program;
        args.signals = at[w].signals;
        args.channels = at[w].channels;
        args.instructions = static_cast<uint32_t>(p.code.size());
        args.channel_count = static_cast<uint32_t>(tables[w].size());
        placed.launches.push_back({p.chip, p.core, worker_kernel, KernelArgWords::of(args)});
    }
    return placed;
}

}  // namespace weft::ccl
