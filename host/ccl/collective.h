// The collective ops weft runs and how an op's buffers sit in every chip's
// DRAM. Ranks are chip ids; the algorithms (algorithm_table.h) walk the chips
// in an overlay order (a ring or a line) chosen over the cables (topology.h).
#pragma once
#include <stdint.h>

#include <array>
#include <string>
#include <vector>

#include "ccl/plan.h"
#include "ccl/topology.h"
#include "common/knobs.h"
#include "weft/abi/commands.h"

namespace weft::ccl {

enum class Collective { kAllGather, kReduceScatter, kAllReduce, kBroadcast, kReduce, kGather, kScatter, kSendRecv };

const std::vector<Collective>& all_collectives();
std::string collective_name(Collective c);
// Throws weft::Error listing the valid names.
Collective parse_collective(const std::string& name);
// Whether the cluster is one mesh or torus of at least 2x2, where the grid's
// own algorithms run (algorithm_table.h has every op's algorithms).
bool is_grid(const ClusterTopology& t);
// nccl-tests' bus bandwidth factor: busbw = algbw * factor.
double bus_factor(Collective c, uint32_t ranks);
bool reduces(Collective c);

uint32_t dtype_size(abi::DataType t);
std::string dtype_name(abi::DataType t);
abi::DataType parse_dtype(const std::string& name);
std::string redop_name(abi::MathOp op);
abi::MathOp parse_redop(const std::string& name);

struct OpRequest {
    Collective op = Collective::kAllReduce;
    abi::DataType dtype = abi::kF32;
    abi::MathOp redop = abi::kMathSum;
    // nccl-tests' size: the whole vector (all-reduce, broadcast, reduce,
    // send/recv, reduce-scatter's input) or the whole gathered result
    // (all-gather, gather, scatter's input). Need not divide by the ranks.
    uint64_t bytes = 0;
    std::string algo = "auto";
    uint32_t root = 0;
    // All-gather of a 4-D tensor: each rank's shape and the dimension to
    // concatenate along (then `bytes` is ignored). shape[0] == 0: flat.
    std::array<uint64_t, 4> shape{};
    uint32_t dim = 0;
    // The caller's buffers in chip DRAM, at the same address on every chip
    // (0: weft places it). send == recv runs in place, NCCL's way: all-gather
    // and gather find each rank's input at its own block of recv,
    // reduce-scatter and scatter leave each rank's output at its own block of
    // send, the other ops overwrite the input with the result.
    uint64_t send = 0, recv = 0;
    bool in_place() const { return send != 0 && send == recv; }
    // DRAM the op leaves alone, the same on every chip (tensors that outlive
    // it): the buffers weft places go round it, and send or recv inside it
    // is refused.
    std::vector<Pages> keep;
};

// Where an op's buffers are, the same addresses on every chip, and how the
// vector is cut into per-rank blocks (remainders go to the first ranks).
struct OpLayout {
    uint32_t ranks = 0;
    uint32_t element = 4;
    uint64_t elements = 0;                           // of the whole vector
    std::vector<uint64_t> block_elems, block_first;  // per rank
    uint64_t input = 0, output = 0, work = 0;
    uint64_t input_bytes = 0, output_bytes = 0, work_bytes = 0;
    Pages scratch;
    // In place: a rank's block-sized input is its block of the output
    // (all-gather, gather), or its block-sized output its block of the input
    // (reduce-scatter, scatter).
    bool input_in_output = false, output_in_input = false;
    // The input (all-gather, gather) or the output (reduce-scatter, scatter)
    // is one rank's block, not the whole vector.
    bool block_input = false, block_output = false;
    // All-gather along an inner dimension: rank r's block in the output is
    // `outer` pages of `inner` bytes, one every ranks * inner bytes.
    uint64_t outer = 1, inner = 0;

