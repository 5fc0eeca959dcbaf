// Tensors on real QEMU chips (pair, pair-rv32, line4, ring8, mesh3x3): host
// data written into a layout, moved to another memory by the tensor_reshard
// kernel (the page accessor of include/weft/abi/tensor.h, on the chip's own
// cores), gathered and sent to other chips over the fabric, all-reduced
// through the flat all-reduce, and read back as the host array it was (or
// the reduction), every element checked.
#include <functional>
#include <memory>
#include <utility>

#include "system_test.h"
#include "tensor/mesh_tensor.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_io.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"
#include "transport/fabric/fabric.h"

using namespace weft;
using namespace weft::test;
using std::chrono::milliseconds;

namespace {

std::unique_ptr<Cluster> g_cluster;
std::string g_name = "pair";  // argv[1]: pair, pair-rv32

int setup(void**) { return start_for_group(g_name, &g_cluster); }
int teardown(void**) {
    g_cluster.reset();
    return 0;
}

std::vector<uint8_t> some_data(const abi::TensorSpec& t, uint32_t seed) {
    std::vector<uint8_t> d(tensor::host_bytes(t));
    for (size_t i = 0; i < d.size(); ++i) d[i] = uint8_t((i * 131 + seed * 7 + (i >> 8)) ^ (i >> 13));
    return d;
}

// Moves `from` to `to` on chip 0 with the kernel; `to` must then read back as `data`.
void reshard(const abi::TensorAt& from, const abi::TensorAt& to, const std::vector<uint8_t>& data) {
    Cluster& c = *g_cluster;
    const Launch l = tensor::reshard_launch(c.board(), 0, c.board().worker_core(0), from, to);
    const auto r = c.run({l}, milliseconds(20000));
    assert_int_equal(r[0].return_code, 0);
    if (tensor::read_tensor(c.chip(0), to) != data)
        fail_msg("%s -> %s: the tensor read back differs", tensor::describe(from.spec).c_str(),
                 tensor::describe(to.spec).c_str());
}

// Tiles of a 2 x 50 x 70 tensor (padded to 2 x 64 x 96: 12 tiles) from the
// DRAM banks into 2 x 2 block shards in the workers' L1, and back into the
// banks elsewhere.
void test_tiles_move_between_dram_banks_and_block_shards(void**) {
    Cluster& c = *g_cluster;
    abi::TensorSpec t = tensor::matrix(50, 70, abi::kF32, abi::kTilePages);
    t.shape[1] = 2;
    const abi::TensorAt banks = tensor::interleaved_at(c.board(), t, 0);
    assert_int_equal(banks.spec.banks, c.board().dram_banks);
    abi::TensorSpec blocks = t;
    blocks.memory = abi::kBlockSharded, blocks.grid_x = 2, blocks.grid_y = 2, blocks.shard_rows = 64,
    blocks.shard_cols = 64;
    const abi::TensorAt shards = tensor::sharded_at(c.board(), blocks, 0);
    const abi::TensorAt back = tensor::interleaved_at(c.board(), t, 1 << 20);
    const std::vector<uint8_t> data = some_data(t, 1);
    tensor::write_tensor(c.chip(0), banks, data.data());
    assert_true(tensor::read_tensor(c.chip(0), banks) == data);
    reshard(banks, shards, data);
    reshard(shards, back, data);
}

// Row-major bf16 rows (37 of 40 elements) between the banks and height
// shards of 10 rows on four cores, the last shard partly padding.
void test_rows_move_between_dram_banks_and_height_shards(void**) {
    Cluster& c = *g_cluster;
    const abi::TensorSpec t = tensor::matrix(37, 40, abi::kBF16, abi::kRowMajorPages);
    abi::TensorSpec rows = t;
    rows.memory = abi::kHeightSharded, rows.grid_x = 4, rows.grid_y = 1, rows.shard_rows = 10;
    const abi::TensorAt banks = tensor::interleaved_at(c.board(), t, 2 << 20);
    const abi::TensorAt shards = tensor::sharded_at(c.board(), rows, 64 * 1024);
    const std::vector<uint8_t> data = some_data(t, 2);
    tensor::write_tensor(c.chip(0), shards, data.data());
    reshard(shards, banks, data);
}

// Each chip's own data for `at`'s tensor (seeded from `seed` and the chip),
// written there; by chip.
std::vector<std::vector<uint8_t>> write_parts(const abi::TensorAt& at, uint32_t seed) {
    std::vector<std::vector<uint8_t>> parts;
    for (uint32_t chip = 0; chip < g_cluster->size(); ++chip) {
        parts.push_back(some_data(at.spec, seed + chip));
        tensor::write_tensor(g_cluster->chip(chip), at, parts.back().data());
    }
    return parts;
}

// What the all-gather tests gather on `n` chips, each part from the DRAM
// banks: tiles along the width into block shards, bf16 rows along the
// height into height shards.
struct GatherCase {
    abi::TensorSpec part, memory;
    uint32_t dim;
};
std::vector<GatherCase> gather_cases(uint32_t n) {
    abi::TensorSpec tiles_out{}, rows_out{};
    tiles_out.memory = abi::kBlockSharded, tiles_out.grid_x = 2, tiles_out.grid_y = 1, tiles_out.shard_rows = 64;
    tiles_out.shard_cols = 32 * ((n + 1) / 2);  // two blocks across, whole tiles
    rows_out.memory = abi::kHeightSharded, rows_out.grid_x = 2, rows_out.grid_y = 1, rows_out.shard_rows = 3 * n;
    return {{tensor::matrix(64, 32, abi::kF32, abi::kTilePages), tiles_out, 3},
            {tensor::matrix(6, 24, abi::kBF16, abi::kRowMajorPages), rows_out, 2}};
}

// All-gather over the fabric on every chip of the cluster: each chip's part,
// in DRAM banks, gathered into another memory (block shards of tiles along
// the width; height shards of bf16 rows along the height) on every chip,
// every element checked on every chip against the parts concatenated.
void test_all_gather_reshards_in_flight(void**) {
    Cluster& c = *g_cluster;
    const uint32_t n = c.size();
    std::vector<uint32_t> chips(n);
    for (uint32_t i = 0; i < n; ++i) chips[i] = i;
    auto fabric = transport::Fabric::start(c, transport::cluster_fabric(c.board(), c.topology(), FabricSpec{}),
                                           milliseconds(10000));
    // Round the ring on ring8, along the line on line4; on mesh3x3 in chip
    // order (steps of one cable, three between rows, four back) still round
    // the ring; two chips straight to each other.
    assert_int_equal(tensor::gather_algo(fabric->builder(), chips),
                     g_name == "ring8" || g_name == "mesh3x3" ? abi::kGatherRing
                     : g_name == "line4"                      ? abi::kGatherLine
                                                              : abi::kGatherDirect);
    const std::vector<uint32_t> workers = c.board().cores_with_role(CoreRole::kWorker);
    const uint32_t core = workers.back();  // holds no shard: the grids below use the first two workers
    for (const GatherCase& k : gather_cases(n)) {
        const abi::TensorAt in = tensor::interleaved_at(c.board(), k.part, 4 << 20);
        const abi::TensorAt out = tensor::sharded_at(c.board(), tensor::gathered(k.part, k.dim, n, k.memory), 0);
        const std::vector<std::vector<uint8_t>> parts = write_parts(in, 10);
        tensor::all_gather(c, *fabric, chips, in, out, k.dim, core, milliseconds(30000));
        const std::vector<uint8_t> want = tensor::concatenate(k.part, k.dim, parts);
        for (uint32_t chip = 0; chip < n; ++chip)
            if (tensor::read_tensor(c.chip(chip), out) != want)
                fail_msg("chip %u: %s gathered along %u into %s differs", chip, tensor::describe(k.part).c_str(),
                         k.dim, tensor::describe(out.spec).c_str());
    }
    fabric->stop();
}

// Every row of the CCL document's op table over the fabric's kernels, on
// ring8 and line4: in both page layouts and every memory, each chip's part gathered along the
// height into the same memory, then each chip's part sent to the next chip,
// every element checked.
void test_every_layout_gathers_and_shifts(void**) {
    if (g_name != "ring8" && g_name != "line4") skip();  // the op table's clusters; the others run a sample
    Cluster& c = *g_cluster;
    const uint32_t n = c.size(), core = c.board().cores_with_role(CoreRole::kWorker).back();
    std::vector<uint32_t> chips(n);
    std::vector<std::pair<uint32_t, uint32_t>> shift;
    for (uint32_t i = 0; i < n; ++i) chips[i] = i, shift.push_back({i, (i + 1) % n});
    auto fabric = transport::Fabric::start(c, transport::cluster_fabric(c.board(), c.topology(), FabricSpec{}),
                                           milliseconds(10000));
    for (abi::TensorLayout pages : {abi::kTilePages, abi::kRowMajorPages})
        for (abi::TensorMemory memory :
             {abi::kInterleaved, abi::kHeightSharded, abi::kWidthSharded, abi::kBlockSharded}) {
            const abi::TensorSpec part = tensor::in_memory(tensor::matrix(32, 64, abi::kF32, pages), memory, {2, 1});
            const abi::TensorSpec whole = tensor::in_memory(tensor::gathered(part, 2, n, part), memory, {2, 1});
            const auto [in, out] = tensor::place_both(c.board(), part, whole);
            const std::vector<std::vector<uint8_t>> parts = write_parts(in, 80);
            tensor::all_gather(c, *fabric, chips, in, out, 2, core, milliseconds(30000));
            const std::vector<uint8_t> want = tensor::concatenate(part, 2, parts);
            for (uint32_t chip = 0; chip < n; ++chip)
                if (tensor::read_tensor(c.chip(chip), out) != want)
                    fail_msg("chip %u: the all-gather of %s differs", chip, tensor::describe(part).c_str());
            const auto [sent, received] = tensor::place_both(c.board(), part, part);
            for (uint32_t chip = 0; chip < n; ++chip) tensor::write_tensor(c.chip(chip), sent, parts[chip].data());
            tensor::send_recv(c, *fabric, shift, sent, received, core, milliseconds(30000));
            for (uint32_t chip = 0; chip < n; ++chip)
                if (tensor::read_tensor(c.chip((chip + 1) % n), received) != parts[chip])
                    fail_msg("chip %u did not receive chip %u's %s", (chip + 1) % n, chip,
                             tensor::describe(part).c_str());
        }
    fabric->stop();
}

// The same gathers through the flat all-gather, over the EDM and over what
// auto picks (the fabric's kernel is not used): each chip's part moved into
// its run, the runs gathered, joined into the whole's memory.
void test_all_gather_over_any_transport_through_the_flat_one(void**) {
    Cluster& c = *g_cluster;
    const uint32_t n = c.size(), core = c.board().cores_with_role(CoreRole::kWorker).back();
    const std::vector<GatherCase> cases = gather_cases(n);
    const char* transports[] = {"edm", "auto"};  // one a case
    for (size_t i = 0; i < cases.size(); ++i) {
        const GatherCase& k = cases[i];
        const abi::TensorAt in = tensor::interleaved_at(c.board(), k.part, 4 << 20);
        const abi::TensorAt out = tensor::sharded_at(c.board(), tensor::gathered(k.part, k.dim, n, k.memory), 0);
        const std::vector<std::vector<uint8_t>> parts = write_parts(in, 40);
        ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
        o.transport = transports[i];
        ccl::CollectiveRunner runner(c, o);
        tensor::all_gather(c, {&runner}, in, out, k.dim, core, milliseconds(60000));
        const std::vector<uint8_t> want = tensor::concatenate(k.part, k.dim, parts);
        for (uint32_t chip = 0; chip < n; ++chip)
            if (tensor::read_tensor(c.chip(chip), out) != want)
                fail_msg("chip %u: %s gathered along %u over %s differs", chip, tensor::describe(k.part).c_str(), k.dim,
                         transports[i]);
    }
}

// Send/recv through the flat one, over the EDM: every chip's tiles from the
// banks into the next chip's width shards round the runner's ring, bf16
// rows from height shards into the banks; every element checked.
void test_send_recv_over_the_edm_through_the_flat_one(void**) {
    Cluster& c = *g_cluster;
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = "edm";
    ccl::CollectiveRunner runner(c, o);
    const std::vector<uint32_t> ring = runner.ring();
    struct Case {
        abi::TensorSpec t;
        abi::TensorMemory from, to;
    };
    for (const Case& k :
         {Case{tensor::matrix(64, 64, abi::kF32, abi::kTilePages), abi::kInterleaved, abi::kWidthSharded},
          Case{tensor::matrix(8, 40, abi::kBF16, abi::kRowMajorPages), abi::kHeightSharded, abi::kInterleaved}}) {
        const auto [in, out] =
            tensor::place_both(c.board(), tensor::in_memory(k.t, k.from, {2, 1}), tensor::in_memory(k.t, k.to, {2, 1}));
        const std::vector<std::vector<uint8_t>> sent = write_parts(in, 60);
        tensor::send_recv(c, runner, in, out, core, milliseconds(60000));
        for (size_t i = 0; i < ring.size(); ++i) {
            const uint32_t from = ring[i], to = ring[(i + 1) % ring.size()];
            if (tensor::read_tensor(c.chip(to), out) != sent[from])
                fail_msg("chip %u did not receive chip %u's %s", to, from, tensor::describe(in.spec).c_str());
        }
    }
}

// Send/recv over the fabric from chip 0 to the chip farthest from it: tiles
// from the DRAM banks into block shards there, bf16 rows from height shards
// into the banks; then every chip to the next at once; every element
// checked. Rows that would have to split across the received tensor's pages
// are refused by name.
void test_send_recv_reshards_in_flight(void**) {
    Cluster& c = *g_cluster;
    auto fabric = transport::Fabric::start(c, transport::cluster_fabric(c.board(), c.topology(), FabricSpec{}),
                                           milliseconds(10000));
    uint32_t far = 1;
    for (uint32_t chip = 2; chip < c.size(); ++chip)
        if (fabric->builder().route(0, chip).hops > fabric->builder().route(0, far).hops) far = chip;
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    abi::TensorSpec tiles = tensor::matrix(64, 96, abi::kF32, abi::kTilePages), blocks = tiles;
    blocks.memory = abi::kBlockSharded, blocks.grid_x = 3, blocks.grid_y = 1, blocks.shard_rows = 64,
    blocks.shard_cols = 32;  // three workers: the last runs the kernels
    const abi::TensorSpec rows = tensor::matrix(21, 40, abi::kBF16, abi::kRowMajorPages);
    abi::TensorSpec height = rows;
    height.memory = abi::kHeightSharded, height.grid_x = 3, height.grid_y = 1, height.shard_rows = 8;
    struct Case {
        abi::TensorAt from, to;
    };
    for (const Case& k : {Case{tensor::interleaved_at(c.board(), tiles, 4 << 20), tensor::sharded_at(c.board(), blocks, 0)},
                          Case{tensor::sharded_at(c.board(), height, 32 * 1024),
                               tensor::interleaved_at(c.board(), rows, 6 << 20)}}) {
        const std::vector<uint8_t> data = some_data(k.from.spec, 40 + far);
        tensor::write_tensor(c.chip(0), k.from, data.data());
        tensor::send_recv(c, *fabric, 0, far, k.from, k.to, core, milliseconds(30000));
        if (tensor::read_tensor(c.chip(far), k.to) != data)
            fail_msg("chip 0 -> %u: %s received as %s differs", far, tensor::describe(k.from.spec).c_str(),
                     tensor::describe(k.to.spec).c_str());
    }
    // A shift: every chip sends its tiles to the next and receives the previous one's, at once.
    const abi::TensorAt in = tensor::interleaved_at(c.board(), tiles, 4 << 20);
    const abi::TensorAt out = tensor::sharded_at(c.board(), blocks, 0);
    std::vector<std::pair<uint32_t, uint32_t>> shift;
    for (uint32_t chip = 0; chip < c.size(); ++chip) {
        shift.push_back({chip, (chip + 1) % c.size()});
        tensor::write_tensor(c.chip(chip), in, some_data(tiles, 50 + chip).data());
    }
    tensor::send_recv(c, *fabric, shift, in, out, core, milliseconds(30000));
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        if (tensor::read_tensor(c.chip((chip + 1) % c.size()), out) != some_data(tiles, 50 + chip))
            fail_msg("the shift: chip %u's tensor, received by chip %u, differs", chip, (chip + 1) % c.size());
    abi::TensorSpec narrow = rows;
    narrow.memory = abi::kWidthSharded, narrow.grid_x = 2, narrow.grid_y = 1, narrow.shard_cols = 20;
    try {
        tensor::send_recv(c, *fabric, 0, far, tensor::interleaved_at(c.board(), rows, 4 << 20),
                          tensor::sharded_at(c.board(), narrow, 0), core, milliseconds(30000));
        fail_msg("rows of 40 were sent into pages of 20");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not fit inside one page of the received one"));
    }
    abi::TensorSpec taller = tiles;
    taller.shape[2] = 96;
    const std::pair<std::string, std::function<void()>> refused[] = {
        {"the received tensor must have the sent one's shape",
         [&] { tensor::send_recv(c, *fabric, 0, far, in, tensor::interleaved_at(c.board(), taller, 6 << 20), core,
                                 milliseconds(30000)); }},
        {"chip 0 sends twice",
         [&] { tensor::send_recv(c, *fabric, {{0, 1}, {0, far}}, in, out, core, milliseconds(30000)); }},
        {"two different chips", [&] { tensor::send_recv(c, *fabric, 0, 0, in, out, core, milliseconds(30000)); }},
    };
    for (const auto& [why, call] : refused) {
        try {
            call();
            fail_msg("send_recv ran what it should refuse: %s", why.c_str());
        } catch (const Error& e) {
            if (!strstr(e.what(), why.c_str())) fail_msg("refused, but not for '%s': %s", why.c_str(), e.what());
        }
    }
    fabric->stop();
}

// On a 2D mesh, every row gathers along the width at once, then every
// column along the height: each chip holds its own row's (column's) parts
// concatenated, no more.
void test_all_gather_along_each_mesh_axis_at_once(void**) {
    Cluster& c = *g_cluster;
    auto fabric = transport::Fabric::start(c, transport::cluster_fabric(c.board(), c.topology(), FabricSpec{}),
                                           milliseconds(10000));
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    const abi::TensorSpec part = tensor::matrix(32, 32, abi::kF32, abi::kTilePages);
    abi::TensorSpec banks{};
    banks.banks = c.board().dram_banks;
    for (tensor::MeshAxis axis : {tensor::MeshAxis::kRows, tensor::MeshAxis::kColumns}) {
        const uint32_t dim = axis == tensor::MeshAxis::kRows ? 3 : 2;
        const auto groups = tensor::mesh_axis_groups(c.topology(), axis);
        const uint32_t n = uint32_t(groups[0].size());
        const abi::TensorAt in = tensor::interleaved_at(c.board(), part, 8 << 20);
        const abi::TensorAt out = tensor::interleaved_at(c.board(), tensor::gathered(part, dim, n, banks), 9 << 20);
        std::vector<std::vector<uint8_t>> parts(c.size());
        for (uint32_t chip = 0; chip < c.size(); ++chip) {
            parts[chip] = some_data(part, 20 + chip + 31 * dim);
            tensor::write_tensor(c.chip(chip), in, parts[chip].data());
        }
        tensor::all_gather_groups(c, *fabric, groups, in, out, dim, core, milliseconds(30000));
        for (const std::vector<uint32_t>& g : groups) {
            std::vector<std::vector<uint8_t>> mine;
            for (uint32_t chip : g) mine.push_back(parts[chip]);
            const std::vector<uint8_t> want = tensor::concatenate(part, dim, mine);
            for (uint32_t chip : g)
                if (tensor::read_tensor(c.chip(chip), out) != want)
                    fail_msg("chip %u: its %s's all-gather differs", chip, dim == 3 ? "row" : "column");
        }
    }
    fabric->stop();
}

std::vector<uint8_t> bytes_of(const int32_t* v, size_t n) {
    return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v), reinterpret_cast<const uint8_t*>(v + n));
}

