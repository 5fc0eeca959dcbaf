// The fabric model's bench: what the router firmware reaches on silicon-like
// chips (virtual time) beside tt-metal's Wormhole figures, whether a cable or
// a router is the bottleneck (halving the cable's rate must double a large
// stream's time), the model's own speed (events per second of
// host time, per core: it runs on one), the tables at 262,144 chips, and the
// model beside the QEMU cluster running the same all-gather on cables shaped
// alike (how far the emulator's time is from the model's). 1D against 2D is
// not here: the model runs the ring algorithm alone, whose steps are one
// cable on either fabric.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>

#include "busbw.h"
#include "ccl/runner.h"
#include "common/error.h"
#include "common/knobs.h"
#include "driver/cluster.h"
#include "driver/paths.h"
#include "fabric_model/grid_cluster.h"
#include "fabric_model/scale_tables.h"
#include "fabric_model/traffic.h"
#include "mpi_reference.h"
#include "reroute_check.h"
#include "start.h"
#include "timing.h"

namespace {

using namespace weft;
using namespace weft::fabric_model;
using weft::bench::seconds_since;

void progress(const std::string& what) { std::fprintf(stderr, "\r  model bench: %-60s", what.c_str()); }

ModelOptions on(const std::string& cluster) {
    ModelOptions o;
    o.cluster = cluster;
    return o;
}

std::string silicon_table() {
    progress("hop latency and streams on ring8");
    const ModelOptions ring8 = on("ring8");
    const double hop = double(packet_latency(ring8, 0, 4, 0).ns - packet_latency(ring8, 0, 3, 0).ns);
    const double hop4k = double(packet_latency(ring8, 0, 4, 4096).ns - packet_latency(ring8, 0, 3, 4096).ns);
    const Stream small = stream(ring8, 0, 1, 1 << 20, 64);
    ModelOptions big = ring8;
    big.fabric.packet_bytes = 4096;
    const Stream large = stream(big, 0, 1, 16 << 20, 4096);
    big.costs.cable_gbps /= 2;
    const Stream half = stream(big, 0, 1, 16 << 20, 4096);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nThe router firmware in virtual time (default costs) beside tt-metal on Wormhole\n\n"
      << "| measure | model | tt-metal |\n|---|---|---|\n"
      << "| hop latency, empty packet | " << hop / 1e3 << " us | ~0.76 us |\n"
      << "| hop latency, 4 KiB packet | " << hop4k / 1e3 << " us | ~1.3 us |\n"
      << "| one direction, 64 B packets | " << small.mpps() << " M packets/s | 2.12 M packets/s |\n"
      << "| one stream, 4 KiB packets | " << large.gbps() / Costs{}.cable_gbps << " of the cable | |\n"
      << "| the same at half the cable's rate: time | " << double(half.ns) / double(large.ns) << "x ("
      << (double(half.ns) / double(large.ns) > 1.8 ? "the cable is" : "the router, not the cable, is")
      << " the bottleneck) | |\n";
    return t.str();
}

// Bubble flow control against the dateline VC on ring8's 1D fabric and
// torus4x4's 2D one (virtual time): the ring collectives at 16 MiB (on the
// torus round its snake, turning at every row's end) with the default
// buffering and with two slots a VC, where a packet entering a ring under
// bubble flow control waits for two free slots in the next receiver. Both
// carry traffic in the same L1: bubble's one VC has the slots of the
// dateline's two (a ring's dateline fabric has a third, VC 2, for a dead
// cable's packets alone).
std::string flow_control_table(bool quick) {
    const uint64_t bytes = quick ? (1u << 20) : (16u << 20);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "\nFlow control (virtual time, " << (bytes >> 20)
      << " MiB): busbw as a fraction of a cable under the dateline VC and under bubble flow control\n\n"
      << "| fabric | op | slots a VC | dateline | bubble | bubble / dateline |\n|---|---|---|---|---|---|\n";
    for (const char* cluster : {"ring8", "torus4x4"})
        for (const char* op : {"all_gather", "all_reduce"})
            for (uint32_t slots : {0u, 2u}) {
                double busbw[2] = {0, 0};
                for (int bubble = 0; bubble < 2; ++bubble) {
                    progress(std::string("flow control: ") + cluster + " " + op + (bubble ? ", bubble" : ", dateline"));
                    ModelOptions o = on(cluster);
                    if (std::string(cluster) == "ring8") o.fabric.topology = "ring";
                    o.fabric.slots = slots;
                    o.fabric.bubble = bubble;
                    busbw[bubble] = ring_collective(o, op, bytes).busbw() / Costs{}.cable_gbps;
                }
                t << "| " << cluster << (std::string(cluster) == "ring8" ? " (1D)" : " (2D)") << " | " << op << " | "
                  << (slots ? std::to_string(slots) : std::string("default (8)")) << " | " << busbw[0] << " | "
                  << busbw[1] << " | " << busbw[1] / busbw[0] << "x |\n";
            }
    t << "\nSlots are a VC's: under bubble flow control the one VC has both dateline VCs' slots, in the same L1 (a "
         "torus's dateline fabric holds VC 2's too, its escape VC, idle until a cable dies).\n";
    return t.str();
}

// One case of the model's own speed: its traffic, what it took and the
// peak memory of the process that ran it alone.
struct SpeedCase {
    std::string name;
    ModelOptions options;
    std::string op;
    uint64_t bytes;
};
struct SpeedResult {
    uint32_t chips = 0;
    uint64_t events = 0, ns = 0;
    double build_seconds = 0, run_seconds = 0, peak_mb = 0;
};

// Each case runs in a child process of its own, so its peak memory
// (wait4's maxrss) is its own, not the largest case's before it.
SpeedResult run_alone(const SpeedCase& c) {
    int fds[2];
    if (pipe(fds) != 0) throw Error("cannot make a pipe for a bench case");
    const pid_t pid = fork();
    if (pid < 0) throw Error("cannot fork for a bench case");
    if (pid == 0) {
        close(fds[0]);
        SpeedResult r;
        int code = 0;
        try {
            const auto t0 = std::chrono::steady_clock::now();
            Simulation sim(c.options);
            r.build_seconds = seconds_since(t0);
            const auto t1 = std::chrono::steady_clock::now();
            const OpTime op = c.op == "shift" ? ring_shift(sim, 1, c.bytes) : ring_collective(sim, c.op, c.bytes);
            r.run_seconds = seconds_since(t1);
            r.chips = op.chips, r.events = op.events, r.ns = op.ns;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "\nweft-bench-model: %s: %s\n", c.name.c_str(), e.what());
            code = 1;
        }
        const bool sent = write(fds[1], &r, sizeof r) == ssize_t(sizeof r);
        _exit(sent ? code : 1);
    }
    close(fds[1]);
    SpeedResult r;
    const bool got = read(fds[0], &r, sizeof r) == ssize_t(sizeof r);
    close(fds[0]);
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error("the bench case " + c.name + " failed");
    r.peak_mb = double(usage.ru_maxrss) / 1024;  // Linux: KiB
    return r;
}

