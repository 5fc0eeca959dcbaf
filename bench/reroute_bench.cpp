#include "reroute_bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <sstream>
#include <thread>

#include "driver/cluster.h"
#include "driver/paths.h"
#include "test_kernels.h"
#include "transport/fabric/fabric.h"
#include "transport/l1_allocator.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::duration;
using std::chrono::milliseconds;
using transport::FabricDirection;

constexpr uint32_t kPayload = 4096;
constexpr uint64_t kChunk = 16ull << 20;  // one job's bytes; the stream repeats it

// One way of surviving a pulled cable: a cluster, a stream across the cable
// (from `from` out of its `way` router to its neighbour `to`), the fabric,
// and which of its routers carry the stream once the cable is gone.
struct Case {
    const char* cluster;
    const char* what;  // "over the plane-1 relays", ...
    uint32_t from, to;
    FabricDirection way;
    const char* port;       // of `from`, the cable pulled
    const char* shaped[2];  // ports of `from` shaped: the cable and where its traffic goes
    std::function<transport::FabricBuilder(Cluster&)> fabric;
    std::function<bool(const transport::FabricRouterPlan&)> detour;  // routers whose forwarding is the detour
};

void shape(Cluster& c, const Case& k, double gbps) {
    for (const char* port : k.shaped)
        if (port)
            c.set_fault(k.from, static_cast<uint32_t>(port_named(c.board(), port)),
                        {{"bandwidth_gbps", gbps}, {"latency_us", 0}});
}

uint32_t status_word(Cluster& c, const transport::FabricRouterPlan& p, size_t offset) {
    return c.chip(p.chip).read32(p.config.status + offset);
}

class Stream {
public:
    // `bytes` from k.from to k.to through the fabric, started now.
    Stream(Cluster& c, transport::Fabric& f, const Case& k, uint64_t bytes) : c_(c), f_(f), k_(k) {
        const BoardInfo& b = c.board();
        transport::L1Allocator l1(b);
        test_abi::FabricTrafficArgs a{};
        a.connection[f.builder().dims() == 2 ? uint32_t(k.way) : 0] = f.builder().connect(c, l1, k.from, k.way, 0, 4);
        const transport::FabricRoute route = f.builder().route(k.from, k.to);
        for (uint64_t left = bytes; left && a.job_count < test_abi::kFabricTrafficMaxJobs;
             left -= std::min(left, kChunk)) {
            test_abi::FabricTrafficJob& j = a.jobs[a.job_count++];
            j.command = abi::kFabricWrite;
            j.hops = static_cast<uint8_t>(route.hops);
            j.count = 1;
            j.ttl = abi::kFabricDefaultTtl;
            j.direction = static_cast<uint8_t>(f.builder().dims() == 2 ? uint32_t(k.way) : 0);
            j.dst_mesh = static_cast<uint8_t>(f.builder().node(k.to).mesh);
            j.dst_chip = f.builder().node(k.to).chip;
            j.route = route.route;
            j.src = b.dram.base;
            j.dst = b.dram.base + kChunk;
            j.bytes = static_cast<uint32_t>(std::min(left, kChunk));
        }
        running_ = c.launch_all({{k.from, 4, &kernel_named(b, "fabric_traffic"), KernelArgWords::of(a)}});
    }
    // Bytes delivered at k.to so far, by any of its routers.
    uint64_t delivered() {
        uint64_t n = 0;
        for (const transport::FabricRouterPlan& p : f_.builder().routers())
            if (p.chip == k_.to) n += status_word(c_, p, offsetof(abi::FabricRouterStatus, delivered));
        return n * kPayload;
    }
    // Waits for the stream's end, tending the fabric as an op's wait does.
    void wait() {
        c_.wait_all(running_, milliseconds(600000), [&] { return f_.tend(); });
    }
    // MB/s delivered over `window`, from now, tending the fabric meanwhile.
    double rate(milliseconds window) {
        const uint64_t b0 = delivered();
        const auto t0 = Clock::now();
        while (Clock::now() - t0 < window) {
            f_.tend();
            std::this_thread::sleep_for(milliseconds(1));
        }
        return double(delivered() - b0) / duration<double>(Clock::now() - t0).count() / 1e6;
    }

private:
    Cluster& c_;
    transport::Fabric& f_;
    const Case& k_;
    std::vector<std::pair<CoreRef, uint32_t>> running_;
};