// Along each axis of the mesh at once, a communicator per row (then per
// column): each row's tensors reduce-scattered among its own chips (tiles
// cut by rows into width shards), then all-reduced among them in place, the
// groups' flat ops started together. Each chip's result is its own group's
// reduction, not the cluster's.
void test_reductions_along_each_mesh_axis_at_once(void**) {
    Cluster& c = *g_cluster;
    const uint32_t core = c.board().cores_with_role(CoreRole::kWorker).back();
    for (tensor::MeshAxis axis : {tensor::MeshAxis::kRows, tensor::MeshAxis::kColumns}) {
        const auto groups = tensor::mesh_axis_groups(c.topology(), axis);
        const uint32_t n = uint32_t(groups[0].size());
        const tensor::GroupRunners run = tensor::runners_over(c, groups, ccl::RunnerOptions::from_env());
        const std::vector<ccl::CollectiveRunner*>& runners = run.runners;
        const abi::TensorSpec whole =
            tensor::in_memory(tensor::matrix(32 * n, 64, abi::kI32, abi::kTilePages), abi::kInterleaved, {2, 1});
        const abi::TensorSpec part =
            tensor::in_memory(tensor::matrix(32, 64, abi::kI32, abi::kTilePages), abi::kWidthSharded, {2, 1});
        const auto [in, out] = tensor::place_both(c.board(), whole, part);
        std::vector<std::vector<int32_t>> data(c.size(), std::vector<int32_t>(tensor::elements(whole)));
        for (uint32_t chip = 0; chip < c.size(); ++chip) {
            for (size_t i = 0; i < data[chip].size(); ++i) data[chip][i] = int32_t((i * 5 + chip * 3) % 97) - 40;
            tensor::write_tensor(c.chip(chip), in, data[chip].data());
        }
        const char* along = axis == tensor::MeshAxis::kRows ? "row" : "column";
        std::vector<std::vector<int32_t>> sums;  // per group
        for (const std::vector<uint32_t>& g : groups) {
            sums.emplace_back(tensor::elements(whole), 0);
            for (uint32_t chip : g)
                for (size_t i = 0; i < sums.back().size(); ++i) sums.back()[i] += data[chip][i];
        }
        // Each result read before the next op: an op's buffers may take the
        // memory a tensor left by the last one holds (the shards' L1).
        tensor::reduce_scatter(c, runners, in, out, 2, abi::kMathSum, core, milliseconds(60000));
        for (size_t i = 0; i < groups.size(); ++i)
            for (uint32_t k = 0; k < n; ++k)
                if (tensor::read_tensor(c.chip(groups[i][k]), out) != bytes_of(&sums[i][size_t(k) * 32 * 64], 32 * 64))
                    fail_msg("chip %u: its %s's reduce-scatter part %u differs", groups[i][k], along, k);
        tensor::all_reduce(c, runners, in, abi::kMathSum, core, milliseconds(60000));
        for (size_t i = 0; i < groups.size(); ++i)
            for (uint32_t chip : groups[i])
                if (tensor::read_tensor(c.chip(chip), in) != bytes_of(sums[i].data(), sums[i].size()))
                    fail_msg("chip %u: its %s's all-reduce differs", chip, along);
    }
}

