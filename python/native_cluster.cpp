#include "native_cluster.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "common/error.h"
#include "driver/paths.h"
#include "driver/run_dir.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"
#include "transport/fabric/fabric.h"

namespace weft::python {
namespace {

constexpr std::chrono::milliseconds kTensorOpTimeout{60000};

bool input_on_root_only(ccl::Collective op) {
    return op == ccl::Collective::kBroadcast || op == ccl::Collective::kScatter;
}
bool output_on_root_only(ccl::Collective op) {
    return op == ccl::Collective::kReduce || op == ccl::Collective::kGather;
}
// Each rank gives one block of the result (its part), not the whole vector.
bool inputs_are_parts(ccl::Collective op) {
    return op == ccl::Collective::kAllGather || op == ccl::Collective::kGather;
}

// Lets go of the cluster when the call ends, however it ends: another client
// (weft, another program) may take it between this one's calls.
class Claimed {
public:
    Claimed(Machine& machine, const std::string& what) : machine_(machine) { machine_.claim(what); }
    ~Claimed() { machine_.release(); }
    Claimed(const Claimed&) = delete;
    Claimed& operator=(const Claimed&) = delete;

private:
    Machine& machine_;
};

// The size every giving rank's input has; throws weft::Error naming a rank
// whose input is missing, empty, of another size or not whole elements.
uint64_t input_bytes(const OpCall& call, ccl::Collective op, const std::vector<Bytes>& inputs) {
    const uint32_t element = ccl::dtype_size(call.dtype);
    uint64_t each = 0;
    for (uint32_t rank = 0; rank < inputs.size(); ++rank) {
        if (input_on_root_only(op) && rank != call.root) continue;
        const uint64_t n = inputs[rank].size();
        if (n == 0) throw Error(call.op + ": rank " + std::to_string(rank) + " gives no input");
        if (n % element)
            throw Error(call.op + ": rank " + std::to_string(rank) + "'s input is " + std::to_string(n) +
                        " bytes, not whole " + ccl::dtype_name(call.dtype) + " elements");
        if (each && n != each)
            throw Error(call.op + ": every rank's input must be the same size (rank 0: " + std::to_string(each) +
                        " bytes, rank " + std::to_string(rank) + ": " + std::to_string(n) + ")");
        each = n;
    }
    return each;
}

abi::TensorMemory memory_named(const std::string& what, const std::string& name) {
    const std::optional<abi::TensorMemory> m = tensor::parse_memory(name);
    if (!m) throw Error(what + " must be interleaved, height, width or block, not '" + name + "'");
    return *m;
}

abi::TensorLayout layout_named(const std::string& name) {
    if (name == "row") return abi::kRowMajorPages;
    if (name == "tile") return abi::kTilePages;
    throw Error("a tensor's layout must be row (row-major pages) or tile (32x32 tiles), not '" + name + "'");
}

abi::TensorSpec spec_of(const std::array<uint32_t, 4>& shape, abi::DataType dtype, const TensorCall& call,
                        const std::string& memory) {
    abi::TensorSpec t = tensor::matrix(1, 1, dtype, layout_named(call.layout));
    for (uint32_t d = 0; d < abi::kTensorDims; ++d) t.shape[d] = shape[d];
    return tensor::in_memory(t, memory_named("a tensor's memory", memory), call.grid);
}

// The shards leave a worker core for `op`'s kernel.
void check_grid_leaves_a_core(const BoardInfo& board, const tensor::CoreGrid& grid, const std::string& op) {
    if (const std::string why = tensor::kernel_core_shortfall(board, grid, op); !why.empty())
        throw Error("a shard grid of " + std::to_string(grid.first) + "x" + std::to_string(grid.second) + ": " + why);
}

// One part per chip, each `spec`'s bytes; throws weft::Error naming the
// first that is not.
void check_parts(const std::string& op, const std::vector<Bytes>& parts, uint32_t chips, const abi::TensorSpec& spec) {
    if (parts.size() != chips)
        throw Error(op + " takes one tensor per chip: " + std::to_string(chips) + ", not " +
                    std::to_string(parts.size()));
    const uint64_t bytes = tensor::host_bytes(spec);
    for (uint32_t chip = 0; chip < chips; ++chip)
        if (parts[chip].size() != bytes)
            throw Error("chip " + std::to_string(chip) + "'s tensor is " + std::to_string(parts[chip].size()) +
                        " bytes; " + tensor::describe(spec) + " holds " + std::to_string(bytes));
}

// Throws unless `data` is as many bytes as `spec` holds.
void check_bytes(const abi::TensorSpec& spec, const Bytes& data) {
    const uint64_t want = tensor::host_bytes(spec);
    if (data.size() != want)
        throw Error(tensor::describe(spec) + " holds " + std::to_string(want) + " bytes, not " +
                    std::to_string(data.size()));
}

}  // namespace

NativeCluster::NativeCluster(std::unique_ptr<Cluster> cluster)
    : cluster_(std::move(cluster)), run_dir_(cluster_->run_dir()) {}

std::unique_ptr<NativeCluster> NativeCluster::start(const std::string& cluster, const std::string& run_dir) {
    const std::string file = paths::cluster_file(cluster);
    std::string dir = run_dir;
    if (dir.empty()) {
        // Beside the default one, a directory per cluster this process starts.
        static std::atomic<int> started{0};
        const int n = started++;
        const std::string base = paths::default_run_dir() + (n ? "-" + std::to_string(n) : "");
        run_dir::remove_stale_temporaries(base);
        dir = run_dir::temporary(base, getpid());
    }
    return std::unique_ptr<NativeCluster>(new NativeCluster(Cluster::start(file, dir)));
}

NativeCluster::NativeCluster(std::unique_ptr<ClusterSpec> spec, std::unique_ptr<model::HostCluster> model)
    : spec_(std::move(spec)), model_(std::move(model)) {}

std::unique_ptr<NativeCluster> NativeCluster::model(const std::string& cluster) {
    auto spec = std::make_unique<ClusterSpec>(load_cluster(paths::cluster_file(cluster), paths::load_built_board));
    auto machine = std::make_unique<model::HostCluster>(*spec);
    return std::unique_ptr<NativeCluster>(new NativeCluster(std::move(spec), std::move(machine)));
}

std::unique_ptr<NativeCluster> NativeCluster::attach(const std::string& run_dir) {
    return std::unique_ptr<NativeCluster>(
        new NativeCluster(Cluster::attach(run_dir.empty() ? paths::default_run_dir() : run_dir)));
}

Machine& NativeCluster::machine() {
    if (model_) return *model_;
    if (!cluster_)
        throw Error(run_dir_.empty() ? "the host model was closed" : "the cluster in " + run_dir_ + " was closed");
    return *cluster_;
}

Cluster& NativeCluster::cluster() {
    if (model_)
        throw Error("tensors need a QEMU cluster (weft.Cluster.start or attach): their kernels are not built for "
                    "the host model, which runs the collectives");
    machine();  // throws once closed
    return *cluster_;
}

uint32_t NativeCluster::chips() { return machine().chip_count(); }
std::string NativeCluster::name() { return machine().name(); }
const std::string& NativeCluster::run_dir() const { return run_dir_; }

void NativeCluster::close() {
    runner_.reset();  // its fabric stops first
    if (mesh_) mesh_->close();  // its tensors' ops refuse from now on
    cluster_.reset();
    model_.reset();
    spec_.reset();
}

// A runner's options: the environment's, over `transport`, stopped by Ctrl-C.
ccl::RunnerOptions NativeCluster::options_for(const std::string& transport) {
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = transport;
    o.interrupted = [this] { return interrupted(); };
    return o;
}

ccl::CollectiveRunner& NativeCluster::runner(const std::string& transport, const std::vector<uint32_t>& chips) {
    std::string key = transport;
    for (uint32_t c : chips) key += " " + std::to_string(c);
    if (runner_ && key == runner_key_) return *runner_;
    runner_.reset();  // its fabric stops before another starts
    const ccl::RunnerOptions o = options_for(transport);
    runner_ = chips.empty() ? std::make_unique<ccl::CollectiveRunner>(machine(), o)
                            : std::make_unique<ccl::CollectiveRunner>(machine(), chips, o);
    runner_key_ = key;
    return *runner_;
}

std::vector<uint32_t> NativeCluster::ring_order(const std::string& transport, const std::vector<uint32_t>& chips) {
    return runner(transport, chips).ring();
}

void NativeCluster::on_interrupt(std::function<bool()> interrupted) {
    interrupted_ = std::move(interrupted);
    if (cluster_) cluster_->on_interrupt(interrupted_);
}

void NativeCluster::stop_if_interrupted(const char* while_doing) const {
    if (interrupted()) throw Error(std::string("interrupted: the op was stopped ") + while_doing);
}

std::vector<Bytes> NativeCluster::collective(const OpCall& call, const std::vector<Bytes>& inputs) {
    Machine& c = machine();
    ccl::OpRequest r;
    r.op = ccl::parse_collective(call.op);
    r.dtype = call.dtype;
    r.redop = ccl::parse_redop(call.redop);
    r.algo = call.algo;
    r.root = call.root;
    r.shape = call.shape;
    r.dim = call.dim;
    r.keep = tensor::dram_ranges(kept());
    ccl::CollectiveRunner& run = runner(call.transport, call.chips);
    const uint32_t ranks = uint32_t(run.chips().size());
    if (inputs.size() != ranks)
        throw Error(call.op + " takes one input per rank: " + std::to_string(ranks) + ", not " +
                    std::to_string(inputs.size()));
    if (r.root >= ranks)
        throw Error("root " + std::to_string(r.root) + " is not a rank (0-" + std::to_string(ranks - 1) + ")");
    const uint64_t each = input_bytes(call, r.op, inputs);
    r.bytes = inputs_are_parts(r.op) ? each * ranks : each;
    new_op();
    const Claimed claimed(c, call.op);
    const ccl::OpLayout l = run.layout(r);
    for (uint32_t rank = 0; rank < ranks; ++rank) {
        if (input_on_root_only(r.op) && rank != r.root) continue;
        const abi::Pages in = l.input_of(rank);
        if (in.bytes() != inputs[rank].size())
            throw Error(call.op + ": rank " + std::to_string(rank) + " holds " + std::to_string(in.bytes()) +
                        " bytes of this op's input, not " + std::to_string(inputs[rank].size()));
        stop_if_interrupted("while its inputs were written");
        c.write(run.chip_of(rank), in.base, inputs[rank].data(), in.bytes());
    }
    run.run(r);
    std::vector<Bytes> out(ranks);
    for (uint32_t rank = 0; rank < ranks; ++rank) {
        if (output_on_root_only(r.op) && rank != r.root) continue;
        const abi::Pages o = l.output_of(rank);
        stop_if_interrupted("while its outputs were read");
        out[rank].resize(o.bytes());
        c.read(run.chip_of(rank), o.base, out[rank].data(), o.bytes());
    }
    return out;
}

PlacedTensor NativeCluster::put_tensor(uint32_t chip, const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                       const TensorCall& call, const Bytes& data) {
    Cluster& c = cluster();
    if (chip >= c.size())
        throw Error("chip " + std::to_string(chip) + " is not in the cluster (0-" + std::to_string(c.size() - 1) + ")");
    const abi::TensorSpec spec = spec_of(shape, dtype, call, call.memory);
    const uint64_t bytes = abi::tensor_unit_bytes(spec);
    std::vector<std::pair<uint64_t, uint64_t>>& taken = placed_[{chip, abi::tensor_sharded(spec)}];
    uint64_t offset = call.offset.value_or(0);
    if (!call.offset) {  // first fit past the others, page-aligned
        std::sort(taken.begin(), taken.end());
        for (const auto& [a, z] : taken)
            if (offset < z && a < offset + bytes) offset = (z + 4095) & ~4095ull;
    }
    for (const auto& [a, z] : taken)
        if (offset < z && a < offset + bytes)
            throw Error("a tensor at offset " + std::to_string(offset) + " would overlap one placed on chip " +
                        std::to_string(chip) + " at offset " + std::to_string(a) + " (" + std::to_string(z - a) +
                        " bytes): leave the offset out and weft places it clear");
    const abi::TensorAt at = tensor::placed(c.board(), spec, offset);
    check_clear_of_kept(at, "put_tensor");
    check_bytes(at.spec, data);
    const Claimed claimed(c, "put_tensor");
    tensor::write_tensor(c.chip(chip), at, data.data());
    taken.push_back({offset, offset + bytes});
    return {chip, at, ops_};
}

// A Ctrl-C is heard between chips, as the flat ops hear it: the op's own
// waits are not its only long part (a tensor of MBs per chip is laid out).
void NativeCluster::write_parts(const abi::TensorAt& at, const std::vector<Bytes>& parts) {
    Cluster& c = cluster();
    for (uint32_t chip = 0; chip < parts.size(); ++chip) {
        stop_if_interrupted("while its inputs were written");
        tensor::write_tensor(c.chip(chip), at, parts[chip].data());
    }
}

std::vector<Bytes> NativeCluster::read_parts(const abi::TensorAt& at) {
    Cluster& c = cluster();
    std::vector<Bytes> out(c.size());
    for (uint32_t chip = 0; chip < out.size(); ++chip) {
        stop_if_interrupted("while its outputs were read");
        out[chip] = tensor::read_tensor(c.chip(chip), at);
    }
    return out;
}

void NativeCluster::new_op() {
    ++ops_;
    placed_.clear();  // what was placed may be overwritten now (get_tensor refuses it)
}

Bytes NativeCluster::get_tensor(const PlacedTensor& t) {
    Cluster& c = cluster();
    if (t.ops_before != ops_)
        throw Error("the tensor on chip " + std::to_string(t.chip) + " was placed before an op that may have " +
                    "overwritten it: an op's buffers share the chips' DRAM and L1 with it; put it again after the op");
    const Claimed claimed(c, "get_tensor");
    return tensor::read_tensor(c.chip(t.chip), t.at);
}

tensor::GroupRunners NativeCluster::group_runners(const std::string& transport, const std::string& axis) {
    if (axis.empty()) {
        tensor::GroupRunners g;
        g.runners.push_back(&runner(transport, {}));
        return g;
    }
    const std::vector<std::vector<uint32_t>> groups = mesh_axis_groups(axis);
    runner_.reset();
    return tensor::runners_over(machine(), groups, options_for(transport));
}

std::vector<Bytes> NativeCluster::all_reduce_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                                    const std::string& redop, const std::string& algo,
                                                    const std::string& transport, const TensorCall& call,
                                                    const std::vector<Bytes>& parts) {
    Cluster& c = cluster();
    const uint32_t ranks = chips();
    const BoardInfo& board = c.board();
    check_grid_leaves_a_core(board, call.grid, "all_reduce_tensor");
    const abi::TensorAt at = tensor::placed(board, spec_of(shape, dtype, call, call.memory), 0);
    check_parts("all_reduce_tensor", parts, ranks, at.spec);
    check_clear_of_kept(at, "all_reduce_tensor");
    const abi::MathOp op = ccl::parse_redop(redop);
    const tensor::GroupRunners run_on = group_runners(transport, call.mesh_axis);
    new_op();
    const Claimed claimed(c, "all_reduce_tensor");
    write_parts(at, parts);
    tensor::all_reduce(c, run_on.runners, at, op, board.cores_with_role(CoreRole::kWorker).back(), kTensorOpTimeout,
                       algo, kept());
    return read_parts(at);
}