std::unique_ptr<transport::Fabric> start(Cluster& c, const Case& k) {
    return transport::Fabric::start(c, k.fabric(c), milliseconds(10000));
}

// MB/s of a clean stream at `gbps`, timed over its middle.
double clean_rate(Cluster& c, const Case& k, double gbps, milliseconds window) {
    shape(c, k, gbps);
    auto fabric = start(c, k);
    Stream s(c, *fabric, k, uint64_t(gbps * 1e9 * (window.count() + 800) / 1000));
    std::this_thread::sleep_for(milliseconds(300));
    const double r = s.rate(window);
    s.wait();
    return r;
}

// Ms from the cable's return until the router it left runs on it again (the
// control plane, tended every 0.2 ms, tells both ends); -2 if not in 5 s
// and still routed round by tables (it keeps its detours until the next
// fabric; a return between meshes sends round until the fabric settles);
// else -1.
double back_on_cable(Cluster& c, transport::Fabric& f, const Case& k, uint32_t port) {
    const transport::FabricRouterPlan* router = nullptr;
    for (const transport::FabricRouterPlan& p : f.builder().routers())
        if (p.chip == k.from && p.port == port && p.relay_for < 0) router = &p;
    const auto running = [&] {
        return status_word(c, *router, offsetof(abi::FabricRouterStatus, state)) == abi::kFabricRouterRunning;
    };
    const auto returned = Clock::now();
    f.tend();
    while (!running() && Clock::now() - returned < std::chrono::seconds(5)) {
        f.tend();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (running()) return duration<double, std::milli>(Clock::now() - returned).count();
    return status_word(c, *router, offsetof(abi::FabricRouterStatus, command)) == abi::kFabricReroute ? -2 : -1;
}

std::string fixed2(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return b;
}

uint64_t detoured(Cluster& c, const transport::Fabric& f, const Case& k) {
    uint64_t n = 0;
    for (const transport::FabricRouterPlan& p : f.builder().routers())
        if (k.detour(p)) n += status_word(c, p, offsetof(abi::FabricRouterStatus, forwarded));
    return n;
}

std::string rows(const Case& k, bool quick) {
    auto c = Cluster::start(paths::cluster_file(k.cluster), "/tmp/weft-bench-reroute-" + std::to_string(getpid()));
    const double gbps = 0.05;
    const milliseconds window(quick ? 500 : 1500);
    std::fprintf(stderr, "\r  fabric bench: reroute on %s, clean streams ...            ", k.cluster);
    const double clean = clean_rate(*c, k, gbps, window), half = clean_rate(*c, k, gbps / 2, window);
    std::fprintf(stderr, "\r  fabric bench: reroute on %s, a cable pulled under a stream ...  ", k.cluster);
    shape(*c, k, gbps);
    double before = 0, during = 0, back = 0, pause_ms = -1, return_ms = -1;
    uint32_t resent = 0;
    const uint32_t port = static_cast<uint32_t>(port_named(c->board(), k.port));
    {
        auto fabric = start(*c, k);
        Stream s(*c, *fabric, k, uint64_t(gbps * 1e9 * (3 * window.count() + 2400) / 1000));
        std::this_thread::sleep_for(milliseconds(300));
        before = s.rate(window);
        const uint64_t detoured_before = detoured(*c, *fabric, k);
        c->set_link(k.from, port, false);
        const auto pulled = Clock::now();
        while (detoured(*c, *fabric, k) == detoured_before && Clock::now() - pulled < std::chrono::seconds(5)) {
            fabric->tend();  // the control plane's part, as an op's wait plays it
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        if (detoured(*c, *fabric, k) != detoured_before)
            pause_ms = duration<double, std::milli>(Clock::now() - pulled).count();
        std::this_thread::sleep_for(milliseconds(200));
        during = s.rate(window);
        for (const transport::FabricRouterPlan& p : fabric->builder().routers())
            resent += status_word(*c, p, offsetof(abi::FabricRouterStatus, resent));
        std::fprintf(stderr, "\r  fabric bench: reroute on %s, the cable back under the stream ...  ", k.cluster);
        c->set_link(k.from, port, true);
        return_ms = back_on_cable(*c, *fabric, k, port);
        if (return_ms != -2) back = s.rate(window);
        s.wait();
    }
    std::fprintf(stderr, "\r  fabric bench: reroute on %s, the next fabric ...                ", k.cluster);
    const double after = clean_rate(*c, k, gbps, window);
    shape(*c, k, 0);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "| " << k.cluster << " | " << k.what << " | " << clean << " | " << half / clean
      << (half / clean > 0.65 ? " (host-bound)" : "") << " | " << before / clean << " | " << during / clean << " | "
      << (return_ms == -2 ? std::string("stays round") : fixed2(back / clean)) << " | " << after / clean << " | ";
    const auto ms = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.1f", v);
        return v == -2 ? std::string("-") : v < 0 ? std::string("none in 5 s") : std::string(b);
    };
    t << ms(pause_ms) << " | " << ms(return_ms) << " | " << resent << " |\n";
    return t.str();
}

}  // namespace