// What cannot move page for page, or does not fit the board, is refused by name.
void test_what_does_not_fit_is_refused(void**) {
    Cluster& c = *g_cluster;
    const abi::TensorSpec t = tensor::matrix(8, 64, abi::kF32, abi::kRowMajorPages);
    abi::TensorSpec cols = t;
    cols.memory = abi::kWidthSharded, cols.grid_x = 2, cols.grid_y = 1, cols.shard_cols = 32;
    try {
        tensor::reshard_launch(c.board(), 0, c.board().worker_core(0), tensor::interleaved_at(c.board(), t, 0),
                               tensor::sharded_at(c.board(), cols, 0));
        fail_msg("rows of 64 moved into shards of 32 columns");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "their pages differ (rows of 64 and 32 elements)"));
    }
    abi::TensorSpec wide = t;
    wide.memory = abi::kWidthSharded, wide.grid_x = 64, wide.grid_y = 1, wide.shard_cols = 1;
    try {
        tensor::sharded_at(c.board(), wide, 0);
        fail_msg("a 64-core grid was placed");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "worker cores"));
    }
    try {
        tensor::interleaved_at(c.board(), t, c.board().dram_bank(0).size);
        fail_msg("a tensor past the banks was placed");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not fit board"));
    }
}

// Each chip's tensor reduced into every chip's copy, in place, through the
// flat all-reduce over the EDM and over whatever auto picks: tiles and rows
// in the banks and in height, width and block shards, sum, max and min.
// Rows cut by width shards go through DRAM shard by shard, as they lie.
void test_all_reduce_in_any_layout_through_the_flat_one(void**) {
    Cluster& c = *g_cluster;
    const uint32_t n = uint32_t(c.size()), core = c.board().cores_with_role(CoreRole::kWorker).back();
    struct Case {
        abi::TensorLayout pages;
        abi::TensorMemory memory;
        abi::MathOp op;
        const char* transport;
    };
    // Every row of the CCL document's op table: both page layouts in every memory.
    for (const Case& k : {Case{abi::kTilePages, abi::kInterleaved, abi::kMathSum, "edm"},
                          Case{abi::kTilePages, abi::kWidthSharded, abi::kMathMax, "auto"},
                          Case{abi::kTilePages, abi::kHeightSharded, abi::kMathSum, "auto"},
                          Case{abi::kTilePages, abi::kBlockSharded, abi::kMathMin, "auto"},
                          Case{abi::kRowMajorPages, abi::kInterleaved, abi::kMathSum, "auto"},
                          Case{abi::kRowMajorPages, abi::kHeightSharded, abi::kMathSum, "auto"},
                          Case{abi::kRowMajorPages, abi::kWidthSharded, abi::kMathMax, "edm"},
                          Case{abi::kRowMajorPages, abi::kBlockSharded, abi::kMathSum, "auto"}}) {
        const abi::TensorSpec t = tensor::in_memory(tensor::matrix(40, 70, abi::kI32, k.pages), k.memory, {3, 1});
        const abi::TensorAt at = tensor::placed(c.board(), t, 0);
        const int32_t first = k.op == abi::kMathMax ? INT32_MIN : k.op == abi::kMathMin ? INT32_MAX : 0;
        std::vector<int32_t> want(tensor::elements(t), first), mine(want.size());
        for (uint32_t chip = 0; chip < n; ++chip) {
            for (size_t i = 0; i < mine.size(); ++i) {
                mine[i] = int32_t((i * 7 + chip * 13) % 101) - 50;
                want[i] = k.op == abi::kMathMax   ? std::max(want[i], mine[i])
                          : k.op == abi::kMathMin ? std::min(want[i], mine[i])
                                                  : want[i] + mine[i];
            }
            tensor::write_tensor(c.chip(chip), at, mine.data());
        }
        ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
        o.transport = k.transport;
        ccl::CollectiveRunner runner(c, o);
        tensor::all_reduce(c, runner, at, k.op, core, milliseconds(60000));
        for (uint32_t chip = 0; chip < n; ++chip) {
            const std::vector<uint8_t> got = tensor::read_tensor(c.chip(chip), at);
            if (got.size() != want.size() * 4 || std::memcmp(got.data(), want.data(), got.size()) != 0)
                fail_msg("%s over %s: chip %u's reduction differs", tensor::describe(t).c_str(), k.transport, chip);
        }
    }
}

