// make bench: the fabric beside the EDM on ring8, every number from this one run.
//   - one cable (chip 0 -> chip 1): 16 KiB packets from 1 and 4 workers, as a
//     fraction of the EDM's throughput on the same cable (1 and 4 channels)
//     and of the raw link, unshaped and with the cable shaped to 0.25 GB/s
//   - one packet through 1, 3 and 7 hops and back: latency and doorbells per hop
//   - all-gather 1-64 MiB over the fabric and over the EDM: busbw side by side (and a chart)
//   - torus4x4: the snake ring against 2d (unshaped and shaped) and swing (shaped), hop
//     latency through 1-6 hops, and every all-reduce shaped from 1 KiB to 16 MiB against the ring
//     (over the EDM, then over the fabric)
//   - ring8x2: the ring all-reduce over one plane and over both, EDM and fabric, shaped
//   - a stream across a cable pulled under it, before, rerouted and after: ring8x2 over the
//     fallback relays, torus4x4 by detours on its escape VC
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "busbw.h"
#include "ccl/op_case.h"
#include "common/error.h"
#include "common/gnuplot.h"
#include "common/knobs.h"
#include "common/plot.h"
#include "driver/cluster.h"
#include "driver/paths.h"
#include "edm_bench.h"
#include "link_rate.h"
#include "reroute_bench.h"
#include "shaped_planes.h"
#include "shaping.h"
#include "start.h"
#include "test_kernels.h"
#include "transport/fabric/fabric.h"
#include "transport/fabric/routing2d.h"
#include "transport/l1_allocator.h"

using namespace weft;
using transport::FabricDirection;