    Pages input_block(uint32_t rank) const;   // rank's block of a whole-vector input
    Pages output_block(uint32_t rank) const;  // rank's block of a whole-vector output
    Pages work_block(uint32_t rank) const;
    // A block-sized buffer (all-gather's and gather's input, reduce-scatter's
    // and scatter's output): rank's own block at the start of it.
    Pages own_input(uint32_t rank) const {
        return input_in_output ? output_block(rank) : Pages::run(input, block_elems[rank] * element);
    }
    Pages own_output(uint32_t rank) const {
        return output_in_input ? input_block(rank) : Pages::run(output, block_elems[rank] * element);
    }
    // Where the host writes rank's input and reads its output.
    Pages input_of(uint32_t rank) const;
    Pages output_of(uint32_t rank) const;
    Pages whole(uint64_t base) const { return Pages::run(base, elements * element); }
};

// dram: the chip DRAM the buffers go in. Throws weft::Error if the op does
// not fit or the request is malformed (unknown root, shape, ...).
OpLayout layout_op(const OpRequest& r, uint32_t ranks, const Pages& dram);

// Tunables of the ring all-reduce (the CTRING design, CTRING), each overridable by an
// environment variable like the CTRING design's CVARs (common/knobs.h has their ranges).
struct CtringTuning {
    uint32_t pipeline_depth = knobs::knob("WEFT_CTRING_PIPELINE_DEPTH").fallback;  // 0: by message size
    uint64_t chunk_size = knobs::knob("WEFT_CTRING_CHUNK_SIZE").fallback;          // 0: auto
    uint64_t num_chunks = knobs::knob("WEFT_CTRING_NUM_CHUNKS").fallback;          // 0: depth * ranks
    uint64_t max_bdp = knobs::knob("WEFT_CTRING_MAX_BDP").fallback;
    uint64_t min_shard_size = knobs::knob("WEFT_CTRING_MIN_SHARD_SIZE").fallback;
    // WEFT_CTRING_BIDIR_AG_MAX_SIZE: 0 off, -1 always. Always by default: here
    // the reverse direction of every cable is otherwise idle during the
    // all-gather (make bench compares both at 16 and 64 MiB, shaped and not;
    // the CTRING design's threshold guards a GPU kernel's register use).
    int64_t bidir_ag_max_size = knobs::knob("WEFT_CTRING_BIDIR_AG_MAX_SIZE").fallback;
    // WEFT_CTRING_BIDIR_RS_MAX_SIZE, the same for the reduce-scatter phase
    // (beyond the CTRING design): each shard's first half is reduced around the ring one
    // way, its second half the other way, so both directions of every cable
    // carry half the bytes; every position still ends with its whole shard.
    int64_t bidir_rs_max_size = knobs::knob("WEFT_CTRING_BIDIR_RS_MAX_SIZE").fallback;
    static CtringTuning from_env();
};

struct CtringParams {
    uint32_t pipeline_depth;
    uint64_t num_chunks, chunk_size, partition_bytes;
    bool bidir_ag, bidir_rs;
};
// The CTRING design's auto-tune tiers (per-rank message size -> pipeline depth).
uint32_t ctring_pipeline_depth(uint64_t message_bytes);
CtringParams ctring_params(uint64_t message_bytes, uint32_t ranks, uint32_t element, const CtringTuning& t);
// The CTRING design's shard indices for ring position r of n.
inline uint32_t rs_send_shard(uint32_t r, uint32_t step, uint32_t n) { return (r + n - step % n) % n; }
inline uint32_t rs_owned_shard(uint32_t r, uint32_t n) { return (r + 1) % n; }
// The reverse reduce-scatter (to position r-1): shard k starts two positions
// before its owner's forward start, so it ends at the same owner, position k-1.
inline uint32_t rs_rev_send_shard(uint32_t r, uint32_t step, uint32_t n) { return (r + step % n + 2) % n; }
inline uint32_t ag_send_shard(uint32_t r, uint32_t step, uint32_t n) {
    return (rs_owned_shard(r, n) + n - step % n) % n;
}
inline uint32_t ag_rev_send_shard(uint32_t r, uint32_t rev_step, uint32_t n) { return (r + rev_step + 1) % n; }
inline uint32_t ag_forward_steps(uint32_t n, bool bidir) { return bidir ? n / 2 : n - 1; }  // ceil((n-1)/2)
inline uint32_t ag_reverse_steps(uint32_t n, bool bidir) { return bidir ? (n - 1) / 2 : 0; }

struct PlanContext {
    const OpRequest& request;
    const OpLayout& layout;
    const Topology& topo;
    std::vector<uint32_t> ring, line;  // chip ids in overlay order
    CtringTuning ctring;
    // The hierarchical all-reduce's root: the chip at this index of every
    // system's mesh; -1: the mesh's center (WEFT_HIERARCHICAL_ROOT).
    int64_t hierarchical_root = -1;
};

}  // namespace weft::ccl