std::vector<Bytes> NativeCluster::reduce_scatter_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                                        uint32_t dim, const std::string& redop, const std::string& algo,
                                                        const std::string& transport, const TensorCall& call,
                                                        const std::vector<Bytes>& parts) {
    Cluster& c = cluster();
    const uint32_t ranks = chips();
    if (dim >= abi::kTensorDims) throw Error("dimension " + std::to_string(dim) + " of a 4-D tensor (0-3)");
    const BoardInfo& board = c.board();
    check_grid_leaves_a_core(board, call.grid, "reduce_scatter_tensor");
    const abi::TensorSpec whole = spec_of(shape, dtype, call, call.memory);
    check_parts("reduce_scatter_tensor", parts, ranks, whole);
    const uint32_t group = call.mesh_axis.empty() ? ranks : uint32_t(mesh_axis_groups(call.mesh_axis)[0].size());
    if (whole.shape[dim] % group)
        throw Error("reduce_scatter_tensor: dimension " + std::to_string(dim) + " (" +
                    std::to_string(whole.shape[dim]) + ") does not divide among " + std::to_string(group) + " chips");
    std::array<uint32_t, 4> part_shape = shape;
    part_shape[dim] /= group;
    const abi::TensorSpec part =
        spec_of(part_shape, dtype, call, call.out_memory.empty() ? call.memory : call.out_memory);
    const auto [in, out] = tensor::place_both(board, whole, part);
    check_clear_of_kept(in, "reduce_scatter_tensor");
    check_clear_of_kept(out, "reduce_scatter_tensor");
    const abi::MathOp op = ccl::parse_redop(redop);
    const tensor::GroupRunners run_on = group_runners(transport, call.mesh_axis);
    new_op();
    const Claimed claimed(c, "reduce_scatter_tensor");
    write_parts(in, parts);
    tensor::reduce_scatter(c, run_on.runners, in, out, dim, op, board.cores_with_role(CoreRole::kWorker).back(),
                           kTensorOpTimeout, algo, kept());
    return read_parts(out);
}