namespace {

constexpr uint32_t kEast = 1;
constexpr uint32_t kPayload = 16384;
constexpr uint64_t kCableBytes = 32ull << 20;

FabricSpec fabric_options() {
    FabricSpec o;
    o.packet_bytes = kPayload;
    o.slots = 16;
    return o;
}

// GB/s of `workers` workers on chip 0 writing kCableBytes to chip 1 between
// them, 16 KiB packets: timed by a kernel on chip 1 waiting for the last one.
double fabric_cable_gbps(Cluster& c, transport::Fabric& fabric, uint32_t workers) {
    const BoardInfo& b = c.board();
    transport::L1Allocator l1(b);
    const uint64_t sem = b.dram.base + 0x1000'0000, per = kCableBytes / workers;
    c.chip(1).write32(sem, 0);
    std::vector<Launch> launches = {test::wait_sem(b, 1, 4, sem, workers)};
    std::vector<test_abi::FabricTrafficArgs> args(workers);
    for (uint32_t w = 0; w < workers; ++w) {
        test_abi::FabricTrafficArgs& a = args[w];
        a = test_abi::FabricTrafficArgs{};
        a.connection[0] = fabric.builder().connect(c, l1, 0, FabricDirection::kForward, w, 4 + w);
        a.job_count = 1;
        test_abi::FabricTrafficJob& j = a.jobs[0];
        j.command = abi::kFabricWriteInc;
        j.hops = 1;
        j.count = 1;
        j.ttl = abi::kFabricDefaultTtl;
        j.dst_chip = 1;
        j.src = b.dram.base + w * per;
        j.dst = b.dram.base + w * per;
        j.bytes = static_cast<uint32_t>(per);
        j.sem = sem;
        j.inc = 1;
        launches.push_back({0, 4 + w, &kernel_named(b, "fabric_traffic"), KernelArgWords::of(a)});
    }
    const std::vector<KernelResult> r = c.run(launches, std::chrono::seconds(300));
    return double(kCableBytes) / (double(r[0].ticks) / b.timebase_hz) / 1e9;
}

struct Ping {
    double us_per_hop = 0, doorbells_per_hop = 0;
};

// One way of a round trip: the first cable's direction and the route after it.
struct Way {
    FabricDirection direction = FabricDirection::kForward;
    uint32_t route = 0;
};

// `count` round trips of an atomic increment from chip 0 to `peer`, `hops`
// cables each way: there by `there`, back by `back`.
std::pair<uint64_t, uint64_t> ping(Cluster& c, transport::Fabric& fabric, uint32_t peer, uint32_t hops, Way there,
                                   Way back, uint32_t count) {
    const BoardInfo& b = c.board();
    transport::L1Allocator l1(b);
    const uint64_t word0 = l1.allocate(0, 4, 4, 64, "ping word"), word1 = l1.allocate(peer, 5, 4, 64, "pong word");
    c.chip(0).write32(word0, 0);
    c.chip(peer).write32(word1, 0);
    test_abi::FabricPingArgs a{};
    a.connection = fabric.builder().connect(c, l1, 0, there.direction, 0, 4);
    a.remote = word1;
    a.local = word0;
    a.count = count;
    a.initiator = 1;
    a.peer_chip = static_cast<uint16_t>(peer);
    a.hops = static_cast<uint8_t>(hops);
    a.route = there.route;
    test_abi::FabricPingArgs z = a;
    z.connection = fabric.builder().connect(c, l1, peer, back.direction, 1, 5);
    z.remote = word0;
    z.local = word1;
    z.initiator = 0;
    z.peer_chip = 0;
    z.route = back.route;
    const ccl::CaseTraffic before = ccl::traffic_now(c);
    const auto r = c.run({{peer, 5, &test::test_kernel(b, "fabric_ping"), KernelArgWords::of(z)},
                          {0, 4, &test::test_kernel(b, "fabric_ping"), KernelArgWords::of(a)}},
                         std::chrono::seconds(120));
    return {r[1].ticks, ccl::traffic_now(c).doorbells - before.doorbells};
}

// The difference of a long and a short run: launching and ending the kernels cost nothing here.
Ping per_hop(Cluster& c, transport::Fabric& fabric, uint32_t peer, uint32_t hops, Way there, Way back) {
    constexpr uint32_t kShort = 20, kLong = 120;
    const auto [t0, d0] = ping(c, fabric, peer, hops, there, back, kShort);
    const auto [t1, d1] = ping(c, fabric, peer, hops, there, back, kLong);
    const double trips = double(kLong - kShort) * 2 * hops;
    Ping p;
    p.us_per_hop = double(int64_t(t1 - t0)) / c.board().timebase_hz * 1e6 / trips;
    p.doorbells_per_hop = double(int64_t(d1 - d0)) / trips;
    return p;
}

void shape_cable(Cluster& c, double gbps) { c.set_fault(0, kEast, {{"bandwidth_gbps", gbps}, {"latency_us", 0}}); }

std::string cable_table(Cluster& c) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "One cable, chip 0 -> chip 1, " << (kCableBytes >> 20)
      << " MiB of 16 KiB packets: GB/s, and as a fraction of the EDM with as many channels, and of the raw link\n\n"
      << "| cable | raw link | EDM 1 ch | fabric 1 worker | EDM 4 ch | fabric 4 workers |\n|---|---|---|---|---|---|\n";
    for (double shaped : {0.0, 0.25}) {
        shape_cable(c, shaped);
        std::fprintf(stderr, "\r  fabric bench: one cable, %s ...        ", shaped ? "shaped" : "unshaped");
        const double raw = bench::link_gbps(c, kPayload, kCableBytes);
        const double edm1 = measure_edm_cell(c, kPayload, 1, false, false);
        const double edm4 = measure_edm_cell(c, kPayload, 4, false, false);
        double fab1 = 0, fab4 = 0;
        {
            auto fabric = transport::Fabric::start(c, transport::fabric_over(c, true, fabric_options()),
                                                   std::chrono::seconds(10));
            fab1 = fabric_cable_gbps(c, *fabric, 1);
            fab4 = fabric_cable_gbps(c, *fabric, 4);
        }
        t << "| " << (shaped ? "shaped 0.25 GB/s" : "unshaped") << " | " << raw << " | " << edm1 << " | " << fab1
          << " (" << fab1 / edm1 << "x EDM, " << fab1 / raw << "x raw) | " << edm4 << " | " << fab4 << " ("
          << fab4 / edm4 << "x EDM, " << fab4 / raw << "x raw) |\n";
    }
    shape_cable(c, 0);
    return t.str();
}

