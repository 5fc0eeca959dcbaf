// What the Python module drives: a running cluster, the collectives on each
// rank's bytes, and tensors placed on its chips. Plain C++ (no Python types),
// so the binding (weft_module.cpp) only converts arrays and errors.
#pragma once
#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ccl/runner.h"
#include "driver/cluster.h"
#include "driver/cluster_file.h"
#include "model/host_cluster.h"
#include "tensor/mesh_tensor.h"
#include "tensor/tensor_flat.h"
#include "tensor/tensor_io.h"

namespace weft::python {

// One rank's bytes of an op's input or output (empty: none).
using Bytes = std::vector<uint8_t>;

struct OpCall {
    std::string op;  // all_reduce, all_gather, reduce_scatter, broadcast, reduce, gather, scatter
    abi::DataType dtype = abi::kF32;
    std::string redop = "sum";
    std::string algo = "auto";
    std::string transport = "auto";
    uint32_t root = 0;
    // All-gather of 4-D parts: each rank's shape and the dimension they are
    // concatenated along; shape[0] == 0: flat.
    std::array<uint64_t, 4> shape{};
    uint32_t dim = 0;
    // A communicator of these chips (rank r is chips[r]); empty: every chip.
    std::vector<uint32_t> chips;
};

// A tensor placed on one chip: where, and in what shape and layout.
struct PlacedTensor {
    uint32_t chip = 0;
    abi::TensorAt at{};
    uint64_t ops_before = 0;  // the cluster's ops when it was placed
};

struct TensorCall {
    std::string layout = "row";  // row (row-major pages) or tile (32x32 tiles)
    std::string memory = "interleaved", out_memory;
    tensor::CoreGrid grid{2, 1};
    // put_tensor: bytes into each bank (or core's free L1) where it goes;
    // nullopt: past the tensors already placed there since the last op.
    std::optional<uint64_t> offset;
    // The tensor ops: "" (every chip, one group), "rows" or "cols" (a
    // group along each row or column of the cluster's mesh, all at once).
    std::string mesh_axis;
};

class NativeCluster {
public:
    // `run_dir` empty: a temporary run directory beside the default one.
    static std::unique_ptr<NativeCluster> start(const std::string& cluster, const std::string& run_dir);
    // `run_dir` empty: $WEFT_RUN_DIR or /tmp/weft-UID, where `weft up` starts one.
    static std::unique_ptr<NativeCluster> attach(const std::string& run_dir);
    // The cluster file's chips on the host-model machine (model/host_cluster.h),
    // in this process: weft's own kernels on host memory, no QEMU. It runs
    // the collectives; tensors need a QEMU cluster (their kernels are not
    // built for the host).
    static std::unique_ptr<NativeCluster> model(const std::string& cluster);

    // Both throw weft::Error once closed.
    uint32_t chips();
    std::string name();
    const std::string& run_dir() const;
    // Stops the cluster if this process started it, and lets go of it.
    void close();
    bool closed() const { return !cluster_ && !model_; }

    // The op on `inputs` (one per rank; empty where a rank gives none: the
    // non-roots of broadcast and scatter). Returns each rank's output (empty
    // where it has none: the non-roots of reduce and gather). sendrecv: each
    // rank receives from the one before it in ring_order. Throws
    // weft::Error naming what does not fit, TimeoutError / FaultError when the
    // op fails (the cluster stays usable).
    std::vector<Bytes> collective(const OpCall& call, const std::vector<Bytes>& inputs);
    // Asked as an op waits and between the chips its inputs and outputs
    // move to and from: true stops it (Ctrl-C, from the binding).
    // Asked as ops run (the collectives' waits, and every wait on the
    // cluster's kernels: the tensor ops'); true stops the op.
    void on_interrupt(std::function<bool()> interrupted);
    // The ranks in the order of the communicator's ring (its cables').
    std::vector<uint32_t> ring_order(const std::string& transport, const std::vector<uint32_t>& chips);