std::vector<std::vector<uint32_t>> NativeCluster::mesh_axis_groups(const std::string& axis) {
    if (axis != "rows" && axis != "cols") throw Error("a mesh axis is rows or cols, not '" + axis + "'");
    return tensor::mesh_axis_groups(cluster().topology(),
                                    axis == "rows" ? tensor::MeshAxis::kRows : tensor::MeshAxis::kColumns);
}

std::vector<Bytes> NativeCluster::all_gather_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                                    uint32_t dim, const TensorCall& call,
                                                    const std::vector<Bytes>& parts, const std::string& transport) {
    Cluster& c = cluster();
    const uint32_t ranks = chips();
    if (dim >= abi::kTensorDims) throw Error("dimension " + std::to_string(dim) + " of a 4-D tensor (0-3)");
    std::vector<std::vector<uint32_t>> groups;
    if (call.mesh_axis.empty()) {
        groups.emplace_back(ranks);
        for (uint32_t chip = 0; chip < ranks; ++chip) groups[0][chip] = chip;
    } else {
        groups = mesh_axis_groups(call.mesh_axis);
    }
    const BoardInfo& board = c.board();
    check_grid_leaves_a_core(board, call.grid, "all_gather_tensor");
    const abi::TensorSpec part = spec_of(shape, dtype, call, call.memory);
    check_parts("all_gather_tensor", parts, ranks, part);
    const std::string out_memory = call.out_memory.empty() ? call.memory : call.out_memory;
    const uint32_t group = uint32_t(groups[0].size());
    const abi::TensorSpec whole = tensor::in_memory(tensor::gathered(part, dim, group, part),
                                                    memory_named("the gathered tensor's memory", out_memory),
                                                    call.grid);
    const auto [in, out] = tensor::place_both(board, part, whole);
    check_clear_of_kept(in, "all_gather_tensor");
    check_clear_of_kept(out, "all_gather_tensor");
    const uint32_t core = board.cores_with_role(CoreRole::kWorker).back();
    const bool flat = transport == "edm";  // the fabric's kernel cannot: through the flat all-gather
    if (!flat && transport != "fabric" && transport != "auto")
        throw Error("all_gather_tensor runs over the fabric or the EDM, not '" + transport + "'");
    tensor::GroupRunners run_on;
    if (flat) run_on = group_runners(transport, call.mesh_axis);
    else
        runner_.reset();  // a collective's fabric holds the routers' cores: this op starts its own
    new_op();
    const Claimed claimed(c, "all_gather_tensor");
    write_parts(in, parts);
    if (flat) {
        tensor::all_gather(c, run_on.runners, in, out, dim, core, kTensorOpTimeout, "auto", kept());
    } else {
        auto fabric = transport::Fabric::start(c, transport::cluster_fabric(board, c.topology(), FabricSpec{}),
                                               std::chrono::milliseconds(10000));
        tensor::all_gather_groups(c, *fabric, groups, in, out, dim, core, kTensorOpTimeout);
        fabric->stop();
    }
    return read_parts(out);
}

}  // namespace weft::python