std::string hop_table(Cluster& c) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nOne atomic increment through h hops of ring8 and back (the routers forward it; no worker on the way):\n\n"
      << "| hops | latency per hop | doorbells per hop |\n|---|---|---|\n";
    auto fabric =
        transport::Fabric::start(c, transport::fabric_over(c, true, fabric_options()), std::chrono::seconds(10));
    for (uint32_t h : {1u, 3u, 7u}) {
        std::fprintf(stderr, "\r  fabric bench: %u hop(s) ...           ", h);
        const Ping p =
            per_hop(c, *fabric, h % c.size(), h, {FabricDirection::kForward, 0}, {FabricDirection::kBackward, 0});
        t << "| " << h << " | " << p.us_per_hop << " us | " << p.doorbells_per_hop << " |\n";
    }
    return t.str();
}

using bench::best_busbw;
using bench::shape_every_cable;

struct SmallOp {
    std::string algo;
    double us = 0, doorbells = 0;
};

// A 1 KiB all-reduce, auto, timed over 20 runs after a checked one.
SmallOp small_op(ccl::CollectiveRunner& run, Cluster& c) {
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.bytes = 1024;
    const ccl::CaseResult first = ccl::run_case(run, c, r, 1, true);
    if (first.check.wrong) throw Error("1 KiB all-reduce over " + run.transport_name() + " gave wrong results");
    SmallOp s;
    s.algo = first.timing.algo;
    constexpr int kRuns = 20;
    const uint64_t before = ccl::traffic_now(c).doorbells;
    for (int i = 0; i < kRuns; ++i) s.us += ccl::run_case(run, c, r, 2 + i, false).timing.seconds * 1e6 / kRuns;
    s.doorbells = double(ccl::traffic_now(c).doorbells - before) / kRuns;
    return s;
}

// Over one transport: the 1 KiB all-reduce, then each all-gather algorithm at every size.
std::vector<std::vector<double>> over(Cluster& c, const std::string& transport, const std::vector<uint64_t>& sizes,
                                      const std::vector<std::string>& algos, SmallOp& small) {
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = transport;
    ccl::CollectiveRunner run(c, o);
    std::fprintf(stderr, "\r  fabric bench: 1 KiB all-reduce over the %s ...          ", transport.c_str());
    small = small_op(run, c);
    std::vector<std::vector<double>> busbw(algos.size());
    for (uint64_t s : sizes) {
        std::fprintf(stderr, "\r  fabric bench: all-gather %llu KiB over the %s ...   ", (unsigned long long)s >> 10,
                     transport.c_str());
        for (size_t a = 0; a < algos.size(); ++a) busbw[a].push_back(best_busbw(run, c, s, algos[a]));
    }
    return busbw;
}