std::string reroute_table(bool quick) {
    FabricSpec o;
    o.packet_bytes = kPayload;
    o.slots = 16;
    FabricSpec with_relays = o;
    with_relays.fallback = true;
    const Case cases[] = {
        {"ring8x2",
         "onto the plane-1 relays",
         0,
         1,
         FabricDirection::kForward,
         "E",
         {"E", "E1"},
         [=](Cluster& c) { return transport::fabric_over(c, true, with_relays); },
         [](const transport::FabricRouterPlan& p) { return p.relay_for >= 0 && p.chip == 1; }},
        // Chip 5 (1, 1) to chip 6 (2, 1): without the cable, the other way round the row (W W W).
        {"torus4x4",
         "round the row by detours on VC 2",
         5,
         6,
         FabricDirection::kEast,
         "E",
         {"E", "W"},
         [=](Cluster& c) { return transport::mesh_fabric(c.board(), c.topology(), o); },
         [](const transport::FabricRouterPlan& p) {
             return p.chip == 5 && p.direction == FabricDirection::kEast;  // its route_round forwards
         }},
        // Mesh 0's chip 5 to mesh 1's chip 3 (12) over the one cable between
        // them: without it, through meshes 2 and 3 (S S, E E E, N N N, W W).
        {"4mesh3x3",
         "through meshes 2 and 3 by detours on VC 2",
         5,
         12,
         FabricDirection::kEast,
         "E",
         {"E", "S"},
         [=](Cluster& c) { return transport::multi_mesh_fabric(c.board(), c.topology(), o); },
         [](const transport::FabricRouterPlan& p) { return p.chip == 5 && p.direction == FabricDirection::kEast; }},
    };
    std::ostringstream t;
    t << "\nA stream across a cable pulled under it (4 KiB packets; the cable and the first cable of its detour shaped "
         "to 0.05 GB/s, the rest of the detour not): its "
         "rate before the pull, while its traffic goes round, once the cable is back under the same stream (its "
         "routers leave the relays, or pause until their detours drain (between meshes: every lane held until the "
         "fabric settles), live), and on the next fabric, as "
         "fractions of the clean rate (a clean stream at half the link rate shows whether the link is the "
         "bottleneck: 0.50); the pause from the pull to the first packet round it (host-polled every 0.2 ms; on "
         "torus4x4 and 4mesh3x3 it includes the control plane's new tables, written by the host) and from the return "
         "to the "
         "router running on its cable again; packets sent again (on the wire when it died)\n\n"
      << "| cluster | traffic goes | clean MB/s | at half rate | before | rerouted | back, live | next fabric | "
         "pause ms | back in ms | sent again |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Case& k : cases) t << rows(k, quick);
    return t.str();
}

}  // namespace weft::bench