// Every chip's tensor reduced and cut along a dimension, chip k left with
// part k, through the flat reduce-scatter over the EDM, the fabric and
// whatever auto picks: tiles cut by rows and by columns, rows cut by rows
// and by columns, from and into banks and every kind of shard, sum and
// max. Each part is checked against the host's reduction.
void test_reduce_scatter_in_any_layout_through_the_flat_one(void**) {
    Cluster& c = *g_cluster;
    const uint32_t n = uint32_t(c.size()), core = c.board().cores_with_role(CoreRole::kWorker).back();
    struct Case {
        abi::TensorLayout pages;
        uint32_t rows, cols, dim;
        abi::TensorMemory in, out;
        abi::MathOp op;
        const char* transport;
    };
    for (const Case& k :
         {Case{abi::kTilePages, 32 * n, 64, 2, abi::kInterleaved, abi::kWidthSharded, abi::kMathSum, "edm"},
          Case{abi::kTilePages, 64, 32 * n, 3, abi::kBlockSharded, abi::kInterleaved, abi::kMathMax, "auto"},
          Case{abi::kRowMajorPages, 3 * n, 70, 2, abi::kHeightSharded, abi::kHeightSharded, abi::kMathSum, "fabric"},
          Case{abi::kRowMajorPages, 6, 5 * n, 3, abi::kInterleaved, abi::kInterleaved, abi::kMathSum, "auto"},
          // Rows cut by width (block) shards: each part's run is laid out as the output's shards.
          Case{abi::kRowMajorPages, 4 * n, 64, 2, abi::kWidthSharded, abi::kWidthSharded, abi::kMathSum, "auto"},
          Case{abi::kRowMajorPages, 8, 64 * n, 3, abi::kBlockSharded, abi::kBlockSharded, abi::kMathMax, "edm"},
          Case{abi::kTilePages, 32 * n, 64, 2, abi::kHeightSharded, abi::kHeightSharded, abi::kMathSum, "auto"}}) {
        const uint32_t pr = k.dim == 2 ? k.rows / n : k.rows, pc = k.dim == 3 ? k.cols / n : k.cols;
        const abi::TensorSpec whole =
            tensor::in_memory(tensor::matrix(k.rows, k.cols, abi::kI32, k.pages), k.in, {2, 1});
        const abi::TensorSpec part = tensor::in_memory(tensor::matrix(pr, pc, abi::kI32, k.pages), k.out, {2, 1});
        const auto [in, out] = tensor::place_both(c.board(), whole, part);
        std::vector<int32_t> want(tensor::elements(whole), k.op == abi::kMathMax ? INT32_MIN : 0), mine(want.size());
        for (uint32_t chip = 0; chip < n; ++chip) {
            for (size_t i = 0; i < mine.size(); ++i) {
                mine[i] = int32_t((i * 11 + chip * 17) % 103) - 51;
                want[i] = k.op == abi::kMathMax ? std::max(want[i], mine[i]) : want[i] + mine[i];
            }
            tensor::write_tensor(c.chip(chip), in, mine.data());
        }
        ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
        o.transport = k.transport;
        ccl::CollectiveRunner runner(c, o);
        tensor::reduce_scatter(c, runner, in, out, k.dim, k.op, core, milliseconds(60000));
        const std::string what = tensor::describe(whole) + " along " + std::to_string(k.dim) + " over " + k.transport;
        for (uint32_t chip = 0; chip < n; ++chip) {
            const std::vector<uint8_t> got = tensor::read_tensor(c.chip(chip), out);
            if (got.size() != size_t(pr) * pc * 4)
                fail_msg("%s: chip %u's part has %zu bytes", what.c_str(), chip, got.size());
            for (uint32_t r = 0; r < pr; ++r)
                for (uint32_t col = 0; col < pc; ++col) {
                    const uint32_t wr = k.dim == 2 ? chip * pr + r : r, wc = k.dim == 3 ? chip * pc + col : col;
                    int32_t v;
                    std::memcpy(&v, &got[(size_t(r) * pc + col) * 4], 4);
                    if (v != want[size_t(wr) * k.cols + wc])
                        fail_msg("%s: chip %u's element (%u, %u) is %d, not %d", what.c_str(), chip, r, col, v,
                                 want[size_t(wr) * k.cols + wc]);
                }
        }
    }
    // A dimension the chips do not divide is refused by name, before anything runs.
    const abi::TensorSpec odd = tensor::matrix(n + 1, 64, abi::kI32, abi::kRowMajorPages);
    const auto [in, out] = tensor::place_both(c.board(), odd, tensor::matrix(1, 64, abi::kI32, abi::kRowMajorPages));
    ccl::CollectiveRunner runner(c, ccl::RunnerOptions::from_env());
    try {
        tensor::reduce_scatter(c, runner, in, out, 2, abi::kMathSum, core, milliseconds(60000));
        fail_msg("a reduce_scatter of %u rows over %u chips ran", n + 1, n);
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not divide among"));
    }
}