std::string all_gather_table(Cluster& c, const std::vector<uint64_t>& sizes, const std::string& png) {
    SmallOp small_edm, small_fabric;
    const std::vector<double> edm = over(c, "edm", sizes, {"ring"}, small_edm)[0];
    const auto on_fabric = over(c, "fabric", sizes, {"ring", "multicast"}, small_fabric);
    const std::vector<double>& fabric = on_fabric[0];
    const std::vector<double>& multicast = on_fabric[1];
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(4);
    t << "\nAll-gather on ring8, unshaped: busbw GB/s of the ring algorithm over the EDM and over the fabric, and of"
         " the fabric's multicast (each block one multicast stream each way)\n\n"
      << "| size | EDM ring | fabric ring | fabric / EDM | fabric multicast |\n|---|---|---|---|---|\n";
    PlotSpec spec;
    spec.title = "all-gather on ring8: EDM vs fabric";
    spec.x_label = "bytes";
    spec.y_label = "busbw GB/s";
    spec.series = {{"EDM ring", {}}, {"fabric ring", {}}, {"fabric multicast", {}}};
    for (size_t i = 0; i < sizes.size(); ++i) {
        t << "| " << (sizes[i] >> 10) << " KiB | " << edm[i] << " | " << fabric[i] << " | " << fabric[i] / edm[i]
          << " | " << multicast[i] << " |\n";
        spec.series[0].points.push_back({double(sizes[i]), edm[i]});
        spec.series[1].points.push_back({double(sizes[i]), fabric[i]});
        spec.series[2].points.push_back({double(sizes[i]), multicast[i]});
    }
    write_line_plot_png(png, spec);
    t << "\nchart: " << png << "\n";
    t.precision(0);
    t << "\nA 1 KiB all-reduce (auto) on ring8, mean of 20 in a loop:\n\n| transport | algorithm | time | doorbells |\n"
         "|---|---|---|---|\n"
      << "| EDM | " << small_edm.algo << " | " << small_edm.us << " us | " << small_edm.doorbells << " |\n"
      << "| fabric | " << small_fabric.algo << " | " << small_fabric.us << " us | " << small_fabric.doorbells << " |\n";
    return t.str();
}

void shape_ring(Cluster& c, double gbps) {
    for (uint32_t chip = 0; chip < c.size(); ++chip)
        c.set_fault(chip, kEast, {{"bandwidth_gbps", gbps}, {"latency_us", 0}});
}

// Where the link is the bottleneck: every cable of the ring shaped to a rate
// the host can keep up with on all eight at once, and to half of it (the
// time must double, else the host is the bottleneck and the row says so).
std::string shaped_all_gather_table(Cluster& c, uint64_t bytes) {
    const double rates[2] = {0.05, 0.025};
    struct Row {
        std::string name, transport, algo;
        double busbw[2] = {};
    };
    std::vector<Row> rows = {{"EDM ring", "edm", "ring"},
                             {"fabric ring", "fabric", "ring"},
                             {"fabric multicast", "fabric", "multicast"}};
    for (int k = 0; k < 2; ++k) {
        shape_ring(c, rates[k]);
        for (Row& row : rows) {
            std::fprintf(stderr, "\r  fabric bench: shaped %.3f GB/s, %s ...          ", rates[k], row.name.c_str());
            ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
            o.transport = row.transport;
            ccl::CollectiveRunner run(c, o);
            row.busbw[k] = best_busbw(run, c, bytes, row.algo);
        }
    }
    shape_ring(c, 0);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "\nAll-gather of " << (bytes >> 20) << " MiB on ring8 with every cable shaped: busbw as a fraction of the link"
      << " rate (the multicast uses both directions of each cable: its bus limit is 2x), and how much longer it took"
      << " at half the rate (2.0: the link is the bottleneck)\n\n"
      << "| algorithm | at " << rates[0] << " GB/s | at " << rates[1]
      << " GB/s | time at half rate |\n|---|---|---|---|\n";
    for (const Row& row : rows)
        t << "| " << row.name << " | " << row.busbw[0] / rates[0] << " | " << row.busbw[1] / rates[1] << " | "
          << row.busbw[0] / row.busbw[1] << "x" << (row.busbw[0] / row.busbw[1] < 1.8 ? " (host-bound)" : "") << " |\n";
    return t.str();
}

