#include "ccl/collective.h"

#include <algorithm>

#include "common/error.h"
#include "common/hex.h"
#include "common/knobs.h"

namespace weft::ccl {
namespace {

struct OpInfo {
    Collective op;
    const char* name;
    bool reduces;
};

const std::vector<OpInfo>& ops() {
    static const std::vector<OpInfo> v = {
        {Collective::kAllGather, "all_gather", false}, {Collective::kReduceScatter, "reduce_scatter", true},
        {Collective::kAllReduce, "all_reduce", true},  {Collective::kBroadcast, "broadcast", false},
        {Collective::kReduce, "reduce", true},         {Collective::kGather, "gather", false},
        {Collective::kScatter, "scatter", false},      {Collective::kSendRecv, "sendrecv", false},
    };
    return v;
}

const OpInfo& info(Collective c) {
    for (const OpInfo& o : ops())
        if (o.op == c) return o;
    throw Error("internal: unknown collective");
}

}  // namespace

const std::vector<Collective>& all_collectives() {
    static const std::vector<Collective> v = [] {
        std::vector<Collective> r;
        for (const OpInfo& o : ops()) r.push_back(o.op);
        return r;
    }();
    return v;
}

std::string collective_name(Collective c) { return info(c).name; }

Collective parse_collective(const std::string& name) {
    std::string known;
    for (const OpInfo& o : ops()) {
        if (name == o.name) return o.op;
        known += std::string(known.empty() ? "" : ", ") + o.name;
    }
    throw Error("unknown op '" + name + "' (ops: " + known + ")");
}

bool is_grid(const ClusterTopology& t) { return is_2d_grid(t.meshes()); }
bool reduces(Collective c) { return info(c).reduces; }

double bus_factor(Collective c, uint32_t n) {
    switch (c) {
        case Collective::kAllReduce: return 2.0 * (n - 1) / n;
        case Collective::kAllGather:
        case Collective::kReduceScatter:
        case Collective::kGather:
        case Collective::kScatter: return double(n - 1) / n;
        default: return 1.0;
    }
}

uint32_t dtype_size(abi::DataType t) { return t == abi::kBF16 || t == abi::kF16 ? 2 : 4; }

std::string dtype_name(abi::DataType t) {
    switch (t) {
        case abi::kF32: return "f32";
        case abi::kBF16: return "bf16";
        case abi::kF16: return "f16";
        case abi::kI32: return "i32";
    }
    return "?";
}

abi::DataType parse_dtype(const std::string& s) {
    for (abi::DataType t : {abi::kF32, abi::kBF16, abi::kF16, abi::kI32})
        if (s == dtype_name(t)) return t;
    // nccl-tests' names (-d float) for the same types.
    if (s == "float" || s == "float32") return abi::kF32;
    if (s == "bfloat16") return abi::kBF16;
    if (s == "half" || s == "float16") return abi::kF16;
    if (s == "int" || s == "int32") return abi::kI32;
    throw Error("unknown data type '" + s +
                "' (types: f32, bf16, f16, i32, or nccl-tests' float, bfloat16, half, int32)");
}

std::string redop_name(abi::MathOp op) {
    switch (op) {
        case abi::kMathSum: return "sum";
        case abi::kMathMax: return "max";
        case abi::kMathMin: return "min";
        case abi::kMathProd: return "prod";
        case abi::kMathSemInc: break;  // an engine command, not a reduction
    }
    return "?";
}

abi::MathOp parse_redop(const std::string& s) {
    for (abi::MathOp op : {abi::kMathSum, abi::kMathMax, abi::kMathMin, abi::kMathProd})
        if (s == redop_name(op)) return op;
    throw Error("unknown reduction '" + s + "' (reductions: sum, max, min, prod)");
}

Pages OpLayout::input_block(uint32_t r) const {
    return Pages::run(input + block_first[r] * element, block_elems[r] * element);
}

Pages OpLayout::work_block(uint32_t r) const {
    return Pages::run(work + block_first[r] * element, block_elems[r] * element);
}

Pages OpLayout::input_of(uint32_t r) const { return block_input ? own_input(r) : whole(input); }

Pages OpLayout::output_of(uint32_t r) const { return block_output ? own_output(r) : whole(output); }

Pages OpLayout::output_block(uint32_t r) const {
    if (inner > 0 && outer > 1) return {output + r * inner, inner, outer, uint64_t(ranks) * inner};
    return Pages::run(output + block_first[r] * element, block_elems[r] * element);
}

namespace {

// DRAM not yet given to a buffer of the op, lowest address first.
class DramGaps {
public:
    explicit DramGaps(const Pages& dram) : dram_(dram) {}
    // A caller's buffer: inside DRAM, aligned to an element, clear of the others.
    void take_user(const char* what, uint64_t addr, uint64_t bytes, uint32_t element) {
        if (addr < dram_.base || addr + bytes > dram_.base + dram_.bytes() || addr + bytes < addr)
            throw Error(std::string(what) + " buffer [" + hex(addr) + ", " + hex(addr + bytes) +
                        ") is not inside chip DRAM [" + hex(dram_.base) + ", " + hex(dram_.base + dram_.bytes()) + ")");
        if (addr % element)
            throw Error(std::string(what) + " buffer at " + hex(addr) + " is not aligned to its " +
                        std::to_string(element) + "-byte elements");
        for (const auto& [name, a, z] : taken_)
            if (addr < z && a < addr + bytes)
                throw Error(std::string(what) + " buffer [" + hex(addr) + ", " + hex(addr + bytes) + ") overlaps the " +
                            name + " buffer [" + hex(a) + ", " + hex(z) + ")" +
                            (name == "kept" ? " of a tensor the op must leave alone"
                                            : " (the same address for both runs the op in place)"));
        taken_.push_back({what, addr, addr + bytes});
    }
    // The lowest page-aligned gap of at least `bytes`, up to `most` of it taken. 0 if none.
    Pages take(const char* what, uint64_t bytes, uint64_t most = 0) {
        auto up = [](uint64_t x) { return (x + 4095) & ~uint64_t(4095); };
        std::sort(taken_.begin(), taken_.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
        uint64_t at = up(dram_.base);
        const uint64_t end = dram_.base + dram_.bytes();
        for (size_t i = 0; i <= taken_.size(); ++i) {
            const uint64_t next = i < taken_.size() ? taken_[i].begin : end;
            if (next >= at && next - at >= bytes) {
                const uint64_t size = std::max(bytes, std::min(most, next - at));
                taken_.push_back({what, at, at + up(size)});
                return Pages::run(at, size);
            }
            if (i < taken_.size()) at = std::max(at, up(taken_[i].end));
        }
        return Pages::run(0, 0);
    }

private:
    struct Taken {
        std::string name;
        uint64_t begin, end;
    };
    Pages dram_;
    std::vector<Taken> taken_;
};

// The caller's buffers where the request names them, weft's in the lowest
// gaps of DRAM around them: the input, the output, the work buffer, then
// up to 64 MiB of scratch (at least 1 MiB).
void place_buffers(const OpRequest& r, OpLayout& l, const Pages& dram) {
    DramGaps gaps(dram);
    for (const Pages& kept : r.keep) gaps.take_user("kept", kept.base, kept.bytes(), 1);
    if (r.in_place()) {
        if (r.op == Collective::kSendRecv)
            throw Error("send_recv cannot run in place: each chip receives while it sends (give send != recv)");
        if (l.outer > 1) throw Error("an all_gather along an inner dimension cannot run in place");
        l.input_in_output = l.block_input;
        l.output_in_input = l.block_output;
        const uint64_t whole = l.elements * l.element;
        gaps.take_user("send/recv", r.send, whole, l.element);
        l.input = l.output = r.send;
    } else {
        if (r.send) gaps.take_user("send", l.input = r.send, l.input_bytes, l.element);
        if (r.recv) gaps.take_user("recv", l.output = r.recv, l.output_bytes, l.element);
    }
    constexpr uint64_t kMinScratch = 1ull << 20, kMaxScratch = 64ull << 20;
    auto need = [&](const char* what, uint64_t bytes, uint64_t most = 0) {
        const Pages s = gaps.take(what, bytes, most);
        if (s.bytes() == 0 && bytes > 0)
            throw Error("op of " + std::to_string(l.elements * l.element) + " bytes does not fit chip DRAM (" +
                        std::to_string(dram.bytes() >> 20) + " MiB): no room for its " + what + " buffer of " +
                        std::to_string(bytes >> 10) + " KiB beside the others and 1 MiB of scratch");
        return s;
    };
    if (!r.send && !r.in_place()) l.input = need("input", l.input_bytes).base;
    if (!r.recv && !r.in_place()) l.output = need("output", l.output_bytes).base;
    if (l.work_bytes) l.work = need("work", l.work_bytes).base;
    l.scratch = need("scratch", kMinScratch, kMaxScratch);
}

}  // namespace

OpLayout layout_op(const OpRequest& r, uint32_t ranks, const Pages& dram) {
    OpLayout l;
    l.ranks = ranks;
    l.element = dtype_size(r.dtype);
    if (r.root >= ranks)
        throw Error("root " + std::to_string(r.root) + " is not a chip of this " + std::to_string(ranks) +
                    "-chip cluster");
    if (r.shape[0] != 0) {
        if (r.op != Collective::kAllGather) throw Error("--shape applies to all_gather only");
        if (r.dim > 3) throw Error("all_gather dimension " + std::to_string(r.dim) + " is not one of 0..3");
        uint64_t per = 1, outer = 1;
        for (uint32_t d = 0; d < 4; ++d) {
            if (r.shape[d] == 0) throw Error("a tensor shape needs four sizes of at least 1");
            per *= r.shape[d];
            if (d < r.dim) outer *= r.shape[d];
        }
        l.elements = per * ranks;
        l.outer = outer;
        l.inner = per / outer * l.element;
    } else {
        if (r.bytes == 0) throw Error("an op needs a size of at least one element");
        if (r.bytes % l.element)
            throw Error("size " + std::to_string(r.bytes) + " is not a whole number of " + dtype_name(r.dtype) +
                        " elements (" + std::to_string(l.element) + " bytes each)");
        l.elements = r.bytes / l.element;
    }
    const uint64_t base = l.elements / ranks, rem = l.elements % ranks;
    for (uint32_t k = 0, first = 0; k < ranks; ++k) {
        l.block_elems.push_back(base + (k < rem ? 1 : 0));
        l.block_first.push_back(first);
        first += static_cast<uint32_t>(l.block_elems.back());
    }
    const uint64_t whole = l.elements * l.element, block = (base + (rem ? 1 : 0)) * l.element;
    switch (r.op) {
        case Collective::kAllGather:
        case Collective::kGather: l.input_bytes = block, l.output_bytes = whole, l.block_input = true; break;
        case Collective::kReduceScatter:
            l.input_bytes = whole, l.output_bytes = block, l.work_bytes = whole, l.block_output = true;
            break;
        case Collective::kReduce: l.input_bytes = whole, l.output_bytes = whole, l.work_bytes = whole; break;
        // A partner's vector lands in work before it is reduced (recursive doubling).
        case Collective::kAllReduce: l.input_bytes = whole, l.output_bytes = whole, l.work_bytes = whole; break;
        case Collective::kScatter: l.input_bytes = whole, l.output_bytes = block, l.block_output = true; break;
        default: l.input_bytes = whole, l.output_bytes = whole; break;
    }
    place_buffers(r, l, dram);
    return l;
}

CtringTuning CtringTuning::from_env() {
    using knobs::integer, knobs::knob;  // the knobs' ranges: none below 0 but the two -1 ("always")
    CtringTuning t;
    t.pipeline_depth = static_cast<uint32_t>(integer(knob("WEFT_CTRING_PIPELINE_DEPTH")));
    t.chunk_size = static_cast<uint64_t>(integer(knob("WEFT_CTRING_CHUNK_SIZE")));
    t.num_chunks = static_cast<uint64_t>(integer(knob("WEFT_CTRING_NUM_CHUNKS")));
    t.max_bdp = static_cast<uint64_t>(integer(knob("WEFT_CTRING_MAX_BDP")));
    t.min_shard_size = static_cast<uint64_t>(integer(knob("WEFT_CTRING_MIN_SHARD_SIZE")));
    t.bidir_ag_max_size = integer(knob("WEFT_CTRING_BIDIR_AG_MAX_SIZE"));
    t.bidir_rs_max_size = integer(knob("WEFT_CTRING_BIDIR_RS_MAX_SIZE"));
    return t;
}

uint32_t ctring_pipeline_depth(uint64_t m) {
    if (m < (32u << 10)) return 1;
    if (m < (1u << 20)) return 2;
    if (m < (16u << 20)) return 4;
    if (m <= (32u << 20)) return 2;
    return 1;
}

CtringParams ctring_params(uint64_t bytes, uint32_t ranks, uint32_t element, const CtringTuning& t) {
    CtringParams p{};
    p.pipeline_depth = t.pipeline_depth ? t.pipeline_depth : ctring_pipeline_depth(bytes);
    p.num_chunks = t.num_chunks ? t.num_chunks : uint64_t(p.pipeline_depth) * ranks;
    p.chunk_size = t.chunk_size ? t.chunk_size : std::clamp<uint64_t>(bytes / p.num_chunks, 1, 16ull << 20);
    // The max in-flight bound: chunk_size * num_chunks <= max BDP.
    if (p.chunk_size * p.num_chunks > t.max_bdp) p.chunk_size = std::max<uint64_t>(1, t.max_bdp / p.num_chunks);
    p.chunk_size = std::max<uint64_t>(element, p.chunk_size / element * element);
    p.partition_bytes = p.chunk_size * p.num_chunks;
    const auto up_to = [bytes](int64_t max_size) {
        return max_size < 0 || (max_size > 0 && bytes <= uint64_t(max_size));
    };
    p.bidir_ag = up_to(t.bidir_ag_max_size);
    p.bidir_rs = up_to(t.bidir_rs_max_size);
    return p;
}

}  // namespace weft::ccl
