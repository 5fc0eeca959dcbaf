#include "tensor/tensor_flat.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"

namespace weft::tensor {
namespace {

// Where `at`'s share of DRAM bank 0 ends, from the bank's start, in whole
// pages of the host (0 where it lives in L1).
uint64_t end_in_bank0(const BoardInfo& board, const abi::TensorAt& at) {
    const Region bank = board.dram_bank(0);
    if (abi::tensor_sharded(at.spec) || at.base < bank.base || at.base >= bank.base + bank.size) return 0;
    return (at.base - bank.base + abi::tensor_unit_bytes(at.spec) + 4095) & ~4095ull;
}

// Where `bytes` of runs of `what` start in DRAM bank 0, past what
// `clear_of` hold of the bank.
uint64_t run_in_bank0(const BoardInfo& board, uint64_t bytes, const std::vector<abi::TensorAt>& clear_of,
                      const std::string& what) {
    uint64_t offset = 0;
    for (const abi::TensorAt& at : clear_of) offset = std::max(offset, end_in_bank0(board, at));
    const Region bank = board.dram_bank(0);
    if (offset > bank.size || bytes > bank.size - offset)
        throw Error(what + " do not fit board " + board.name + "'s DRAM bank 0: they take " + std::to_string(bytes) +
                    " bytes from byte " + std::to_string(offset) + " of a bank of " + std::to_string(bank.size));
    return bank.base + offset;
}

// `t`'s pages in order in one run: interleaved over a single bank.
abi::TensorSpec one_run(abi::TensorSpec t) {
    t.memory = abi::kInterleaved;
    t.banks = 1;
    return t;
}

// `copies` runs of `t`'s pages in order, one after another in DRAM bank 0,
// past what `clear_of` hold of the bank.
abi::TensorAt staging_for(const BoardInfo& board, const abi::TensorSpec& tensor, uint32_t copies,
                          const std::vector<abi::TensorAt>& clear_of) {
    const abi::TensorSpec t = one_run(tensor);
    check_spec(t);
    const uint64_t bytes = abi::tensor_unit_bytes(t) * copies;
    const std::string what = std::to_string(copies) + " run(s) of " + describe(t);
    return {t, run_in_bank0(board, bytes, clear_of, what), board.dram_bank(0).size};
}

// `copies` runs of `t` as its memory lays it out, its units' buffers one
// right after another, in DRAM bank 0: `t`'s own grid of pages, so every
// page moves to and from `t` page for page (rows cut by width shards too).
// A run is tensor_units(t) * unit_stride bytes.
abi::TensorAt packed_for(const BoardInfo& board, const abi::TensorSpec& t, uint32_t copies,
                         const std::vector<abi::TensorAt>& clear_of) {
    check_spec(t);
    const uint64_t unit = abi::tensor_unit_bytes(t);
    const std::string what = std::to_string(copies) + " packed run(s) of " + describe(t);
    return {t, run_in_bank0(board, unit * abi::tensor_units(t) * copies, clear_of, what), unit};
}

// Every runner's flat op r at once: a group a runner (the rows of a mesh).
void run_at_once(const std::vector<ccl::CollectiveRunner*>& runners, const ccl::OpRequest& r) {
    std::vector<ccl::PendingOp> ops;
    ops.reserve(runners.size());
    for (ccl::CollectiveRunner* run : runners) ops.push_back(run->start(r));
    for (size_t i = 0; i < runners.size(); ++i) runners[i]->wait(ops[i]);
}

// The kernels' run `before` on every chip, then every group's flat op r at
// once, then the kernels' run `after`.
void through_flat(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners,
                  const std::vector<Launch>& before, const ccl::OpRequest& r, const std::vector<Launch>& after,
                  std::chrono::milliseconds timeout) {
    cluster.run(before, timeout);
    run_at_once(runners, r);
    cluster.run(after, timeout);
}

// check_reshard of each (from, to), its refusal prefixed by `why`.
void check_moves(const std::string& why, std::initializer_list<std::pair<abi::TensorAt, abi::TensorAt>> moves) {
    try {
        for (const auto& [from, to] : moves) check_reshard(from, to);
    } catch (const Error& e) {
        throw Error(why + ": " + e.what());
    }
}

// Whether `at`'s pages move page for page into one run of DRAM.
bool lines_up_in_one_run(const abi::TensorAt& at) {
    try {
        check_reshard(at, {one_run(at.spec), 0, 0});
        return true;
    } catch (const Error&) {
        return false;
    }
}

// A sharded tensor's shard buffers as they lie, a row of raw elements a
// core (a height-sharded view of it): an element-wise op needs only that an
// element sits in the same place on every chip, not the pages' order, and
// the padding is zero on every chip.
abi::TensorAt unit_rows(const abi::TensorAt& at) {
    abi::TensorAt rows = at;
    abi::TensorSpec& t = rows.spec;
    const uint32_t units = abi::tensor_units(at.spec);
    const auto elements = uint32_t(abi::tensor_unit_bytes(at.spec) / abi::dtype_size(at.spec.dtype));
    t.shape[0] = t.shape[1] = 1;
    t.shape[2] = units;
    t.shape[3] = elements;
    t.layout = abi::kRowMajorPages;
    t.memory = abi::kHeightSharded;
    t.grid_x = uint16_t(units);
    t.grid_y = 1;
    t.shard_rows = 1;
    t.shard_cols = elements;
    return rows;
}

// `keep` and the op's own tensors: what its staging goes past.
std::vector<abi::TensorAt> with(std::vector<abi::TensorAt> keep, std::initializer_list<abi::TensorAt> own) {
    keep.insert(keep.end(), own);
    return keep;
}

// The chips of each group (all of one size), for `op`'s message.
uint32_t group_size(const std::vector<ccl::CollectiveRunner*>& runners, const char* op) {
    const auto ranks = static_cast<uint32_t>(runners.at(0)->chips().size());
    for (const ccl::CollectiveRunner* run : runners)
        if (run->chips().size() != ranks)
            throw Error(std::string("a tensor's ") + op + " over several groups at once takes groups of one size: " +
                        std::to_string(ranks) + " chips and " + std::to_string(run->chips().size()));
    return ranks;
}

}  // namespace

GroupRunners runners_over(Machine& machine, const std::vector<std::vector<uint32_t>>& groups,
                          const ccl::RunnerOptions& options) {
    GroupRunners g;
    for (const std::vector<uint32_t>& chips : groups) {
        g.owned.push_back(std::make_unique<ccl::CollectiveRunner>(machine, chips, options));
        g.runners.push_back(g.owned.back().get());
    }
    return g;
}

ccl::OpRequest flat_op(ccl::Collective op, abi::DataType dtype, const std::string& algo, uint64_t bytes,
                       abi::MathOp redop) {
    ccl::OpRequest r;
    r.op = op;
    r.dtype = dtype;
    r.redop = redop;
    r.algo = algo;
    r.bytes = bytes;
    return r;
}

void all_reduce(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& at, abi::MathOp op, uint32_t core,
                std::chrono::milliseconds timeout, const std::string& algo) {
    all_reduce(cluster, std::vector<ccl::CollectiveRunner*>{&runner}, at, op, core, timeout, algo);
}

void all_reduce(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& at,
                abi::MathOp op, uint32_t core, std::chrono::milliseconds timeout, const std::string& algo,
                const std::vector<abi::TensorAt>& keep) {
    const BoardInfo& board = cluster.board();
    // Where its pages do not line up in one run (rows cut by width shards),
    // its shards go through DRAM as they lie.
    const abi::TensorAt from = !abi::tensor_sharded(at.spec) || lines_up_in_one_run(at) ? at : unit_rows(at);
    const abi::TensorAt staging = staging_for(board, from.spec, 1, with(keep, {at}));
    check_reshard(from, staging);
    std::vector<Launch> there, back;
    for (const ccl::CollectiveRunner* run : runners)
        for (uint32_t chip : run->chips()) {
            there.push_back(reshard_launch(board, chip, core, from, staging));
            back.push_back(reshard_launch(board, chip, core, staging, from));
        }
    ccl::OpRequest r = flat_op(ccl::Collective::kAllReduce, abi::DataType(at.spec.dtype), algo,
                               abi::tensor_unit_bytes(staging.spec), op);
    r.send = r.recv = staging.base;
    r.keep = dram_ranges(keep);
    through_flat(cluster, runners, there, r, back, timeout);
}

void reduce_scatter(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& input,
                    const abi::TensorAt& output, uint32_t dim, abi::MathOp op, uint32_t core,
                    std::chrono::milliseconds timeout, const std::string& algo) {
    reduce_scatter(cluster, std::vector<ccl::CollectiveRunner*>{&runner}, input, output, dim, op, core, timeout, algo);
}

void reduce_scatter(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& input,
                    const abi::TensorAt& output, uint32_t dim, abi::MathOp op, uint32_t core,
                    std::chrono::milliseconds timeout, const std::string& algo,
                    const std::vector<abi::TensorAt>& keep) {
    const BoardInfo& board = cluster.board();
    const uint32_t ranks = group_size(runners, "reduce_scatter");
    check_reduce_scatter(input.spec, output.spec, dim, ranks);
    // Each part's run laid out as the output: it moves into it page for page.
    const abi::TensorAt staging = packed_for(board, output.spec, ranks, with(keep, {input, output}));
    const uint64_t stride = abi::tensor_units(staging.spec) * staging.unit_stride;
    std::vector<Launch> split, back;
    for (const ccl::CollectiveRunner* run : runners)
        for (uint32_t k = 0; k < ranks; ++k) {
            const uint32_t chip = run->chips()[k];
            // Zeroed first: a row-major part's page may end in padding the split does not write.
            cluster.clear(chip, staging.base, stride * ranks);
            split.push_back({chip, core, &kernel_named(board, "tensor_split"),
                             KernelArgWords::of(abi::TensorSplitArgs{input, staging, dim, ranks, stride, 0, 0})});
            abi::TensorAt mine = staging;
            mine.base += k * stride;
            back.push_back(reshard_launch(board, chip, core, mine, output));
        }
    // A rank's block is its part: the parts are equal and whole elements.
    ccl::OpRequest r =
        flat_op(ccl::Collective::kReduceScatter, abi::DataType(input.spec.dtype), algo, stride * ranks, op);
    r.send = r.recv = staging.base;
    r.keep = dram_ranges(keep);
    through_flat(cluster, runners, split, r, back, timeout);
}

void all_gather(Cluster& cluster, const std::vector<ccl::CollectiveRunner*>& runners, const abi::TensorAt& input,
                const abi::TensorAt& output, uint32_t dim, uint32_t core, std::chrono::milliseconds timeout,
                const std::string& algo, const std::vector<abi::TensorAt>& keep) {
    const BoardInfo& board = cluster.board();
    const uint32_t ranks = group_size(runners, "all_gather");
    check_all_gather(input.spec, output.spec, dim, ranks);
    const abi::TensorAt staging = staging_for(board, input.spec, ranks, with(keep, {input, output}));
    const uint64_t stride = abi::tensor_unit_bytes(staging.spec);
    check_moves("a tensor's all_gather through the flat one moves each chip's part into one run of DRAM, page for "
                "page",
                {{input, staging}});
    std::vector<Launch> there, join;
    for (const ccl::CollectiveRunner* run : runners)
        for (uint32_t k = 0; k < ranks; ++k) {
            const uint32_t chip = run->chips()[k];
            abi::TensorAt mine = staging;
            mine.base += k * stride;
            there.push_back(reshard_launch(board, chip, core, input, mine));
            join.push_back({chip, core, &kernel_named(board, "tensor_split"),
                            KernelArgWords::of(abi::TensorSplitArgs{output, staging, dim, ranks, stride, 1, 0})});
        }
    // Rank k's block is its run: the runs are equal and whole elements.
    ccl::OpRequest r = flat_op(ccl::Collective::kAllGather, abi::DataType(input.spec.dtype), algo, stride * ranks);
    r.send = r.recv = staging.base;
    r.keep = dram_ranges(keep);
    through_flat(cluster, runners, there, r, join, timeout);
}

void send_recv(Cluster& cluster, ccl::CollectiveRunner& runner, const abi::TensorAt& input, const abi::TensorAt& output,
               uint32_t core, std::chrono::milliseconds timeout, const std::string& algo) {
    const BoardInfo& board = cluster.board();
    check_send_recv(input.spec, output.spec);
    const abi::TensorAt sent = staging_for(board, input.spec, 2, {input, output});
    abi::TensorAt received = sent;
    received.base += abi::tensor_unit_bytes(sent.spec);
    check_moves("a tensor's sendrecv through the flat one moves it through runs of DRAM, page for page",
                {{input, sent}, {received, output}});
    std::vector<Launch> there, back;
    for (uint32_t chip : runner.chips()) {
        there.push_back(reshard_launch(board, chip, core, input, sent));
        back.push_back(reshard_launch(board, chip, core, received, output));
    }
    ccl::OpRequest r =
        flat_op(ccl::Collective::kSendRecv, abi::DataType(input.spec.dtype), algo, abi::tensor_unit_bytes(sent.spec));
    r.send = sent.base;
    r.recv = received.base;
    through_flat(cluster, {&runner}, there, r, back, timeout);
}

}  // namespace weft::tensor