// On a 2D cluster: the snake ring every transport can run against the 2d
// algorithm (rows, then columns), over the EDM and over the 2D fabric.
std::string grid_table(const std::string& cluster_name, const std::vector<uint64_t>& sizes) {
    auto c = Cluster::start(paths::cluster_file(cluster_name), "/tmp/weft-bench-fabric-" + std::to_string(getpid()));
    std::ostringstream t;
    t << "\nAll-reduce on " << cluster_name << " (" << c->size()
      << " chips), unshaped: busbw GB/s of the snake ring and of 2d (rows, then columns), over the EDM and over the 2D "
         "fabric; and a 1 KiB all-reduce (auto) with its doorbells\n\n"
      << "| size | EDM ring | EDM 2d | 2d / ring | fabric ring | fabric 2d | 2d / ring "
         "|\n|---|---|---|---|---|---|---|\n";
    std::vector<std::vector<double>> busbw;  // [transport * 2 + algo][size]
    SmallOp small[2];
    const char* transports[] = {"edm", "fabric"};
    for (int tr = 0; tr < 2; ++tr) {
        ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
        o.transport = transports[tr];
        ccl::CollectiveRunner run(*c, o);
        small[tr] = small_op(run, *c);
        for (const char* algo : {"ring", "2d"}) {
            busbw.emplace_back();
            for (uint64_t s : sizes) {
                std::fprintf(stderr, "\r  fabric bench: %s all-reduce %s %llu KiB ...      ", cluster_name.c_str(),
                             algo, (unsigned long long)s >> 10);
                busbw.back().push_back(best_busbw(run, *c, s, algo, ccl::Collective::kAllReduce));
            }
        }
    }
    for (size_t i = 0; i < sizes.size(); ++i)
        t << "| " << (sizes[i] >> 10) << " KiB | " << busbw[0][i] << " | " << busbw[1][i] << " | "
          << busbw[1][i] / busbw[0][i] << " | " << busbw[2][i] << " | " << busbw[3][i] << " | "
          << busbw[3][i] / busbw[2][i] << " |\n";
    t << "\n| transport | 1 KiB all-reduce (auto) | time | doorbells |\n|---|---|---|---|\n";
    for (int tr = 0; tr < 2; ++tr)
        t << "| " << transports[tr] << " | " << small[tr].algo << " | " << small[tr].us << " us | "
          << small[tr].doorbells << " |\n";
    return t.str();
}

// On a 2D cluster downshifted to a mesh (so routes reach 2 * (width - 1)
// hops): one increment from chip 0 to the first chip h cables away, for
// every h the mesh has, and back the dimension-ordered way.
std::string grid_hop_table(Cluster& c, const std::string& cluster_name) {
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nOne atomic increment through h hops of " << cluster_name
      << " as a 2D mesh and back (X first, then Y: a route with a turn crosses the chip to another router):\n\n"
      << "| hops | to chip | route | latency per hop | doorbells per hop |\n|---|---|---|---|---|\n";
    auto fabric = transport::Fabric::start(c, transport::mesh_fabric(c.board(), c.topology(), fabric_options(), false),
                                           std::chrono::seconds(10));
    const transport::FabricBuilder& fb = fabric->builder();
    const Mesh m = c.topology().meshes().at(0);  // a copy: topology() is a temporary
    const Mesh mesh = Mesh::grid(m.width, m.height, false);
    for (uint32_t h = 1;; ++h) {
        uint32_t peer = 0;
        while (peer < c.size() && fb.route(0, peer).hops != h) ++peer;
        if (peer == c.size()) break;
        std::fprintf(stderr, "\r  fabric bench: %s, %u hop(s) ...           ", cluster_name.c_str(), h);
        const transport::FabricRoute there = fb.route(0, peer), back = fb.route(peer, 0);
        const Ping p = per_hop(c, *fabric, peer, h, {there.direction, there.route}, {back.direction, back.route});
        t << "| " << h << " | " << peer << " | " << transport::dor_route(mesh, 0, peer) << " | " << p.us_per_hop
          << " us | " << p.doorbells_per_hop << " |\n";
    }
    return t.str();
}