    // `data` (row-major elements of `shape`, up to 4-D, outermost first) placed
    // on `chip` in `call`'s layout and memory.
    PlacedTensor put_tensor(uint32_t chip, const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                            const TensorCall& call, const Bytes& data);
    // The tensor's elements back, row-major. Throws weft::Error once an op
    // ran after it was placed: an op's buffers go anywhere in the chips'
    // DRAM and workers' L1 that it does not itself use, so it may have
    // overwritten the tensor.
    Bytes get_tensor(const PlacedTensor& t);
    // Every chip's tensor (same shape), placed in `call`'s layout and memory,
    // reduced element-wise by `redop` through the flat all-reduce (`algo`) over
    // `transport` (tensor_flat.h); returns each chip's result, row-major.
    std::vector<Bytes> all_reduce_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                         const std::string& redop, const std::string& algo,
                                         const std::string& transport, const TensorCall& call,
                                         const std::vector<Bytes>& parts);
    // Every chip's tensor (same shape) reduced element-wise by `redop` and
    // cut along `dim` into a part a chip, through the flat reduce-scatter
    // (tensor_flat.h); returns each chip's part, row-major. The parts go
    // in call.out_memory (call.memory if empty). With call.mesh_axis, each
    // row (or column) of the mesh reduces and cuts its own, at once; so does
    // all_reduce_tensor.
    std::vector<Bytes> reduce_scatter_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype, uint32_t dim,
                                             const std::string& redop, const std::string& algo,
                                             const std::string& transport, const TensorCall& call,
                                             const std::vector<Bytes>& parts);
    // The chips along each row ("rows") or column ("cols") of the cluster's
    // one mesh; throws weft::Error for another axis or a cluster that is not
    // one 2D mesh or torus.
    std::vector<std::vector<uint32_t>> mesh_axis_groups(const std::string& axis);
    // Every chip's part (same shape) gathered along `dim`, in `call`'s
    // layouts (out_memory: the gathered tensor's memory, default the
    // parts'), among all chips or in each group of call.mesh_axis at once:
    // over the fabric by its kernel ("fabric" or "auto"), or through the flat
    // all-gather over the EDM ("edm"). Returns each chip's gathered tensor,
    // row-major.
    std::vector<Bytes> all_gather_tensor(const std::array<uint32_t, 4>& shape, abi::DataType dtype, uint32_t dim,
                                         const TensorCall& call, const std::vector<Bytes>& parts,
                                         const std::string& transport = "fabric");

    // Mesh tensors (tensor/mesh_tensor.h) over the cluster's one 2D mesh:
    // parts that stay on the chips from op to op, kept in the upper half of
    // each DRAM bank, which the calls above keep clear of (refusing a tensor
    // they would place there). A placement is "replicate", "shard:<dim>" or
    // "partial:<redop>". from_host cuts `data` (row-major, `shape`); from
    // parts takes a part a chip, each `shape`.
    std::shared_ptr<tensor::MeshTensor> mesh_tensor_from_host(const std::array<uint32_t, 4>& shape, abi::DataType dtype,
                                                              const std::string& layout, const std::string& by_row,
                                                              const std::string& by_col, const Bytes& data);
    std::shared_ptr<tensor::MeshTensor> mesh_tensor_from_parts(const std::array<uint32_t, 4>& shape,
                                                               abi::DataType dtype, const std::string& layout,
                                                               const std::string& by_row, const std::string& by_col,
                                                               const std::vector<Bytes>& parts);
    // `op` (all_gather, reduce_scatter along `dim`, all_reduce) along `axis`
    // ("rows" or "cols"): the mesh tensor that leaves.
    std::shared_ptr<tensor::MeshTensor> mesh_tensor_op(const tensor::MeshTensor& t, const std::string& op,
                                                       const std::string& axis, uint32_t dim);
    Bytes mesh_tensor_part(const tensor::MeshTensor& t, uint32_t chip);
    // The logical tensor, row-major.
    Bytes mesh_tensor_whole(const tensor::MeshTensor& t);

private:
    explicit NativeCluster(std::unique_ptr<Cluster> cluster);
    NativeCluster(std::unique_ptr<ClusterSpec> spec, std::unique_ptr<model::HostCluster> model);
    // The QEMU cluster, for the tensor ops; throws weft::Error on the model.
    Cluster& cluster();
    Machine& machine();
    ccl::CollectiveRunner& runner(const std::string& transport, const std::vector<uint32_t>& chips);
    // An op starts: the tensors placed before it may be overwritten.
    void new_op();

    std::unique_ptr<Cluster> cluster_;
    std::unique_ptr<ClusterSpec> spec_;  // the model's, which it refers to
    std::unique_ptr<model::HostCluster> model_;
    std::string run_dir_;
    // One at a time (a runner's fabric holds the ERISC cores the EDM needs),
    // kept while the calls ask for the same transport and chips.
    uint64_t ops_ = 0;  // ops run (collectives and tensor ops), for get_tensor
    // The offsets [begin, end) each chip's tensors placed since the last op
    // take, in DRAM banks (false) or workers' L1 (true): put_tensor keeps a
    // new one clear of them.
    std::map<std::pair<uint32_t, bool>, std::vector<std::pair<uint64_t, uint64_t>>> placed_;
    std::string runner_key_;
    std::function<bool()> interrupted_;
    // The runners a tensor op runs on: the cached one over every chip, or,
    // along a mesh axis, one a row (or column) for this call alone (the
    // cached runner's transport stops first: it holds the cores they take).
    tensor::GroupRunners group_runners(const std::string& transport, const std::string& axis);
    ccl::RunnerOptions options_for(const std::string& transport);
    bool interrupted() const { return interrupted_ && interrupted_(); }
    // Throws "interrupted: ..." once interrupted() says so.
    void stop_if_interrupted(const char* while_doing) const;
    // Each chip's part of a tensor op's input written at `at`, and each one's
    // output read from it, a Ctrl-C heard between chips.
    void write_parts(const abi::TensorAt& at, const std::vector<Bytes>& parts);
    std::vector<Bytes> read_parts(const abi::TensorAt& at);
    // The mesh tensors' mesh, made by the first; closed with the cluster.
    std::shared_ptr<tensor::Mesh> mesh_;
    std::shared_ptr<tensor::Mesh> mesh();
    // The mesh tensors, which the other calls keep clear of.
    std::vector<abi::TensorAt> kept() const;
    // Throws weft::Error if `at` would take DRAM a mesh tensor holds.
    void check_clear_of_kept(const abi::TensorAt& at, const std::string& what) const;
    std::unique_ptr<ccl::CollectiveRunner> runner_;  // declared last: it goes first
};

}  // namespace weft::python
