// weft-fabric-model: the router firmware on modelled chips in virtual time.
// Each command builds a host-model fabric over a cluster file (as weft run
// plans it on QEMU), runs traffic through the real router code and prints
// what silicon-like chips and cables would take (costs.h).
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/error.h"
#include "common/sizes.h"
#include "driver/paths.h"
#include "fabric_model/grid_cluster.h"
#include "fabric_model/plan_traffic.h"
#include "fabric_model/look_commands.h"
#include "fabric_model/ranks.h"
#include "fabric_model/replay.h"
#include "fabric_model/scale_tables.h"
#include "fabric_model/traffic.h"

namespace {

using namespace weft;
using namespace weft::fabric_model;

struct Args {
    ModelOptions model;
    GridCluster grid;
    std::string shape = "4x4";
    std::string op, size = "1M", packet = "0", algo;
    uint32_t from = 0, to = 1;
    uint64_t seed = 1;
    uint32_t writes = 1000, failures = 0;
    uint32_t distance = 1;  // shift's
    Failures fail;
    std::vector<std::string> pull, plug;  // CHIP.PORT@NS
    StateRequest state;
    TraceRequest trace;
    PictureRequest picture;
    RunRequest run;
    uint32_t routes_of = 0;
    std::string log_file, log_out;
};

void add_model_options(CLI::App& app, Args& a) {
    app.add_option("--cluster", a.model.cluster, "a cluster file in clusters/ (ring8, galaxy, torus4x4, ...)")
        ->capture_default_str();
    app.add_option("--topology", a.model.fabric.topology, "the fabric: auto, line, ring, mesh or torus")
        ->capture_default_str();
    app.add_option("--packet-bytes", a.model.fabric.packet_bytes,
                   "payload bytes per packet (0: the largest that fits)");
    app.add_option("--slots", a.model.fabric.slots, "slots per router channel (0: the cluster file's)")
        ->capture_default_str();
    app.add_flag_callback(
        "--no-dateline", [&a] { a.model.fabric.flags |= abi::kFabricNoDateline; },
        "debug: packets never move to VC 1 past a ring's dateline (a ring can deadlock)");
    app.add_flag("--bubble", a.model.fabric.bubble,
                 "bubble flow control on a ring, a line or a torus instead of the dateline VC (the cluster file's "
                 "flow_control)");
    Costs& c = a.model.costs;
    app.add_option("--cable-gbps", c.cable_gbps, "a cable's rate each way, GB/s")->capture_default_str();
    app.add_option("--cable-latency-ns", c.cable_latency_ns, "a cable's latency")->capture_default_str();
    app.add_option("--noc-gbps", c.noc_gbps, "a core's NoC rate, GB/s")->capture_default_str();
    app.add_option("--router-packet-ns", c.router_packet_ns, "a router's work per packet")->capture_default_str();
}

// A grid of meshes (grid_cluster.h), as cluster and tables take it.
void add_grid_options(CLI::App& app, Args& a) {
    app.add_option("--meshes", a.grid.meshes)->capture_default_str();
    app.add_option("--shape", a.shape, "each mesh's chips, WxH")->capture_default_str();
    app.add_option("--cables", a.grid.cables, "between neighbouring meshes")->capture_default_str();
    app.add_flag("--systems", a.grid.systems,
                 "cluster: add a systems: section (each mesh a system, the grid a mesh_2d_no_wrap of them)");
}

// run, latency, stream and random: a grid of meshes in place of --cluster,
// made in memory, so it may hold more chips than a cluster file.
void add_model_grid_options(CLI::App& app, Args& a) {
    CLI::Option* meshes = app.add_option("--meshes", a.grid.meshes,
                                         "in place of --cluster: a grid of this many meshes (no file, any size)");
    app.add_option("--shape", a.shape, "with --meshes: each mesh's chips, WxH")->capture_default_str();
    app.add_option("--cables", a.grid.cables, "with --meshes: cables between neighbouring meshes")
        ->capture_default_str();
    app.add_flag("--systems", a.grid.systems,
                 "with --meshes: each mesh a system, the grid a mesh_2d_no_wrap of them (--algo hierarchical)");
    meshes->excludes(app.get_option("--cluster"));
}

// "8x4": 8 chips wide, 4 high (each side at most 65535, as a chip id holds).
void parse_shape(const std::string& text, GridCluster& g) {
    const auto side = [&](const std::string& digits) {
        if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(digits) > 65535)
            throw Error("'" + text + "' is not a mesh shape (example: 16x16; each side at most 65535)");
        return uint32_t(std::stoul(digits));
    };
    const size_t x = text.find('x');
    if (x == std::string::npos) side("");
    g.width = side(text.substr(0, x));
    g.height = side(text.substr(x + 1));
}