// The 2D cluster with every cable shaped, at a rate and at half of it: the
// snake ring against 2d and Swing, over the EDM and over the 2D fabric.
std::string shaped_grid_table(Cluster& c, const std::string& cluster_name, uint64_t bytes) {
    const double rates[2] = {0.004, 0.002};
    struct Row {
        ccl::Collective op;
        std::string transport, algo;
        double busbw[2] = {};
    };
    std::vector<Row> rows;
    for (ccl::Collective op : {ccl::Collective::kAllReduce, ccl::Collective::kAllGather})
        for (const char* tr : {"edm", "fabric"})
            for (const char* algo : {"ring", "2d", "swing"})
                if (op == ccl::Collective::kAllReduce || std::string(algo) != "swing") rows.push_back({op, tr, algo});
    for (int k = 0; k < 2; ++k) {
        shape_every_cable(c, rates[k]);
        for (Row& row : rows) {
            std::fprintf(stderr, "\r  fabric bench: %s shaped %.3f GB/s, %s %s over %s ...     ", cluster_name.c_str(),
                         rates[k], ccl::collective_name(row.op).c_str(), row.algo.c_str(), row.transport.c_str());
            ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
            o.transport = row.transport;
            ccl::CollectiveRunner run(c, o);
            row.busbw[k] = best_busbw(run, c, bytes, row.algo, row.op);
        }
    }
    shape_every_cable(c, 0);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "\n"
      << (bytes >> 20) << " MiB on " << cluster_name
      << " with every cable shaped: busbw as a fraction of the link rate, 2d and swing against the snake ring on the "
         "same transport, and how much longer it took at half the rate (2.0: the link is the bottleneck)\n\n"
      << "| op | transport | algorithm | at " << rates[0] << " GB/s | at " << rates[1]
      << " GB/s | / ring | time at half rate |\n|---|---|---|---|---|---|---|\n";
    const Row* ring = nullptr;
    for (const Row& row : rows) {
        if (row.algo == "ring") ring = &row;
        const double slower = row.busbw[0] / row.busbw[1];
        t << "| " << ccl::collective_name(row.op) << " | " << row.transport << " | " << row.algo << " | "
          << row.busbw[0] / rates[0] << " | " << row.busbw[1] / rates[1] << " | ";
        if (&row != ring) t << row.busbw[1] / ring->busbw[1] << "x";
        t << " | " << slower << "x" << (slower < 1.8 ? " (host-bound)" : "") << " |\n";
    }
    return t.str();
}