std::vector<uint8_t> bytes_of(const std::vector<int32_t>& v) { return bytes_of(v.data(), v.size()); }

// A mesh tensor's parts stay on the chips from op to op: a 96 x 96 tensor cut
// over mesh3x3's rows and columns gathers along the rows, then the columns,
// with no trip through the host, until every chip holds the whole; partial
// values reduce-scatter and all-reduce along the rows. A tensor kept beside
// them, and each op's input, still read back as they were at the end.
void test_mesh_tensors_outlive_ops(void**) {
    using tensor::MeshAxis;
    using tensor::MeshPlacement;
    using tensor::MeshTensor;
    Cluster& c = *g_cluster;
    auto mesh = tensor::Mesh::over(c, ccl::RunnerOptions::from_env());
    const uint32_t side = mesh->cols();
    abi::TensorSpec whole = tensor::matrix(32 * side, 32 * side, abi::kF32, abi::kTilePages);
    const std::vector<uint8_t> data = some_data(whole, 5);
    const std::vector<uint8_t> other_data = some_data(whole, 6);
    const MeshTensor bystander =
        MeshTensor::from_host(mesh, whole, other_data.data(), MeshPlacement::replicate(), MeshPlacement::replicate());
    const MeshTensor t =
        MeshTensor::from_host(mesh, whole, data.data(), MeshPlacement::shard(2), MeshPlacement::shard(3));
    assert_true(t.to_host() == data);
    const MeshTensor rows = t.all_gather(MeshAxis::kRows);  // each row holds its band of rows
    assert_int_equal(rows.by_col().kind, MeshPlacement::kReplicate);
    assert_true(rows.to_host() == data);
    const MeshTensor all = rows.all_gather(MeshAxis::kColumns);
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        if (all.part(chip) != data) fail_msg("chip %u: the twice-gathered tensor is not the whole", chip);
    // Partial values, the same in every row: chip (y, x) holds f(x).
    const abi::TensorSpec part = tensor::matrix(32, 32 * side, abi::kI32, abi::kRowMajorPages);
    std::vector<std::vector<int32_t>> values(c.size(), std::vector<int32_t>(tensor::elements(part)));
    std::vector<int32_t> sum(tensor::elements(part), 0);
    std::vector<const void*> parts(c.size());
    for (uint32_t y = 0; y < mesh->rows(); ++y)
        for (uint32_t x = 0; x < side; ++x) {
            const uint32_t chip = mesh->chip_at(y, x);
            for (size_t i = 0; i < values[chip].size(); ++i) values[chip][i] = int32_t((i * 3 + x * 11) % 101) - 50;
            parts[chip] = values[chip].data();
            if (y == 0)
                for (size_t i = 0; i < sum.size(); ++i) sum[i] += values[chip][i];
        }
    const MeshTensor partial =
        MeshTensor::from_parts(mesh, part, parts, MeshPlacement::replicate(), MeshPlacement::partial());
    const MeshTensor scattered = partial.reduce_scatter(MeshAxis::kRows, 3);
    assert_int_equal(scattered.at().spec.shape[3], 32);
    assert_true(scattered.to_host() == bytes_of(sum));
    const MeshTensor reduced = partial.all_reduce(MeshAxis::kRows);
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        if (reduced.part(chip) != bytes_of(sum)) fail_msg("chip %u: its row's all-reduce differs", chip);
    for (uint32_t chip = 0; chip < c.size(); ++chip) {
        if (bystander.part(chip) != other_data) fail_msg("chip %u: the tensor kept beside the ops changed", chip);
        if (partial.part(chip) != bytes_of(values[chip])) fail_msg("chip %u: the all-reduce's input changed", chip);
    }
    assert_true(t.to_host() == data);
}