namespace weft::python {
namespace {

tensor::MeshPlacement placement_named(const std::string& name) {
    if (name == "replicate") return tensor::MeshPlacement::replicate();
    const size_t colon = name.find(':');
    const std::string kind = name.substr(0, colon), arg = colon == std::string::npos ? "" : name.substr(colon + 1);
    if (kind == "partial") return tensor::MeshPlacement::partial(ccl::parse_redop(arg.empty() ? "sum" : arg));
    if (kind == "shard" && arg.size() == 1 && arg[0] >= '0' && arg[0] <= '3')
        return tensor::MeshPlacement::shard(uint32_t(arg[0] - '0'));
    throw Error("a mesh tensor's placement is replicate, shard:<dimension 0-3> or partial:<op>, not '" + name + "'");
}

tensor::MeshAxis axis_named(const std::string& axis) {
    if (axis == "rows") return tensor::MeshAxis::kRows;
    if (axis == "cols") return tensor::MeshAxis::kColumns;
    throw Error("a mesh axis is rows or cols, not '" + axis + "'");
}

abi::TensorSpec mesh_spec(const std::array<uint32_t, 4>& shape, abi::DataType dtype, const std::string& layout) {
    abi::TensorSpec t{};
    for (uint32_t d = 0; d < 4; ++d) t.shape[d] = shape[d];
    t.dtype = uint16_t(dtype);
    if (layout != "row" && layout != "tile") throw Error("a tensor's layout is row or tile, not '" + layout + "'");
    t.layout = uint8_t(layout == "tile" ? abi::kTilePages : abi::kRowMajorPages);
    return t;
}

}  // namespace

std::shared_ptr<tensor::Mesh> NativeCluster::mesh() {
    if (!mesh_) mesh_ = tensor::Mesh::over(cluster(), options_for("auto"), cluster().board().dram_bank(0).size / 2);
    return mesh_;
}

std::vector<abi::TensorAt> NativeCluster::kept() const {
    return mesh_ ? mesh_->space().taken() : std::vector<abi::TensorAt>{};
}

void NativeCluster::check_clear_of_kept(const abi::TensorAt& at, const std::string& what) const {
    for (const abi::Pages& mine : tensor::dram_ranges(at))
        for (const abi::TensorAt& k : kept())
            for (const abi::Pages& theirs : tensor::dram_ranges(k))
                if (mine.base < theirs.end() && theirs.base < mine.end())
                    throw Error(what + ": " + tensor::describe(at.spec) + " would take DRAM a mesh tensor holds (" +
                                tensor::describe(k.spec) + "): drop the mesh tensors, or make this one smaller");
}

std::shared_ptr<tensor::MeshTensor> NativeCluster::mesh_tensor_from_host(const std::array<uint32_t, 4>& shape,
                                                                         abi::DataType dtype, const std::string& layout,
                                                                         const std::string& by_row,
                                                                         const std::string& by_col, const Bytes& data) {
    const abi::TensorSpec whole = mesh_spec(shape, dtype, layout);
    check_bytes(whole, data);
    const tensor::MeshPlacement rows = placement_named(by_row), cols = placement_named(by_col);
    const std::shared_ptr<tensor::Mesh> m = mesh();
    const Claimed claimed(cluster(), "MeshTensor");
    return std::make_shared<tensor::MeshTensor>(tensor::MeshTensor::from_host(m, whole, data.data(), rows, cols));
}

std::shared_ptr<tensor::MeshTensor> NativeCluster::mesh_tensor_from_parts(
    const std::array<uint32_t, 4>& shape, abi::DataType dtype, const std::string& layout, const std::string& by_row,
    const std::string& by_col, const std::vector<Bytes>& parts) {
    const abi::TensorSpec part = mesh_spec(shape, dtype, layout);
    check_parts("MeshTensor.from_parts", parts, chips(), part);
    std::vector<const void*> each;
    for (const Bytes& p : parts) each.push_back(p.data());
    const tensor::MeshPlacement rows = placement_named(by_row), cols = placement_named(by_col);
    const std::shared_ptr<tensor::Mesh> m = mesh();
    const Claimed claimed(cluster(), "MeshTensor");
    return std::make_shared<tensor::MeshTensor>(tensor::MeshTensor::from_parts(m, part, each, rows, cols));
}

std::shared_ptr<tensor::MeshTensor> NativeCluster::mesh_tensor_op(const tensor::MeshTensor& t, const std::string& op,
                                                                  const std::string& axis, uint32_t dim) {
    const tensor::MeshAxis a = axis_named(axis);
    Cluster& c = cluster();
    runner_.reset();  // the ops' runners take the cores a cached runner holds
    new_op();
    const Claimed claimed(c, "MeshTensor." + op);
    if (op == "all_gather") return std::make_shared<tensor::MeshTensor>(t.all_gather(a));
    if (op == "reduce_scatter") return std::make_shared<tensor::MeshTensor>(t.reduce_scatter(a, dim));
    if (op == "all_reduce") return std::make_shared<tensor::MeshTensor>(t.all_reduce(a));
    throw Error("a mesh tensor runs all_gather, reduce_scatter or all_reduce, not '" + op + "'");
}

Bytes NativeCluster::mesh_tensor_part(const tensor::MeshTensor& t, uint32_t chip) {
    const Claimed claimed(cluster(), "MeshTensor.parts");
    return t.part(chip);
}

Bytes NativeCluster::mesh_tensor_whole(const tensor::MeshTensor& t) {
    const Claimed claimed(cluster(), "MeshTensor.to_array");
    return t.to_host();
}

}  // namespace weft::python
