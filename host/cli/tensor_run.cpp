#include "cli/tensor_run.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "ccl/reference.h"
#include "cli/exit_codes.h"
#include "common/error.h"
#include "driver/topology.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"
#include "transport/fabric/fabric.h"

namespace weft::cli {
namespace {

abi::TensorMemory memory_named(const std::string& flag, const std::string& name) {
    if (const std::optional<abi::TensorMemory> m = tensor::parse_memory(name)) return *m;
    throw UsageError(flag + " must be interleaved, height, width or block, not '" + name + "'");
}

// "XxY": the shard grid's columns and rows of worker cores.
tensor::CoreGrid grid_of(const std::string& text) {
    unsigned x = 0, y = 0;
    char by = 0, extra = 0;
    if (std::sscanf(text.c_str(), "%u%c%u%c", &x, &by, &y, &extra) != 3 || by != 'x' || x == 0 || y == 0 || x > 64 ||
        y > 64)
        throw UsageError("--shard-grid must be XxY, each 1 to 64 (e.g. 2x1), not '" + text + "'");
    return {uint16_t(x), uint16_t(y)};
}

std::vector<uint8_t> random_bytes(const abi::TensorSpec& t, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<uint8_t> d(tensor::host_bytes(t));
    for (uint8_t& b : d) b = uint8_t(gen());
    return d;
}

std::vector<std::vector<uint32_t>> groups_of(const std::string& axis, Cluster& cluster) {
    if (axis.empty()) {
        std::vector<uint32_t> all(cluster.size());
        for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
        return {all};
    }
    if (axis != "rows" && axis != "cols") throw UsageError("--mesh-axis must be rows or cols, not '" + axis + "'");
    try {
        return tensor::mesh_axis_groups(cluster.topology(),
                                        axis == "rows" ? tensor::MeshAxis::kRows : tensor::MeshAxis::kColumns);
    } catch (const Error& e) {
        throw UsageError(std::string("--mesh-axis: ") + e.what());
    }
}

// --out-memory, or --memory if not given.
abi::TensorMemory out_memory_of(const TensorRunArgs& t) {
    return memory_named("--out-memory", t.out_memory.empty() ? t.memory : t.out_memory);
}

// Random data (seeded by chip) written into `at` on every chip; returns it by chip.
std::vector<std::vector<uint8_t>> write_random(Cluster& cluster, const abi::TensorAt& at) {
    std::vector<std::vector<uint8_t>> data(cluster.size());
    for (uint32_t chip = 0; chip < cluster.size(); ++chip) {
        data[chip] = random_bytes(at.spec, 1 + chip);
        tensor::write_tensor(cluster.chip(chip), at, data[chip].data());
    }
    return data;
}

// The tensor --layout and --shape describe, in no memory yet.
abi::TensorSpec tensor_of(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype) {
    if (t.layout.empty())
        throw UsageError("--memory, --out-memory, --shard-grid and --mesh-axis describe a tensor: give --layout row or "
                         "tile (and --shape)");
    if (shape[0] == 0) throw UsageError("--layout: give the tensor's --shape a,b,c,d (each chip's part)");
    abi::TensorSpec spec = tensor::matrix(1, 1, dtype, t.layout == "tile" ? abi::kTilePages : abi::kRowMajorPages);
    for (uint32_t d = 0; d < abi::kTensorDims; ++d) {
        if (shape[d] > UINT32_MAX) throw UsageError("--shape: a dimension past 2^32");
        spec.shape[d] = uint32_t(shape[d]);
    }
    return spec;
}

// --shard-grid, leaving the op's kernel a worker core of its own.
tensor::CoreGrid grid_for(const TensorRunArgs& t, const BoardInfo& board, const std::string& op) {
    const auto grid = grid_of(t.shard_grid);
    if (const std::string why = tensor::kernel_core_shortfall(board, grid, op); !why.empty())
        throw UsageError("--shard-grid " + t.shard_grid + ": " + why);
    return grid;
}

}  // namespace

void check_tensor(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype) {
    tensor_of(t, shape, dtype);
}

bool tensor_asked(const TensorRunArgs& t) {
    return !t.layout.empty() || t.memory != "interleaved" || !t.out_memory.empty() || t.shard_grid != "2x1" ||
           !t.mesh_axis.empty();
}

namespace {

// A runner a group of --mesh-axis (one over every chip without it).
struct Groups {
    std::vector<std::vector<uint32_t>> chips;
    tensor::GroupRunners run;
};
Groups runners_for(const TensorRunArgs& t, Cluster& cluster, const ccl::RunnerOptions& options) {
    Groups g;
    g.chips = groups_of(t.mesh_axis, cluster);
    g.run = tensor::runners_over(cluster, g.chips, options);
    return g;
}

// Each group's flat op r: its layout and inputs (seeded by group), for the
// host reference; `write(chip, vector)` puts a chip's input in its tensor.
struct FlatData {
    std::vector<ccl::OpLayout> layouts;
    std::vector<ccl::OpData> inputs;
};
FlatData write_flat_inputs(const Groups& g, const ccl::OpRequest& r,
                           const std::function<void(uint32_t chip, const std::vector<uint8_t>& flat)>& write) {
    FlatData d;
    for (size_t i = 0; i < g.chips.size(); ++i) {
        d.layouts.push_back(g.run.runners[i]->layout(r));
        d.inputs.push_back(ccl::make_inputs(r, d.layouts.back(), uint32_t(1 + i)));
        for (size_t rank = 0; rank < g.chips[i].size(); ++rank) write(g.chips[i][rank], d.inputs.back().input[rank]);
    }
    return d;
}

// Each group's outputs at `at`, in rank order, checked against its flat
// reference; prints and returns the verdict.
int check_groups(const Groups& g, const ccl::OpRequest& r, const FlatData& flat, Cluster& cluster,
                 const abi::TensorAt& at) {
    uint64_t checked = 0;
    for (size_t i = 0; i < g.chips.size(); ++i) {
        std::vector<std::vector<uint8_t>> out;
        for (uint32_t chip : g.chips[i]) out.push_back(tensor::read_tensor(cluster.chip(chip), at));
        const ccl::CheckResult c =
            ccl::check_outputs(r, flat.layouts[i], flat.inputs[i], out, g.run.runners[i]->ring());
        if (c.wrong) {
            std::printf("  check: %llu of %llu elements WRONG%s; first: %s\n", (unsigned long long)c.wrong,
                        (unsigned long long)c.checked,
                        g.chips.size() > 1 ? (" in group " + std::to_string(i)).c_str() : "", c.first_wrong.c_str());
            return kFailed;
        }
        checked += c.checked;
    }
    std::printf("  check: %llu elements on each of %zu chips match the host reference\n",
                (unsigned long long)(checked / cluster.size()), cluster.size());
    return kOk;
}

std::string groups_text(const Groups& g) {
    return g.chips.size() == 1
               ? std::to_string(g.chips[0].size()) + " chips"
               : std::to_string(g.chips.size()) + " groups of " + std::to_string(g.chips[0].size()) + " chips at once";
}

}  // namespace

int run_tensor_all_gather(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, uint32_t dim,
                          abi::DataType dtype, const ccl::RunnerOptions& options, Cluster& cluster) {
    const auto groups = groups_of(t.mesh_axis, cluster);
    const uint32_t ranks = uint32_t(groups[0].size());
    const BoardInfo& board = cluster.board();
    const auto grid = grid_for(t, board, "all_gather");
    const abi::TensorSpec part =
        tensor::in_memory(tensor_of(t, shape, dtype), memory_named("--memory", t.memory), grid);
    const abi::TensorSpec whole = tensor::in_memory(tensor::gathered(part, dim, ranks, part), out_memory_of(t), grid);
    const auto [in, out] = tensor::place_both(board, part, whole);
    const std::vector<std::vector<uint8_t>> parts = write_random(cluster, in);
    const uint32_t core = board.cores_with_role(CoreRole::kWorker).back();
    const auto t0 = std::chrono::steady_clock::now();
    std::string how = "over the fabric";
    if (options.transport == "edm") {  // the fabric's kernel cannot: through the flat all-gather
        const Groups g = runners_for(t, cluster, options);
        tensor::all_gather(cluster, g.run.runners, in, out, dim, core, std::chrono::milliseconds(60000));
        how = "through the flat all-gather over the EDM";
    } else {
        auto fabric = transport::Fabric::start(cluster,
                                               transport::cluster_fabric(board, cluster.topology(), FabricSpec{}),
                                               std::chrono::milliseconds(10000));
        tensor::all_gather_groups(cluster, *fabric, groups, in, out, dim, core, std::chrono::milliseconds(60000));
        fabric->stop();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("all_gather of %s along dimension %u into %s, %s: %zu group(s) of %u chips at once\n",
                tensor::describe(part).c_str(), dim, tensor::describe(whole).c_str(), how.c_str(), groups.size(),
                ranks);
    const uint64_t bytes = tensor::host_bytes(whole);
    std::printf("  time %.3f ms, algbw %.3f GB/s per group\n", seconds * 1e3, seconds > 0 ? bytes / seconds / 1e9 : 0);
    uint32_t chips = 0;
    for (const std::vector<uint32_t>& g : groups) {
        std::vector<std::vector<uint8_t>> mine;
        for (uint32_t chip : g) mine.push_back(parts[chip]);
        const std::vector<uint8_t> want = tensor::concatenate(part, dim, mine);
        for (uint32_t chip : g) {
            if (tensor::read_tensor(cluster.chip(chip), out) != want) {
                std::printf("  check: chip %u's gathered tensor is WRONG\n", chip);
                return kFailed;
            }
            ++chips;
        }
    }
    std::printf("  check: %llu elements on each of %u chips match the parts concatenated\n",
                (unsigned long long)tensor::elements(whole), chips);
    return kOk;
}

int run_tensor_send_recv(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype,
                         const ccl::RunnerOptions& options, Cluster& cluster) {
    if (!t.mesh_axis.empty()) throw UsageError("--mesh-axis: sendrecv shifts round all the cluster's chips; leave it out");
    const BoardInfo& board = cluster.board();
    const auto grid = grid_for(t, board, "sendrecv");
    const abi::TensorSpec spec = tensor_of(t, shape, dtype);
    const abi::TensorSpec sent = tensor::in_memory(spec, memory_named("--memory", t.memory), grid);
    const abi::TensorSpec received = tensor::in_memory(spec, out_memory_of(t), grid);
    const auto [in, out] = tensor::place_both(board, sent, received);
    const bool flat = options.transport == "edm";  // the fabric's kernel cannot: through the flat sendrecv
    std::unique_ptr<ccl::CollectiveRunner> runner;
    if (flat) runner = std::make_unique<ccl::CollectiveRunner>(cluster, options);
    // Round the ring the flat sendrecv uses: each chip to the next.
    const std::vector<uint32_t> ring = flat ? runner->ring() : Topology(cluster.topology()).ring_order();
    std::vector<std::pair<uint32_t, uint32_t>> shift;
    for (size_t i = 0; i < ring.size(); ++i) shift.push_back({ring[i], ring[(i + 1) % ring.size()]});
    const std::vector<std::vector<uint8_t>> data = write_random(cluster, in);
    const uint32_t core = board.cores_with_role(CoreRole::kWorker).back();
    const auto t0 = std::chrono::steady_clock::now();
    if (flat) {
        tensor::send_recv(cluster, *runner, in, out, core, std::chrono::milliseconds(60000));
    } else {
        auto fabric = transport::Fabric::start(cluster,
                                               transport::cluster_fabric(board, cluster.topology(), FabricSpec{}),
                                               std::chrono::milliseconds(10000));
        tensor::send_recv(cluster, *fabric, shift, in, out, core, std::chrono::milliseconds(60000));
        fabric->stop();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("sendrecv of %s into %s, %s: each of %zu chips to the next round the ring\n",
                tensor::describe(sent).c_str(), tensor::describe(received).c_str(),
                flat ? "through the flat sendrecv over the EDM" : "over the fabric", shift.size());
    const uint64_t bytes = tensor::host_bytes(sent);
    std::printf("  time %.3f ms, algbw %.3f GB/s per chip\n", seconds * 1e3, seconds > 0 ? bytes / seconds / 1e9 : 0);
    for (const auto& [from, to] : shift)
        if (tensor::read_tensor(cluster.chip(to), out) != data[from]) {
            std::printf("  check: chip %u's tensor, received by chip %u, is WRONG\n", from, to);
            return kFailed;
        }
    std::printf("  check: %llu elements on each of %zu chips match what the previous chip sent\n",
                (unsigned long long)tensor::elements(sent), shift.size());
    return kOk;
}

int run_tensor_all_reduce(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, abi::DataType dtype,
                          abi::MathOp redop, const std::string& algo, const ccl::RunnerOptions& options,
                          Cluster& cluster) {
    if (!t.out_memory.empty())
        throw UsageError("--out-memory: an all_reduce leaves the tensor where it is; leave it out");
    const BoardInfo& board = cluster.board();
    const auto grid = grid_for(t, board, "all_reduce");
    const Groups g = runners_for(t, cluster, options);
    const abi::TensorSpec spec =
        tensor::in_memory(tensor_of(t, shape, dtype), memory_named("--memory", t.memory), grid);
    const abi::TensorAt at = tensor::placed(board, spec, 0);
    const ccl::OpRequest r = tensor::flat_op(ccl::Collective::kAllReduce, dtype, algo, tensor::host_bytes(spec), redop);
    const FlatData flat = write_flat_inputs(g, r, [&](uint32_t chip, const std::vector<uint8_t>& v) {
        tensor::write_tensor(cluster.chip(chip), at, v.data());
    });
    const uint32_t core = board.cores_with_role(CoreRole::kWorker).back();
    const auto t0 = std::chrono::steady_clock::now();
    tensor::all_reduce(cluster, g.run.runners, at, redop, core, std::chrono::milliseconds(60000), algo);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("all_reduce (%s) of %s in place on %s, through the flat all-reduce over %s\n",
                ccl::redop_name(redop).c_str(), tensor::describe(spec).c_str(), groups_text(g).c_str(),
                g.run.runners[0]->transport_name().c_str());
    std::printf("  time %.3f ms, algbw %.3f GB/s\n", seconds * 1e3, seconds > 0 ? r.bytes / seconds / 1e9 : 0);
    return check_groups(g, r, flat, cluster, at);
}

int run_tensor_reduce_scatter(const TensorRunArgs& t, const std::array<uint64_t, 4>& shape, uint32_t dim,
                              abi::DataType dtype, abi::MathOp redop, const std::string& algo,
                              const ccl::RunnerOptions& options, Cluster& cluster) {
    const BoardInfo& board = cluster.board();
    const auto grid = grid_for(t, board, "reduce_scatter");
    const Groups g = runners_for(t, cluster, options);
    const auto n = static_cast<uint32_t>(g.chips[0].size());
    const abi::TensorSpec rows = tensor_of(t, shape, dtype);
    if (rows.shape[dim] % n)
        throw UsageError("--shape: dimension " + std::to_string(dim) + " (" + std::to_string(rows.shape[dim]) +
                         ") must divide among the " + std::to_string(n) + " chips of " +
                         (g.chips.size() > 1 ? "each group" : "the cluster"));
    const abi::TensorSpec whole = tensor::in_memory(rows, memory_named("--memory", t.memory), grid);
    abi::TensorSpec part_rows = rows;
    part_rows.shape[dim] /= n;
    const abi::TensorSpec part = tensor::in_memory(part_rows, out_memory_of(t), grid);
    // Named, not bound: a lambda below takes `in` (clang refuses a captured binding).
    const tensor::PlacedPair placed = tensor::place_both(board, whole, part);
    const abi::TensorAt &in = placed.in, &out = placed.out;
    // The flat op's inputs and reference: a chip's vector is its parts one
    // after another, so the flat op's block k is part k of the tensor.
    const ccl::OpRequest r =
        tensor::flat_op(ccl::Collective::kReduceScatter, dtype, algo, tensor::host_bytes(whole), redop);
    const uint64_t part_bytes = tensor::host_bytes(part);
    const FlatData flat = write_flat_inputs(g, r, [&](uint32_t chip, const std::vector<uint8_t>& v) {
        std::vector<std::vector<uint8_t>> parts;
        for (uint32_t k = 0; k < n; ++k)
            parts.emplace_back(v.begin() + k * part_bytes, v.begin() + (k + 1) * part_bytes);
        tensor::write_tensor(cluster.chip(chip), in, tensor::concatenate(part, dim, parts).data());
    });
    const uint32_t core = board.cores_with_role(CoreRole::kWorker).back();
    const auto t0 = std::chrono::steady_clock::now();
    tensor::reduce_scatter(cluster, g.run.runners, in, out, dim, redop, core, std::chrono::milliseconds(60000), algo);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("reduce_scatter (%s) of %s along dimension %u into %s on %s, through the flat reduce-scatter over "
                "%s\n",
                ccl::redop_name(redop).c_str(), tensor::describe(whole).c_str(), dim, tensor::describe(part).c_str(),
                groups_text(g).c_str(), g.run.runners[0]->transport_name().c_str());
    std::printf("  time %.3f ms, algbw %.3f GB/s\n", seconds * 1e3, seconds > 0 ? r.bytes / seconds / 1e9 : 0);
    return check_groups(g, r, flat, cluster, out);
}

}  // namespace weft::cli