SpeedCase speed_case(const std::string& name, const std::string& cluster, std::optional<GridCluster> grid,
                     const std::string& op, uint64_t bytes, uint32_t packet) {
    SpeedCase c{name, on(cluster), op, bytes};
    c.options.grid = grid;
    c.options.fabric.packet_bytes = packet;
    return c;
}

// Host time per event of the model: the all-gather on ring8, galaxy and 16
// meshes of 8x8, and traffic linear in the chips (shift: every chip writes
// 16 KiB to the next in the ring order) on 1,024 and 16,384 chips, and 4
// bytes each on 65,536 and 131,072 where the host has the memory.
std::string speed_table(bool quick) {
    std::vector<SpeedCase> cases = {speed_case("ring8", "ring8", {}, "all_gather", 16 << 20, 0),
                                    speed_case("galaxy (32)", "galaxy", {}, "all_gather", 16 << 20, 0)};
    if (!quick) {
        const GridCluster k1{16, 8, 8, 2}, k16{256, 8, 8, 2};
        cases.push_back(speed_case("16 meshes of 8x8", "grid16x8x8", k1, "all_gather", 64 << 10, 1024));
        cases.push_back(speed_case("16 meshes of 8x8", "grid16x8x8", k1, "shift", uint64_t(16 << 10) * 1024, 1024));
        cases.push_back(speed_case("256 meshes of 8x8", "grid256x8x8", k16, "shift", uint64_t(16 << 10) * 16384, 1024));
        // 1024 meshes, all the tables hold, at ~115 KB a chip: 65,536 chips
        // take about 7.5 GB and 131,072 (meshes of 16x8, routes past a
        // header's 17 hops) about 15 GB, each only on a host with a margin
        // over that (this 24 GB one has both).
        const double host_bytes = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
        if (host_bytes >= 12e9)
            cases.push_back(speed_case("1024 meshes of 8x8", "grid1024x8x8", GridCluster{1024, 8, 8, 2}, "shift",
                                       uint64_t(4) * 65536, 1024));
        if (host_bytes >= 20e9)
            cases.push_back(speed_case("1024 meshes of 16x8", "grid1024x16x8", GridCluster{1024, 16, 8, 2}, "shift",
                                       uint64_t(4) * 131072, 1024));
    }
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nThe model's own speed, one host core (the record for parallel network models is ~0.15-0.3 M "
         "events/s per core): events per second of the run, after building the fabric; peak MB of the process "
         "that built and ran it alone\n\n| cluster | chips | traffic | events | build s | run s | M events/s | "
         "peak MB | virtual us |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const SpeedCase& c : cases) {
        progress(c.op + " on " + c.name);
        const SpeedResult r = run_alone(c);
        t << "| " << c.name << " | " << r.chips << " | " << c.op << " " << c.bytes / 1024 << " KiB | " << r.events
          << " | " << r.build_seconds << " | " << r.run_seconds << " | " << double(r.events) / r.run_seconds / 1e6
          << " | " << std::setprecision(0) << r.peak_mb << std::setprecision(2) << " | " << double(r.ns) / 1e3
          << " |\n";
    }
    return t.str();
}