// A size that a 32-bit field holds (a packet's payload).
uint32_t parse_size32(const std::string& text, const char* what) {
    const uint64_t n = parse_size(text);
    if (n > UINT32_MAX) throw Error(std::string(what) + " of " + text + " does not fit a packet");
    return uint32_t(n);
}

// The costs are virtual nanoseconds in 64 bits: a rate too small or a delay
// too large would overflow them, and NaN compares false with every bound.
void check_costs(const Costs& c) {
    for (const auto& [rate, name] : {std::pair{c.cable_gbps, "--cable-gbps"}, std::pair{c.noc_gbps, "--noc-gbps"}})
        if (!(rate >= 1e-3 && rate <= 1e4))
            throw Error(std::string(name) + " must be a rate from 0.001 to 10000 GB/s, not " + std::to_string(rate));
    for (const auto& [ns, name] :
         {std::pair{c.cable_latency_ns, "--cable-latency-ns"}, std::pair{c.router_packet_ns, "--router-packet-ns"}})
        if (ns > 1'000'000'000)
            throw Error(std::string(name) + " must be at most 1 s (1000000000 ns), not " + std::to_string(ns));
}

const char* const kTopologies[] = {"auto", "line", "ring", "mesh", "torus"};

void check_topology(const std::string& t) {
    for (const char* known : kTopologies)
        if (t == known) return;
    throw Error("unknown --topology '" + t + "' (auto, line, ring, mesh or torus)");
}

// On a terminal, a line that rewrites itself: how far the stage is.
void show_progress(const std::string& stage, uint64_t done, uint64_t total) {
    if (!isatty(2)) return;
    fprintf(stderr, "\r%s: %llu of %llu   %s", stage.c_str(), (unsigned long long)done, (unsigned long long)total,
            done == total ? "\n" : "");
}

void print_tables(const TablesReport& r) {
    printf("%u chips in %u meshes (%u kinds): %llu table entries, %.1f MB of tables, longest route %u hops\n", r.chips,
           r.meshes, r.mesh_kinds, (unsigned long long)r.entries, double(r.table_bytes) / 1e6, r.longest_route);
    printf("  built in %.1f s, checked in %.1f s, peak memory %.0f MB\n", r.seconds_build, r.seconds_check,
           r.peak_rss_mb);
    printf("  deadlock-free: %s%s\n", r.acyclic ? "yes" : "no, ", r.acyclic ? "" : r.cycle.c_str());
    if (!r.beyond_abi.empty()) printf("  beyond what a router's table holds today: %s\n", r.beyond_abi.c_str());
}

// Traffic for the commands that run some: an op and its size.
void add_traffic_options(CLI::App& app, Args& a) {
    app.add_option("--size", a.size, "the op's size (nccl-tests' count): 4096, 64K, 1M")->capture_default_str();
    app.add_option("--algo", a.algo,
                   "run the op's own plan, lowered as weft run lowers it: " + planned_algorithms() +
                       " (without it all_gather, reduce_scatter and all_reduce run as their ring's packets)");
    app.add_option("--distance", a.distance, "shift: how many chips on along the ring order")->capture_default_str();
}

void add_fail_option(CLI::App& app, Args& a) {
    app.add_option("--fail", a.fail,
                   "this cable is out from the start, the fabric planned without it: CHIP.PORT, as 5.E (repeatable)")
        ->allow_extra_args(false);
}

// Disruptors: "5.E@2000" as the cable at 5.E pulled (or plugged back in) at
// 2000 ns of virtual time.
std::vector<CableEvent> cable_events(const Args& a) {
    std::vector<CableEvent> events;
    for (const auto* list : {&a.pull, &a.plug})
        for (const std::string& text : *list) {
            const char* flag = list == &a.pull ? "--pull" : "--plug";
            const size_t at = text.find('@');
            const std::string ns = at == std::string::npos ? "" : text.substr(at + 1);
            if (at == 0 || ns.empty() || ns.find_first_not_of("0123456789") != std::string::npos || ns.size() > 15)
                throw Error(std::string(flag) + " " + text + ": give CHIP.PORT@NS, the cable and the virtual time " +
                            "in ns from the start of the traffic (as 5.E@2000)");
            events.push_back({text.substr(0, at), std::stoull(ns), list == &a.plug});
        }
    return events;
}

Traffic traffic_of(const Args& a) { return {a.op, parse_size(a.size), a.distance, a.algo}; }

void print_op(const OpTime& t, const Costs& costs) {
    if (t.op == "shift") {
        printf("shift on %u chips, %llu bytes: %.3f us virtual, %.2f GB/s in all\n", t.chips,
               (unsigned long long)t.bytes, double(t.ns) / 1e3, t.algbw());
        printf("  %llu events\n", (unsigned long long)t.events);
        for (const std::string& d : t.disruptions) printf("  %s\n", d.c_str());
        return;
    }
    printf("%s%s on %u chips, %llu bytes: %.3f us virtual, algbw %.2f GB/s, busbw %.2f GB/s (%.2f of a cable)\n",
           t.op.c_str(), t.algo.empty() ? "" : ("/" + t.algo).c_str(), t.chips, (unsigned long long)t.bytes,
           double(t.ns) / 1e3, t.algbw(), t.busbw(), t.busbw() / costs.cable_gbps);
    printf("  %llu events\n", (unsigned long long)t.events);
    for (const std::string& d : t.disruptions) printf("  %s\n", d.c_str());
    if (!t.checked.empty()) printf("  check: %s\n", t.checked.c_str());
}

}  // namespace