// All-reduce on the 2D cluster over `transport` (edm or fabric) with every cable shaped, from
// 1 KiB to 16 MiB: each algorithm's busbw against the snake ring's, where
// the small sizes are paid in steps and the large ones in bytes on cables.
std::string shaped_size_sweep(Cluster& c, const std::string& cluster_name, bool quick, const std::string& transport) {
    const double rate = 0.004;
    const std::vector<std::string> algos = {"ring", "2d", "swing", "recursive_doubling", "halving_doubling"};
    std::vector<uint64_t> sizes = {1ull << 10, 16ull << 10, 256ull << 10, 4ull << 20};
    if (!quick) sizes.push_back(16ull << 20);
    shape_every_cable(c, rate);
    std::ostringstream t;
    t.precision(3);
    t << "\nAll-reduce on " << cluster_name << " over the " << (transport == "edm" ? "EDM" : "fabric")
      << " with every cable shaped to " << rate
      << " GB/s: the snake ring's busbw as a fraction of the link rate, and each algorithm's busbw against the "
         "ring's\n\n| size | ring |";
    for (size_t a = 1; a < algos.size(); ++a) t << " " << algos[a] << " |";
    t << "\n|---|---|";
    for (size_t a = 1; a < algos.size(); ++a) t << "---|";
    t << "\n";
    ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
    o.transport = transport;
    ccl::CollectiveRunner run(c, o);
    for (uint64_t bytes : sizes) {
        std::vector<double> busbw;
        for (const std::string& algo : algos) {
            std::fprintf(stderr, "\r  fabric bench: %s shaped, all_reduce %s of %llu KiB over %s ...     ",
                         cluster_name.c_str(), algo.c_str(), (unsigned long long)(bytes >> 10), transport.c_str());
            busbw.push_back(best_busbw(run, c, bytes, algo, ccl::Collective::kAllReduce));
        }
        t << "| " << (bytes >> 10) << " KiB | " << busbw[0] / rate << " |";
        for (size_t a = 1; a < algos.size(); ++a) t << " " << busbw[a] / busbw[0] << "x |";
        t << "\n";
    }
    shape_every_cable(c, 0);
    return t.str();
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-fabric\n"
    "The fabric on ring8, torus4x4 and ring8x2 beside the EDM: hop latency,\n"
    "doorbells, streams, collectives, planes, live reroutes; tables and charts\n"
    "into bench/results. WEFT_BENCH_QUICK=1: fewer sizes, results in /tmp.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage);
    try {
        check_gnuplot();
        const bool quick = knobs::flag(knobs::knob("WEFT_BENCH_QUICK"));
        const std::string results = quick ? "/tmp/weft-bench-quick" : paths::bench_out() + "/bench/results";
        std::filesystem::create_directories(results);
        std::printf("weft fabric bench on ring8 (host: %ld cores)\n", sysconf(_SC_NPROCESSORS_ONLN));
        if (knobs::flag(knobs::knob("WEFT_BENCH_REROUTE_ONLY"))) {  // the fallback's table alone
            std::printf("%s", bench::reroute_table(quick).c_str());
            return 0;
        }
        if (knobs::flag(knobs::knob("WEFT_BENCH_PLANES_ONLY"))) {
            std::printf("%s", bench::shaped_planes_table(quick).c_str());
            return 0;
        }
        auto cluster =
            Cluster::start(paths::cluster_file("ring8"), "/tmp/weft-bench-fabric-" + std::to_string(getpid()));
        bench::link_gbps(*cluster, kPayload, kCableBytes);  // warm the DRAM pages
        std::printf("%s", cable_table(*cluster).c_str());
        std::printf("%s", hop_table(*cluster).c_str());
        std::vector<uint64_t> sizes = {1ull << 20, 4ull << 20};
        if (!quick) sizes.insert(sizes.end(), {16ull << 20, 64ull << 20});
        std::printf("%s", all_gather_table(*cluster, sizes, results + "/fabric_all_gather.png").c_str());
        std::printf("%s", shaped_all_gather_table(*cluster, quick ? (1ull << 20) : (4ull << 20)).c_str());
        cluster.reset();  // one cluster at a time
        std::vector<uint64_t> grid_sizes = {1ull << 20};
        if (!quick) grid_sizes.push_back(16ull << 20);
        std::printf("%s", grid_table("torus4x4", grid_sizes).c_str());
        {
            auto torus =
                Cluster::start(paths::cluster_file("torus4x4"), "/tmp/weft-bench-fabric-" + std::to_string(getpid()));
            std::printf("%s", grid_hop_table(*torus, "torus4x4").c_str());
            std::printf("%s", shaped_grid_table(*torus, "torus4x4", quick ? (1ull << 20) : (4ull << 20)).c_str());
            for (const char* transport : {"edm", "fabric"})
                std::printf("%s", shaped_size_sweep(*torus, "torus4x4", quick, transport).c_str());
        }
        std::printf("%s", bench::shaped_planes_table(quick).c_str());
        std::printf("%s", bench::reroute_table(quick).c_str());
        std::fprintf(stderr, "\r%70s\r", "");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\nweft-bench-fabric: %s\n", e.what());
        return 1;
    }
}