std::string tables_table() {
    progress("tables for 1024 meshes of 16x16");
    const BoardInfo board = paths::load_built_board("qemu-virt");
    const TablesReport r = build_and_check_tables(grid_of_meshes(1024, 16, 16, board), board);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(1);
    t << "\nTables for 1024 meshes of 16x16 (" << r.chips << " chips), built and checked for deadlock on one core\n\n"
      << "| entries | build s | check s | peak MB | deadlock-free |\n|---|---|---|---|---|\n| " << r.entries << " | "
      << r.seconds_build << " | " << r.seconds_check << " | " << r.peak_rss_mb << " | " << (r.acyclic ? "yes" : "NO")
      << " |\n";
    return t.str();
}

// The model as MPI ranks: the same all-gather on 256 chips (4 meshes of 8x8)
// on 1 and 2 ranks of this host, its result identical, its host time.
std::string ranks_table() {
    if (bench::find_mpirun().empty()) return "\n(no mpirun: the model's MPI ranks not measured)\n";
    progress("all_gather on 256 chips, 1 and 2 MPI ranks");
    const GridClusterFile grid({4, 8, 8, 2});
    const std::vector<std::string> model = {paths::build_root() + "/bin/weft-fabric-model",
                                            "run",
                                            "all_gather",
                                            "--cluster",
                                            grid.path(),
                                            "--size",
                                            "256K",
                                            "--packet-bytes",
                                            "1024"};
    constexpr int kTimeout = 600;
    auto timed = [&](int ranks) {
        const auto t0 = std::chrono::steady_clock::now();
        bench::MpirunOutput run;
        std::string why;
        if (!bench::run_mpirun(model, ranks, kTimeout, false, &run, &why)) throw Error(why);
        if (!run.ok())
            throw Error("the model on " + std::to_string(ranks) + " ranks: " + bench::mpirun_failure(run, kTimeout));
        return std::pair{run.out, seconds_since(t0)};
    };
    const auto one = timed(1), two = timed(2);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nThe model on MPI ranks: all_gather on 256 chips (4 meshes of 8x8), mpirun on this host\n\n"
      << "| ranks | host s | speed-up | result |\n|---|---|---|---|\n| 1 | " << one.second << " | 1.00x | |\n| 2 | "
      << two.second << " | " << one.second / two.second << "x | "
      << (one.first == two.first ? "the same as one rank" : "DIFFERS from one rank") << " |\n";
    return t.str();
}

