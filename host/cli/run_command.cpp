// weft run OP: one collective op, checked against the host reference, timed.
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "ccl/op_case.h"
#include "cli/arguments.h"
#include "cli/ccl_request.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/port_argument.h"
#include "cli/tensor_run.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/knobs.h"
#include "driver/cluster_file.h"
#include "driver/paths.h"
#include "driver/trace.h"
#include "model/host_cluster.h"

namespace weft::cli {
namespace {

struct RunArgs {
    CclArgs ccl;
    uint64_t size = 0;  // 0: 1 MiB, or the shape's
    std::string shape;
    uint32_t dim = 0;
    const CLI::Option* dim_option = nullptr;  // given: only with --shape
    std::string trace, send, recv, record;
    std::string mesh;  // "": the whole cluster; a mesh id, or "all": each mesh its own op, all at once
    bool in_place = false;
    TensorRunArgs tensor;
    std::string pull;  // "CHIP.PORT@MS": a cable pulled under the op
    bool model = false;  // on the host-model machine of --cluster, not a QEMU cluster
};

// --pull's cable and time: "5.E@20" is chip 5's port E, 20 ms into the op.
struct Pull {
    ChipPort end;
    std::string name;
    uint32_t after_ms = 0;
};

// Its words, before a cluster is started; resolve() names the port once one is.
Pull parse_pull(const std::string& text) {
    const size_t at = text.find('@');
    const std::string ms = at == std::string::npos ? "" : text.substr(at + 1);
    if (at == std::string::npos || at == 0 || ms.empty() || ms.size() > 6 ||
        ms.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError("--pull " + text + ": give CHIP.PORT@MS, the cable and how long into the op to pull it " +
                         "(as 5.E@20, at most 999999 ms)");
    Pull p;
    p.name = text.substr(0, at);
    p.after_ms = static_cast<uint32_t>(std::stoul(ms));
    return p;
}

constexpr const char* kShapeRange = "four whole numbers a,b,c,d of at least 1, at most 2^40 elements in all";

// "a,b,c,d" as a 4-D shape; throws weft::Error with the range it must be in.
std::array<uint64_t, 4> parse_shape(const std::string& text) {
    const Error refusal("must be " + std::string(kShapeRange) + " (e.g. 1,2,64,64), not '" + text + "'");
    std::array<uint64_t, 4> shape{};
    std::stringstream words(text);
    std::string word;
    size_t d = 0;
    uint64_t elements = 1;
    for (; std::getline(words, word, ','); ++d) {
        if (d == 4) throw refusal;
        try {
            shape[d] = parse_whole(word, 1, kMaxBytes);
        } catch (const Error&) {
            throw refusal;
        }
        if (shape[d] > kMaxBytes / elements) throw refusal;  // before the product could wrap
        elements *= shape[d];
    }
    if (d != 4 || text.back() == ',') throw refusal;
    return shape;
}

ccl::OpRequest request(const RunArgs& a) {
    ccl::OpRequest r = request_of(a.ccl, false);
    r.bytes = a.size;
    if (!a.shape.empty()) {
        r.shape = parse_shape(a.shape);
        r.dim = a.dim;
    }
    if (r.bytes == 0 && r.shape[0] == 0) r.bytes = 1 << 20;
    // What the layout would refuse after the cluster started: usage, naming the option.
    const uint32_t element = ccl::dtype_size(r.dtype);
    if (r.shape[0] == 0 && r.bytes % element)
        throw UsageError("--size " + std::to_string(r.bytes) + ": not a whole number of " + ccl::dtype_name(r.dtype) +
                         " elements (" + std::to_string(element) + " bytes each)");
    const bool scatters = r.op == ccl::Collective::kReduceScatter && tensor_asked(a.tensor);
    if (a.dim_option && a.dim_option->count() &&
        (a.shape.empty() || (r.op != ccl::Collective::kAllGather && !scatters)))
        throw UsageError("--dim: the dimension an all_gather's --shape is gathered along (a tensor reduce_scatter's, "
                         "scattered along); give it with those only");
    if (!a.shape.empty() && r.op != ccl::Collective::kAllGather && !tensor_asked(a.tensor))
        throw UsageError("--shape: a tensor's shape applies to all_gather only (and with --layout to sendrecv)");
    if (a.in_place && r.op == ccl::Collective::kSendRecv)
        throw UsageError("--in-place: sendrecv cannot run in place: each chip receives while it sends");
    if (!a.send.empty()) r.send = parse_address(a.send);
    if (!a.recv.empty()) r.recv = parse_address(a.recv);
    if (a.in_place && !a.send.empty() && !a.recv.empty() && r.send != r.recv)
        throw UsageError("--in-place: --send and --recv differ; give one address (or the same for both)");
    return r;
}

// `counted`: the bridge counted the cables' bytes and the doorbells (a QEMU
// cluster; the host model counts neither).
void print_result(const ccl::OpRequest& r, const ccl::CaseResult& res, uint32_t n, bool counted = true) {
    const uint64_t bytes = res.layout.elements * res.layout.element;
    const double alg = algbw(bytes, res.timing.seconds);
    std::printf("  algo %s%s, %s %s, %llu bytes (%llu elements), %u workers, %u %s streams", res.timing.algo.c_str(),
                r.algo == "auto" ? " (auto)" : "", ccl::dtype_name(r.dtype).c_str(),
                ccl::reduces(r.op) ? ccl::redop_name(r.redop).c_str() : "-", (unsigned long long)bytes,
                (unsigned long long)res.layout.elements, res.timing.workers, res.timing.streams,
                res.timing.transport.c_str());
    if (res.timing.planes > 1) std::printf(", every hop over %u planes", res.timing.planes);
    std::printf("\n  buffers: input at %s, output at %s%s\n", hex(res.layout.input).c_str(),
                hex(res.layout.output).c_str(), r.in_place() ? " (in place)" : "");
    std::printf("  time %.3f ms, algbw %.3f GB/s, busbw %.3f GB/s\n", res.timing.seconds * 1e3, alg,
                alg * ccl::bus_factor(r.op, n));
    if (!counted) return;
    const double steps = res.timing.features.critical_path > 1 ? res.timing.features.critical_path : 1;
    std::printf(
        "  cables carried %llu payload bytes for the algorithm's %llu (%.3fx); %llu doorbells, %.2f per chip per"
        " step over %.0f steps\n",
        (unsigned long long)res.traffic.wire_bytes, (unsigned long long)res.timing.bytes_on_links,
        res.timing.bytes_on_links ? double(res.traffic.wire_bytes) / res.timing.bytes_on_links : 0.0,
        (unsigned long long)res.traffic.doorbells, double(res.traffic.doorbells) / n / steps, steps);
}

void write_record(Cluster& cluster, ccl::CollectiveRunner& run, const ccl::OpRequest& r, const std::string& path) {
    const transport::PacketLog log = run.packet_log();
    const nlohmann::json about = {{"cluster", cluster.info().value("name", "")},
                                  {"cluster_file", cluster.info().value("cluster_file", "")},
                                  {"op", ccl::collective_name(r.op)},
                                  {"algo", r.algo},
                                  {"bytes", r.bytes}};
    transport::write_packet_log_file(path, log, about);
    std::printf("  record: %zu cable crossings in %s%s\n", log.hops.size(), path.c_str(),
                log.lost.empty() ? "" : " (routers' logs wrapped: the oldest are lost)");
}

// The meshes --mesh names: one by id, or every mesh of the cluster.
std::vector<Mesh> meshes_named(const ClusterTopology& t, const std::string& mesh) {
    if (mesh == "all") return t.meshes();
    std::string known;
    for (const Mesh& m : t.meshes()) {
        if (std::to_string(m.id) == mesh) return {m};
        known += (known.empty() ? "" : ", ") + std::to_string(m.id);
    }
    throw UsageError("--mesh " + mesh + ": this cluster's meshes are " + known + " (or all)");
}

// One case per communicator, all started before any is waited for: each
// mesh runs its own op while the others run theirs, on inputs of its own.
std::vector<ccl::CaseResult> run_at_once(std::vector<std::unique_ptr<ccl::CollectiveRunner>>& runs, Cluster& cluster,
                                         const ccl::OpRequest& r) {
    std::vector<ccl::CaseResult> results(runs.size());
    std::function<void(size_t)> from = [&](size_t i) {
        if (i == runs.size()) return;
        results[i] = ccl::run_case(*runs[i], cluster, r, uint32_t(1 + i), [&] { from(i + 1); });
    };
    from(0);
    return results;
}

// The check's line after `lead`, and the exit code it makes.
int print_check(const ccl::CheckResult& c, const char* lead) {
    if (c.wrong) {
        std::printf("%s%llu of %llu elements WRONG; first: %s\n", lead, (unsigned long long)c.wrong,
                    (unsigned long long)c.checked, c.first_wrong.c_str());
        return kFailed;
    }
    std::printf("%s%llu elements match the host reference\n", lead, (unsigned long long)c.checked);
    return kOk;
}

// weft run --mesh: the op over one mesh's chips, or over every mesh at once
// (a communicator a mesh; over the fabric each mesh's own).
int run_on_meshes(const std::string& mesh, const ccl::OpRequest& r, Cluster& cluster,
                  const ccl::RunnerOptions& options) {
    std::vector<std::unique_ptr<ccl::CollectiveRunner>> runs;
    const std::vector<Mesh> meshes = meshes_named(cluster.topology(), mesh);
    for (const Mesh& m : meshes) {
        std::vector<uint32_t> chips(m.chips());
        for (uint32_t i = 0; i < chips.size(); ++i) chips[i] = m.first_chip + i;
        runs.push_back(std::make_unique<ccl::CollectiveRunner>(cluster, chips, options));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<ccl::CaseResult> results = run_at_once(runs, cluster, r);
    std::printf("%s on %zu mesh%s at once: %.3f ms in all\n", ccl::collective_name(r.op).c_str(), meshes.size(),
                meshes.size() == 1 ? "" : "es", seconds_since(t0) * 1e3);
    int rc = kOk;
    for (size_t i = 0; i < meshes.size(); ++i) {
        const ccl::CaseResult& res = results[i];
        const uint64_t bytes = res.layout.elements * res.layout.element;
        std::printf("  mesh %u (chips %u-%u): algo %s over the %s, %llu bytes; ", meshes[i].id, meshes[i].first_chip,
                    meshes[i].first_chip + meshes[i].chips() - 1, res.timing.algo.c_str(),
                    res.timing.transport.c_str(), (unsigned long long)bytes);
        if (print_check(res.check, "") != kOk) rc = kFailed;
    }
    return rc;
}

// --layout: the tensor all-gather or sendrecv, over the fabric; all-reduce
// and reduce-scatter through the flat ones, over any transport.
int run_tensor(const RunArgs& a, const ccl::OpRequest& r, const std::string& run_dir) {
    const bool reduce = r.op == ccl::Collective::kAllReduce || r.op == ccl::Collective::kReduceScatter;
    if (r.op != ccl::Collective::kAllGather && r.op != ccl::Collective::kSendRecv && !reduce)
        throw UsageError(
            "--layout: " + ccl::collective_name(r.op) +
            " on tensor layouts is not built yet; all_gather, reduce_scatter, all_reduce and sendrecv are");
    if (a.size) throw UsageError("--layout: --shape is the tensor's size: leave out --size");
    if (a.ccl.algo != "auto" && !reduce)
        throw UsageError("--layout: the tensor " + ccl::collective_name(r.op) + " has one algorithm: leave out --algo");
    if (!a.mesh.empty() || !a.trace.empty() || !a.record.empty() || a.in_place || !a.send.empty() || !a.recv.empty())
        throw UsageError("--layout places its tensors itself and runs one op: leave out --mesh, --trace, --record, "
                         "--in-place, --send and --recv");
    check_tensor(a.tensor, r.shape, r.dtype);
    auto cluster = attach_or_start(run_dir, a.ccl.cluster, "ring8");
    if (reduce) {
        const ccl::RunnerOptions options = runner_options(a.ccl);
        if (r.op == ccl::Collective::kReduceScatter)
            return run_tensor_reduce_scatter(a.tensor, r.shape, r.dim, r.dtype, r.redop, a.ccl.algo, options, *cluster);
        return run_tensor_all_reduce(a.tensor, r.shape, r.dtype, r.redop, a.ccl.algo, options, *cluster);
    }
    if (r.op == ccl::Collective::kSendRecv)
        return run_tensor_send_recv(a.tensor, r.shape, r.dtype, runner_options(a.ccl), *cluster);
    return run_tensor_all_gather(a.tensor, r.shape, r.dim, r.dtype, runner_options(a.ccl), *cluster);
}

// A root out of range, as --chip elsewhere: before the op's header is printed.
void check_root(const ccl::OpRequest& r, uint32_t chips) {
    if (r.root >= chips)
        throw UsageError("--root: the cluster has chips 0 to " + std::to_string(chips - 1) + ", not " +
                         std::to_string(r.root));
}

// --in-place: at --send or --recv, else at the bottom of DRAM.
void place_in_place(const RunArgs& a, ccl::OpRequest& r, const BoardInfo& board) {
    if (a.in_place) r.send = r.recv = r.send ? r.send : r.recv ? r.recv : board.dram.base;
}

// --model: the op on the host-model machine of the cluster file, in this
// process: the same runner and the firmware's own kernels, built for the
// host. Its answer is checked as on QEMU; its time is the host's.
int run_on_model(const RunArgs& a, ccl::OpRequest r) {
    if (tensor_asked(a.tensor) || !a.pull.empty() || !a.mesh.empty() || !a.trace.empty() || !a.record.empty())
        throw UsageError("--model runs one op on the host model: leave out --layout, --pull, --mesh, --trace and "
                         "--record (a QEMU cluster's)");
    const ClusterSpec spec =
        load_cluster(paths::cluster_file(a.ccl.cluster.empty() ? "ring8" : a.ccl.cluster), paths::load_built_board);
    model::HostCluster machine(spec);
    check_root(r, spec.num_chips);
    place_in_place(a, r, spec.board);
    ccl::CollectiveRunner run(machine, runner_options(a.ccl));
    std::printf("%s on the host model of %s (%u chips, no QEMU), ring %s\n", ccl::collective_name(r.op).c_str(),
                spec.name.c_str(), spec.num_chips, ring_text(run).c_str());
    const ccl::CaseResult res = ccl::run_case(run, machine, r, 1);
    print_result(r, res, spec.num_chips, false);
    return print_check(res.check, "  check: ");
}

int run_op(const RunArgs& a, const std::string& run_dir) {
    ccl::OpRequest r = request(a);
    knobs::check(knobs::Reader::kCcl);  // a bad WEFT_CCL_* is a usage error, before any cluster starts
    if (a.model) return run_on_model(a, r);
    if (!a.pull.empty() && (!a.mesh.empty() || tensor_asked(a.tensor)))
        throw UsageError("--pull pulls a cable under one op over the whole cluster: leave out --mesh and --layout");
    std::optional<Pull> pull;
    if (!a.pull.empty()) pull = parse_pull(a.pull);
    if (tensor_asked(a.tensor)) return run_tensor(a, r, run_dir);
    if (!a.mesh.empty() && (!a.record.empty() || !a.trace.empty()))
        throw UsageError("--record and --trace follow one op over the whole cluster: leave out --mesh");
    if (!a.record.empty() && a.ccl.transport == "edm")
        throw UsageError("--record logs what the fabric's routers send: use --transport fabric, not edm");
    if (!a.record.empty()) check_writable("--record", a.record);
    if (!a.trace.empty()) check_writable("--trace", a.trace);
    auto cluster = attach_or_start(run_dir, a.ccl.cluster, "ring8");
    ccl::RunnerOptions options = runner_options(a.ccl);
    place_in_place(a, r, cluster->board());
    if (!a.mesh.empty()) return run_on_meshes(a.mesh, r, *cluster, options);
    if (!a.record.empty()) {
        options.record_packets = transport::kDefaultRecordedPackets;
        options.transport = "fabric";  // auto could pick the EDM, which has no routers to log
    }
    const uint32_t n = static_cast<uint32_t>(cluster->size());
    check_root(r, n);
    if (pull) pull->end = resolve(PortWords{pull->name, ""}, cluster->board(), n);
    ccl::CollectiveRunner run(*cluster, options);
    std::printf("%s on %u chips, ring %s (stretch %.2f)\n", ccl::collective_name(r.op).c_str(), n,
                ring_text(run).c_str(), run.ring_stretch());
    std::unique_ptr<Trace> trace;
    if (!a.trace.empty()) trace = std::make_unique<Trace>(*cluster, a.trace);
    const ccl::CaseResult res =
        pull ? ccl::run_case(run, *cluster, r, 1,
                             [&] {
                                 std::this_thread::sleep_for(std::chrono::milliseconds(pull->after_ms));
                                 cluster->set_link(pull->end.chip, pull->end.port, false);
                                 std::printf("  pulled %s %u ms into the op (weft status: what the fabric did)\n",
                                             pull->name.c_str(), pull->after_ms);
                             })
             : ccl::run_case(run, *cluster, r, 1);
    if (trace) std::printf("  trace: %zu events in %s (open it in Perfetto)\n", trace->stop(), a.trace.c_str());
    print_result(r, res, n);
    if (!a.record.empty()) write_record(*cluster, run, r, a.record);
    return print_check(res.check, "  check: ");
}

}  // namespace

Command add_run(CLI::App& weft, Globals& g) {
    CLI::App* cmd = weft.add_subcommand("run", "run one collective op, check it against the host reference, time it");
    auto a = std::make_shared<RunArgs>();
    add_ccl_args(*cmd, a->ccl, false);
    add_size(*cmd, "--size", "S", a->size, {1, kMaxBytes},
             "the whole vector, or the whole gathered result; default 1M");
    add_word(
        *cmd, "--shape", "a,b,c,d", a->shape, [](const std::string& w) { parse_shape(w); },
        "all_gather of a 4-D tensor: each rank's shape, " + std::string(kShapeRange));
    a->dim_option =
        add_whole(*cmd, "--dim", "D", a->dim, {0, 3}, "the dimension --shape is gathered along; default 0");
    // 0 stands for "weft places it" in a request, and no board has DRAM there.
    const auto address = [](const std::string& w) {
        if (parse_address(w) == 0) throw Error("address 0 is in no chip's DRAM (leave the option out: weft places it)");
    };
    add_word(*cmd, "--send", "ADDR", a->send, address,
             "the input's address in every chip's DRAM (0x... or decimal); default: weft places it");
    add_word(*cmd, "--recv", "ADDR", a->recv, address, "the output's address, the same way; default: weft places it");
    cmd->add_flag("--in-place", a->in_place,
                  "the output over the input, as NCCL's in place (all_gather: each chip's input is its block of the "
                  "output); at --send or --recv, else at the bottom of DRAM");
    cmd->add_option("--trace", a->trace,
                    "a timeline of the op to this file: Chrome trace JSON, a track per chip and core (Perfetto)")
        ->option_text("FILE");
    cmd->add_option("--record", a->record,
                    "every packet the fabric's routers send over their cables (the op runs over the fabric), logged "
                    "by them, to this file as JSON (replay it with weft-fabric-model replay FILE)")
        ->option_text("FILE");
    cmd->add_option("--pull", a->pull,
                    "pull this cable MS ms into the op, as weft link CHIP.PORT down would: the fabric routes round "
                    "it live where it can, else the op fails naming why (on a running cluster the cable stays "
                    "pulled: weft link CHIP.PORT up plugs it back)")
        ->option_text("CHIP.PORT@MS");
    cmd->add_option("--mesh", a->mesh,
                    "run the op over one mesh's chips (its id, as weft routes shows them), or 'all': over every mesh "
                    "at once, each its own op (over the fabric, each mesh's own fabric)")
        ->option_text("M|all");
    add_word(*cmd, "--layout", "row|tile", a->tensor.layout, one_of({"row", "tile"}),
             "all_gather, sendrecv or all_reduce of a tensor (--shape: each chip's) in row-major or 32x32-tile "
             "pages: all_gather and sendrecv over the fabric, resharded in flight into --out-memory; all_reduce in "
             "place, through the flat all-reduce");
    cmd->add_option("--memory", a->tensor.memory,
                    "with --layout: the part interleaved over the DRAM banks, or sharded by height, width or block "
                    "over --shard-grid worker cores (default interleaved)")
        ->option_text("interleaved|height|width|block");
    cmd->add_option("--out-memory", a->tensor.out_memory, "with --layout: the gathered (received) tensor's memory (default --memory)")
        ->option_text("interleaved|height|width|block");
    cmd->add_option("--shard-grid", a->tensor.shard_grid, "with --layout: the worker cores shards go to (default 2x1)")
        ->option_text("XxY");
    cmd->add_option("--mesh-axis", a->tensor.mesh_axis,
                    "with --layout, on a 2D mesh: one all_gather per row (rows) or column (cols), all at once")
        ->option_text("rows|cols");
    cmd->add_flag("--model", a->model,
                  "run it on the host model of --cluster (default ring8): its chips in this process running the "
                  "firmware's own worker, EDM and router code built for the host, no QEMU; checked as on a "
                  "cluster, its time the host's");
    add_run_dir(*cmd, g.run_dir);
    cmd->footer(algorithms_help());
    return {cmd, [a, &g] { return run_op(*a, g.run_dir); }};
}

}  // namespace weft::cli
