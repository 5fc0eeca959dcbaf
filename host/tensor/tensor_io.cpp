#include "tensor/tensor_io.h"

#include <cstring>
#include <string>

#include "common/error.h"
#include "driver/kernel_args.h"
#include "tensor/tensor_layout.h"

namespace weft::tensor {
namespace {

uint64_t unit_address(const abi::TensorAt& at, uint32_t unit) { return at.base + unit * at.unit_stride; }

uint64_t up_to(uint64_t v, uint64_t grain) { return (v + grain - 1) / grain * grain; }

}  // namespace

abi::TensorAt interleaved_at(const BoardInfo& board, abi::TensorSpec t, uint64_t offset) {
    t.memory = abi::kInterleaved;
    t.banks = board.dram_banks;
    check_spec(t);
    const Region bank = board.dram_bank(0);
    if (offset > bank.size || abi::tensor_unit_bytes(t) > bank.size - offset)
        throw Error(describe(t) + " does not fit board " + board.name + "'s DRAM: interleaved over its " +
                    std::to_string(board.dram_banks) + " banks it takes " + std::to_string(abi::tensor_unit_bytes(t)) +
                    " bytes of each, from byte " + std::to_string(offset) + " of a bank of " +
                    std::to_string(bank.size));
    return {t, bank.base + offset, bank.size};
}

abi::TensorAt sharded_at(const BoardInfo& board, const abi::TensorSpec& t, uint64_t offset) {
    check_spec(t);
    if (!abi::tensor_sharded(t)) throw Error(describe(t) + ": not sharded");
    const std::vector<uint32_t> workers = board.cores_with_role(CoreRole::kWorker);
    const uint32_t units = abi::tensor_units(t);
    if (uint64_t(t.grid_x) * t.grid_y > workers.size())
        throw Error(describe(t) + ": a " + std::to_string(t.grid_x) + " x " + std::to_string(t.grid_y) +
                    " core grid, but board " + board.name + " has " + std::to_string(workers.size()) +
                    " worker cores");
    const uint64_t base = board.l1_free(workers[0]).base + offset;
    const uint64_t stride = workers.size() > 1 ? board.cores[workers[1]].l1.base - board.cores[workers[0]].l1.base : 0;
    for (uint32_t k = 0; k < units; ++k) {
        const Region free = board.l1_free(workers[k]);
        const uint64_t at = base + k * stride;
        if (board.cores[workers[k]].l1.base != board.cores[workers[0]].l1.base + k * stride)
            throw Error("board " + board.name + "'s worker L1s are not evenly spaced");
        if (!free.contains(at, abi::tensor_unit_bytes(t)))
            throw Error(describe(t) + ": a shard of " + std::to_string(abi::tensor_unit_bytes(t)) +
                        " bytes at offset " + std::to_string(offset) + " overruns worker core " +
                        std::to_string(workers[k]) + "'s free L1 of " + std::to_string(free.size) + " bytes");
    }
    return {t, base, stride};
}

std::optional<abi::TensorMemory> parse_memory(const std::string& name) {
    if (name == "interleaved") return abi::kInterleaved;
    if (name == "height") return abi::kHeightSharded;
    if (name == "width") return abi::kWidthSharded;
    if (name == "block") return abi::kBlockSharded;
    return std::nullopt;
}

abi::TensorSpec in_memory(abi::TensorSpec t, abi::TensorMemory memory, CoreGrid grid) {
    t.memory = memory;
    t.grid_x = grid.first, t.grid_y = grid.second;
    const uint64_t cores = uint64_t(grid.first) * grid.second;
    const uint64_t down = memory == abi::kBlockSharded ? grid.second : cores;
    const uint64_t across = memory == abi::kBlockSharded ? grid.first : cores;
    t.shard_rows = uint32_t(up_to((abi::tensor_rows(t) + down - 1) / down, abi::page_rows(t)));
    const uint32_t grain = t.layout == abi::kTilePages ? abi::kTileSide : 1;
    t.shard_cols = uint32_t(up_to((abi::tensor_cols(t) + across - 1) / across, grain));
    return t;
}

std::string kernel_core_shortfall(const BoardInfo& board, CoreGrid grid, const std::string& op) {
    const size_t workers = board.cores_with_role(CoreRole::kWorker).size();
    if (size_t(grid.first) * grid.second < workers) return "";
    return "the " + op + "'s kernel needs a worker core of its own, so at most " + std::to_string(workers - 1) +
           " of board " + board.name + "'s " + std::to_string(workers) + " worker cores hold shards";
}

abi::TensorAt placed(const BoardInfo& board, const abi::TensorSpec& t, uint64_t offset) {
    return abi::tensor_sharded(t) ? sharded_at(board, t, offset) : interleaved_at(board, t, offset);
}

PlacedPair place_both(const BoardInfo& board, const abi::TensorSpec& in, const abi::TensorSpec& out) {
    const uint64_t after = abi::tensor_sharded(in) == abi::tensor_sharded(out) ? up_to(abi::tensor_unit_bytes(in), 4096)
                                                                               : 0;
    return {placed(board, in, 0), placed(board, out, after)};
}

std::vector<abi::Pages> dram_ranges(const abi::TensorAt& at) {
    std::vector<abi::Pages> ranges;
    if (abi::tensor_sharded(at.spec)) return ranges;
    for (uint32_t u = 0; u < abi::tensor_units(at.spec); ++u)
        ranges.push_back(abi::Pages::run(unit_address(at, u), abi::tensor_unit_bytes(at.spec)));
    return ranges;
}

std::vector<abi::Pages> dram_ranges(const std::vector<abi::TensorAt>& tensors) {
    std::vector<abi::Pages> ranges;
    for (const abi::TensorAt& at : tensors)
        for (const abi::Pages& range : dram_ranges(at)) ranges.push_back(range);
    return ranges;
}

void write_tensor(Chip& chip, const abi::TensorAt& at, const void* data) {
    const UnitImages units = place(at.spec, data);
    for (uint32_t u = 0; u < units.size(); ++u) chip.write(unit_address(at, u), units[u].data(), units[u].size());
}

std::vector<uint8_t> read_tensor(Chip& chip, const abi::TensorAt& at) {
    UnitImages units(abi::tensor_units(at.spec), std::vector<uint8_t>(abi::tensor_unit_bytes(at.spec)));
    for (uint32_t u = 0; u < units.size(); ++u) chip.read(unit_address(at, u), units[u].data(), units[u].size());
    return gather(at.spec, units);
}

void check_reshard(const abi::TensorAt& from, const abi::TensorAt& to) {
    const abi::TensorSpec &a = from.spec, &b = to.spec;
    check_spec(a);
    check_spec(b);
    const std::string both = describe(a) + " to " + describe(b);
    if (std::memcmp(a.shape, b.shape, sizeof a.shape) != 0 || a.dtype != b.dtype || a.layout != b.layout)
        throw Error(both + ": not the same tensor (shape, dtype and page layout must agree)");
    if (abi::page_cols(a) != abi::page_cols(b) || abi::tensor_pages(a) != abi::tensor_pages(b))
        throw Error(both + ": their pages differ (rows of " + std::to_string(abi::page_cols(a)) + " and " +
                    std::to_string(abi::page_cols(b)) + " elements), so no page maps to one page");
}

Launch reshard_launch(const BoardInfo& board, uint32_t chip, uint32_t core, const abi::TensorAt& from,
                      const abi::TensorAt& to) {
    check_reshard(from, to);
    return {chip, core, &kernel_named(board, "tensor_reshard"), KernelArgWords::of(abi::ReshardArgs{from, to})};
}

}  // namespace weft::tensor