// What the largest rank holds as the ranks grow: a rank keeps only its own
// chips' routers. A shift of 4 bytes a chip on 16,384 chips (256 meshes of
// 8x8), 1, 2 and 4 ranks of this host; the model prints the largest rank's
// peak (1 rank: measured alone, as speed_table does).
std::string rank_memory_table() {
    if (bench::find_mpirun().empty()) return "";
    const std::vector<std::string> model = {paths::build_root() + "/bin/weft-fabric-model",
                                            "run",
                                            "shift",
                                            "--meshes",
                                            "256",
                                            "--shape",
                                            "8x8",
                                            "--size",
                                            "64K",
                                            "--packet-bytes",
                                            "1024"};
    std::ostringstream t;
    t << "\nMemory a rank holds: shift of 4 bytes a chip on 16384 chips (256 meshes of 8x8), peak resident MB "
         "of the largest rank\n\n| ranks | largest rank MB | of one rank's |\n|---|---|---|\n";
    const double one = run_alone(speed_case("256 meshes of 8x8", "grid256x8x8", GridCluster{256, 8, 8, 2}, "shift",
                                            uint64_t(4) * 16384, 1024))
                           .peak_mb;
    t << "| 1 | " << std::lround(one) << " | 1.00 |\n";
    for (int ranks : {2, 4}) {
        progress("shift on 16384 chips, " + std::to_string(ranks) + " MPI ranks: memory");
        bench::MpirunOutput run;
        std::string why;
        if (!bench::run_mpirun(model, ranks, 600, false, &run, &why)) throw Error(why);
        if (!run.ok())
            throw Error("the model on " + std::to_string(ranks) + " ranks: " + bench::mpirun_failure(run, 600));
        const size_t at = run.err.find("peaked at ");
        if (at == std::string::npos) throw Error("the model on ranks printed no peak: " + run.err);
        const double mb = std::stod(run.err.substr(at + 10));
        t << "| " << ranks << " | " << std::lround(mb) << " | " << std::fixed << std::setprecision(2) << mb / one
          << " |\n";
    }
    return t.str();
}

// The same ring all-gather on the QEMU torus4x4 (fabric transport) and in
// the model, every cable shaped to one rate in both.
std::string emulator_table(uint64_t bytes) {
    constexpr double kRate = 0.004;  // GB/s: where the QEMU host keeps up (weft-bench-fabric)
    progress("all_gather on the QEMU torus4x4, cables shaped");
    double qemu_busbw;
    {
        auto c = Cluster::start(paths::cluster_file("torus4x4"), "/tmp/weft-bench-model-" + std::to_string(getpid()));
        for (const LinkInfo& l : c->links())
            c->set_fault(l.chip_a, l.port_a, {{"bandwidth_gbps", kRate}, {"latency_us", 0}});
        ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
        o.transport = "fabric";
        ccl::CollectiveRunner run(*c, o);
        qemu_busbw = bench::best_busbw(run, *c, bytes, "ring");
    }
    progress("all_gather in the model, cables shaped");
    ModelOptions o = on("torus4x4");
    o.costs.cable_gbps = kRate;
    const OpTime op = ring_collective(o, "all_gather", bytes);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "\nall_gather (ring) of " << (bytes >> 20) << " MiB on torus4x4, every cable at " << kRate
      << " GB/s: the QEMU cluster beside the model\n\n| | busbw / cable |\n|---|---|\n| QEMU cluster (fabric) | "
      << qemu_busbw / kRate << " |\n| model | " << op.busbw() / kRate << " |\n| model / QEMU | "
      << op.busbw() / qemu_busbw << "x |\n";
    return t.str();
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-model\n"
    "The fabric model: the router in virtual time beside tt-metal's figures,\n"
    "250k-device tables, its own speed, MPI ranks, and the QEMU cluster beside\n"
    "it. WEFT_BENCH_QUICK=1: the short cases only.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage);
    try {
        const bool quick = knobs::flag(knobs::knob("WEFT_BENCH_QUICK"));
        std::printf("weft fabric model bench (host: %ld cores; the model runs on one)\n",
                    sysconf(_SC_NPROCESSORS_ONLN));
        std::printf("%s", silicon_table().c_str());
        if (!quick) std::printf("%s", tables_table().c_str());  // early: its peak memory is its own
        if (!quick) std::printf("%s", bench::reroute_check_table(progress).c_str());
        std::printf("%s", flow_control_table(quick).c_str());
        std::printf("%s", speed_table(quick).c_str());
        std::printf("%s", ranks_table().c_str());
        if (!quick) std::printf("%s", rank_memory_table().c_str());
        std::printf("%s", emulator_table(1 << 20).c_str());
        std::fprintf(stderr, "\r%80s\r", "");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\nweft-bench-model: %s\n", e.what());
        return 1;
    }
}