// Mesh tensor ops on the wrong placement, and cuts that do not divide, are
// refused by name.
void test_mesh_tensor_misuse_is_refused(void**) {
    using tensor::MeshAxis;
    using tensor::MeshPlacement;
    using tensor::MeshTensor;
    auto mesh = tensor::Mesh::over(*g_cluster, ccl::RunnerOptions::from_env());
    const abi::TensorSpec whole = tensor::matrix(32 * mesh->rows(), 64, abi::kF32, abi::kRowMajorPages);
    const std::vector<uint8_t> data = some_data(whole, 7);
    const MeshTensor t =
        MeshTensor::from_host(mesh, whole, data.data(), MeshPlacement::shard(2), MeshPlacement::replicate());
    const auto refused = [](const std::function<void()>& f, const char* needle) {
        try {
            f();
        } catch (const Error& e) {
            if (strstr(e.what(), needle)) return;
            fail_msg("'%s' does not say '%s'", e.what(), needle);
        }
        fail_msg("not refused: %s", needle);
    };
    refused([&] { t.all_gather(MeshAxis::kRows); }, "gathers a shard, but the tensor is replicate there");
    refused([&] { t.all_reduce(MeshAxis::kColumns); }, "reduces partial values, but the tensor is shard(2) there");
    refused([&] { MeshTensor::from_host(mesh, whole, data.data(), MeshPlacement::shard(2), MeshPlacement::shard(2)); },
            "across both the mesh's rows and its columns");
    refused([&] { MeshTensor::from_host(mesh, whole, data.data(), MeshPlacement::shard(3), MeshPlacement::shard(2)); },
            "does not cut evenly across the mesh's");  // 64 columns over 3 rows
    std::vector<const void*> parts(g_cluster->size(), data.data());
    const MeshTensor p = MeshTensor::from_parts(mesh, whole, parts, MeshPlacement::partial(), MeshPlacement::shard(2));
    refused([&] { p.to_host(); }, "has no whole until its parts are reduced");
    refused([&] { p.reduce_scatter(MeshAxis::kColumns, 2); }, "cuts dimension 2, which");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_name = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiles_move_between_dram_banks_and_block_shards),
        cmocka_unit_test(test_rows_move_between_dram_banks_and_height_shards),
        cmocka_unit_test(test_what_does_not_fit_is_refused),
        cmocka_unit_test(test_all_gather_reshards_in_flight),
        cmocka_unit_test(test_every_layout_gathers_and_shifts),
        cmocka_unit_test(test_all_gather_over_any_transport_through_the_flat_one),
        cmocka_unit_test(test_send_recv_reshards_in_flight),
        cmocka_unit_test(test_send_recv_over_the_edm_through_the_flat_one),
        cmocka_unit_test(test_all_reduce_in_any_layout_through_the_flat_one),
        cmocka_unit_test(test_reduce_scatter_in_any_layout_through_the_flat_one),
    };
    const struct CMUnitTest on_a_mesh[] = {
        cmocka_unit_test(test_all_gather_along_each_mesh_axis_at_once),
        cmocka_unit_test(test_reductions_along_each_mesh_axis_at_once),
        cmocka_unit_test(test_mesh_tensors_outlive_ops),
        cmocka_unit_test(test_mesh_tensor_misuse_is_refused),
    };
    const int failed = cmocka_run_group_tests(tests, setup, teardown);
    // A mesh's axes: on a cluster of one 2D mesh only.
    return failed + (g_name.rfind("mesh", 0) == 0 ? cmocka_run_group_tests(on_a_mesh, setup, teardown) : 0);
}