// On ranks, what the largest rank held: a rank keeps only its own chips'
// routers, so more ranks (or hosts) take a model that one host cannot.
void say_rank_memory(Ranks& ranks) {
    if (ranks.size() == 1) return;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const uint64_t largest = ranks.max(uint64_t(usage.ru_maxrss));  // KiB on Linux
    fprintf(stderr, "weft-fabric-model: %u ranks, the largest peaked at %.0f MB resident\n", ranks.size(),
            double(largest) / 1024);
}

int main(int argc, char** argv) {
    CLI::App app{"weft-fabric-model: the fabric router's own code on modelled chips, in virtual time"};
    app.require_subcommand(1);
    Args a;

    CLI::App* run = app.add_subcommand("run", "a collective's time, algbw and busbw in virtual time");
    run->add_option("op", a.op, "any op weft run takes (all_gather, broadcast, ...), or shift (every chip to one further on)")
        ->required();
    add_traffic_options(*run, a);
    CLI::Option* occupancy = run->add_option("--occupancy", a.run.occupancy_png,
                                             "write a heat map of packets held per router over time (PNG)");
    run->add_option("--every-ns", a.run.every_ns, "with --occupancy: virtual time between its samples")
        ->capture_default_str()
        ->needs(occupancy);
    run->add_option("--picture", a.run.picture,
                    "draw the cluster (.svg, .png, .pdf) and, if the fabric deadlocks, its cycle of waits");
    add_fail_option(*run, a);
    run->add_option("--pull", a.pull,
                    "CHIP.PORT@NS: this cable fails at NS of virtual time, under the traffic; the control plane "
                    "reroutes round it as on a QEMU cluster (repeatable)");
    run->add_option("--plug", a.plug, "CHIP.PORT@NS: a pulled cable is plugged back in at NS (repeatable)");
    add_model_options(*run, a);
    add_model_grid_options(*run, a);

    CLI::App* state = app.add_subcommand("state", "print the fabric's state as JSON: chips, cables, routers, tables");
    state->add_flag("--tables", a.state.tables, "each chip's L0 and L1 routes (chips x chips of them)");
    CLI::Option* state_op =
        state->add_option("--op", a.op, "run this traffic first (as run's op) and print the state at --at-ns");
    add_traffic_options(*state, a);
    state->add_option("--at-ns", a.state.at_ns, "with --op: the virtual time to print the state at (or the deadlock)")
        ->capture_default_str();
    for (const char* traffic_option : {"--size", "--algo", "--distance", "--at-ns"})
        state->get_option(traffic_option)->needs(state_op);  // without traffic they would say nothing
    add_fail_option(*state, a);
    add_model_options(*state, a);

    CLI::App* trace = app.add_subcommand("trace", "record every packet's hops of a run as JSON");
    trace->add_option("op", a.op, "as run's op")->required();
    add_traffic_options(*trace, a);
    trace->add_option("--out", a.trace.out, "the record's JSON file")->required();
    trace->add_option("--max-packets", a.trace.max_packets, "record at most this many packets")->capture_default_str();
    add_fail_option(*trace, a);
    add_model_options(*trace, a);

    CLI::App* picture = app.add_subcommand("picture", "draw the cluster (and one chip's routes) with Graphviz, as SVG");
    picture->add_option("--out", a.picture.out_dir, "the directory to write cluster.svg and its .dot into")->required();
    CLI::Option* routes_of = picture->add_option("--routes-of", a.routes_of, "also draw this chip's routes");
    add_fail_option(*picture, a);
    add_model_options(*picture, a);

    CLI::App* latency = app.add_subcommand("latency", "one packet's latency from chip to chip");
    latency->add_option("--from", a.from)->capture_default_str();
    latency->add_option("--to", a.to)->capture_default_str();
    latency->add_option("--bytes", a.packet, "its payload")->capture_default_str();
    add_model_options(*latency, a);
    add_model_grid_options(*latency, a);

    CLI::App* stream_cmd = app.add_subcommand("stream", "one worker's stream of packets: rate and packets/s");
    stream_cmd->add_option("--from", a.from)->capture_default_str();
    stream_cmd->add_option("--to", a.to)->capture_default_str();
    stream_cmd->add_option("--size", a.size, "bytes in all")->capture_default_str();
    stream_cmd->add_option("--bytes", a.packet, "payload per packet (0: the largest)")->capture_default_str();
    add_model_options(*stream_cmd, a);
    add_model_grid_options(*stream_cmd, a);

    CLI::App* cluster = app.add_subcommand("cluster", "print a cluster file: a grid of meshes joined by cables");
    add_grid_options(*cluster, a);

    CLI::App* random = app.add_subcommand("random", "random writes, cables failing under them; every byte checked");
    random->add_option("--seed", a.seed, "the same seed gives the same run")->capture_default_str();
    random->add_option("--writes", a.writes)->capture_default_str();
    random->add_option("--fail", a.failures, "cables to fail while it runs")->capture_default_str();
    add_model_options(*random, a);
    add_model_grid_options(*random, a);

    CLI::App* replay = app.add_subcommand(
        "replay", "replay a packet log of weft run --record: does every packet cross the same cables in the model?");
    replay->add_option("log", a.log_file, "the log (JSON, weft-packet-log/1)")->required();
    replay->add_option("--out", a.log_out, "write the model's own packet log here");
    add_model_options(*replay, a);

    CLI::App* tables = app.add_subcommand("tables", "build every chip's routing tables and check them for deadlock");
    add_grid_options(*tables, a);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // Help and version are successes; any other misuse exits 2, as weft's own.
        return app.exit(e) == 0 ? 0 : 2;
    }
    try {
        // Under mpirun the ranks share the chips and rank 0 alone speaks: every
        // rank reaches the same results (errors included).
        Ranks& ranks = world();
        a.model.ranks = &ranks;
        if (ranks.rank() != 0) {
            if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr))
                throw Error("rank " + std::to_string(ranks.rank()) + " cannot quiet its output");
        } else if (ranks.size() > 1) {
            fprintf(stderr, "weft-fabric-model: %u ranks\n", ranks.size());
        }
        for (CLI::App* command : {run, latency, stream_cmd, random})
            if (*command && command->count("--meshes")) {
                parse_shape(a.shape, a.grid);
                a.model.grid = a.grid;
                a.model.cluster = "grid" + std::to_string(a.grid.meshes) + "x" + a.shape;
            }
        const Costs& c = a.model.costs;
        check_costs(c);
        check_topology(a.model.fabric.topology);
        if (*cluster) {
            parse_shape(a.shape, a.grid);
            fputs(grid_cluster_yaml(a.grid).c_str(), stdout);
        } else if (*tables) {
            parse_shape(a.shape, a.grid);
            check_grid(a.grid);
            const BoardInfo board = paths::load_built_board(a.grid.board);
            const TablesReport r =
                build_and_check_tables(grid_of_meshes(a.grid.meshes, a.grid.width, a.grid.height, board, a.grid.cables),
                                       board, show_progress);
            print_tables(r);
            if (!r.acyclic) return 1;
        } else if (*replay) {
            return replay_command(a.model, replay->count("--cluster") > 0, a.log_file, a.log_out);
        } else if (*random) {
            const RandomRun r = random_traffic(a.model, a.seed, a.writes, a.failures);
            for (const std::string& f : r.failed) printf("failed %s\n", f.c_str());
            printf("%llu random writes (seed %llu) arrived once each, every byte right: %.3f us virtual, %llu events\n",
                   (unsigned long long)r.writes, (unsigned long long)a.seed, double(r.ns) / 1e3,
                   (unsigned long long)r.events);
        } else if (*run) {
            a.run.traffic = traffic_of(a), a.run.fail = a.fail;
            a.model.cable_events = cable_events(a);
            print_op(run_command(a.model, a.run), a.model.costs);
        } else if (*state) {
            if (!a.op.empty()) a.state.traffic = traffic_of(a);
            a.state.fail = a.fail;
            state_command(a.model, a.state);
        } else if (*trace) {
            a.trace.traffic = traffic_of(a), a.trace.fail = a.fail;
            trace_command(a.model, a.trace);
        } else if (*picture) {
            if (*routes_of) a.picture.routes_of = a.routes_of;
            a.picture.fail = a.fail;
            picture_command(a.model, a.picture);
        } else if (*latency) {
            const Latency l = packet_latency(a.model, a.from, a.to, parse_size32(a.packet, "--bytes"));
            printf("chip %u -> chip %u, %u hops, %s bytes: %.3f us virtual (%.0f ns a hop)\n", a.from, a.to, l.hops,
                   a.packet.c_str(), double(l.ns) / 1e3, l.hops ? double(l.ns) / l.hops : 0.0);
        } else if (*stream_cmd) {
            const Stream s = stream(a.model, a.from, a.to, parse_size(a.size), parse_size32(a.packet, "--bytes"));
            printf("chip %u -> chip %u: %llu bytes in %llu packets, %.3f us virtual: %.2f GB/s (%.2f of a cable), "
                   "%.2f M packets/s\n",
                   a.from, a.to, (unsigned long long)s.bytes, (unsigned long long)s.packets, double(s.ns) / 1e3,
                   s.gbps(), s.gbps() / c.cable_gbps, s.mpps());
        }
        say_rank_memory(ranks);
    } catch (const std::exception& e) {
        fprintf(stderr, "weft-fabric-model: %s\n", e.what());
        return 1;
    }
    return 0;
}
