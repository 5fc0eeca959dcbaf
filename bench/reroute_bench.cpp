#include "reroute_bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
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

FabricSpec stream_fabric() {
    FabricSpec o;
    o.packet_bytes = kPayload;
    o.slots = 16;
    o.fallback = true;
    return o;
}

// Both cables from chip 0 to chip 1 (plane 0's E, plane 1's E1) at `gbps`.
void shape_pair(Cluster& c, double gbps) {
    for (const char* port : {"E", "E1"})
        c.set_fault(0, static_cast<uint32_t>(port_named(c.board(), port)), {{"bandwidth_gbps", gbps}, {"latency_us", 0}});
}

class Stream {
public:
    // `bytes` from chip 0 to chip 1 through the fabric, started now.
    Stream(Cluster& c, transport::Fabric& f, uint64_t bytes) : c_(c), f_(f) {
        const BoardInfo& b = c.board();
        transport::L1Allocator l1(b);
        test_abi::FabricTrafficArgs a{};
        a.connection[0] = f.builder().connect(c, l1, 0, FabricDirection::kForward, 0, 4);
        for (uint64_t left = bytes; left && a.job_count < test_abi::kFabricTrafficMaxJobs; left -= std::min(left, kChunk)) {
            test_abi::FabricTrafficJob& j = a.jobs[a.job_count++];
            j.command = abi::kFabricWrite;
            j.hops = 1;
            j.count = 1;
            j.ttl = abi::kFabricDefaultTtl;
            j.dst_chip = 1;
            j.src = b.dram.base;
            j.dst = b.dram.base + kChunk;
            j.bytes = static_cast<uint32_t>(std::min(left, kChunk));
        }
        const int r = f.builder().router_index(1, FabricDirection::kBackward);
        delivered_at_ = f.builder().routers().at(size_t(r)).config.status + offsetof(abi::FabricRouterStatus, delivered);
        running_ = c.launch_all({{0, 4, &test::test_kernel(b, "fabric_traffic"), KernelArgWords::of(a)}});
    }
    // Bytes chip 1's router has delivered so far (off its cable and its fallback both).
    uint64_t delivered() { return uint64_t(c_.chip(1).read32(delivered_at_)) * kPayload; }
    void wait() { c_.wait_all(running_, milliseconds(600000)); }
    // MB/s delivered over `window`, from now.
    double rate(milliseconds window) {
        const uint64_t b0 = delivered();
        const auto t0 = Clock::now();
        std::this_thread::sleep_for(window);
        return double(delivered() - b0) / duration<double>(Clock::now() - t0).count() / 1e6;
    }

private:
    Cluster& c_;
    transport::Fabric& f_;
    uint64_t delivered_at_ = 0;
    std::vector<std::pair<CoreRef, uint32_t>> running_;
};

std::unique_ptr<transport::Fabric> start(Cluster& c) {
    return transport::Fabric::start(c, transport::fabric_over(c, true, stream_fabric()), milliseconds(10000));
}

// MB/s of a clean stream at `gbps`, timed over its middle.
double clean_rate(Cluster& c, double gbps, milliseconds window) {
    shape_pair(c, gbps);
    auto fabric = start(c);
    Stream s(c, *fabric, uint64_t(gbps * 1e9 * (window.count() + 800) / 1000));
    std::this_thread::sleep_for(milliseconds(300));
    const double r = s.rate(window);
    s.wait();
    return r;
}

uint64_t relayed(Cluster& c, const transport::Fabric& f) {
    uint64_t n = 0;
    for (const transport::FabricRouterPlan& p : f.builder().routers())
        if (p.relay_for >= 0 && p.chip == 1)
            n += c.chip(1).read32(p.config.status + offsetof(abi::FabricRouterStatus, forwarded));
    return n;
}

}  // namespace

std::string reroute_table(bool quick) {
    auto c = Cluster::start(paths::cluster_file("ring8x2"), "/tmp/weft-bench-reroute-" + std::to_string(getpid()));
    const double gbps = 0.05;
    const milliseconds window(quick ? 500 : 1500);
    std::fprintf(stderr, "\r  fabric bench: reroute, clean streams ...            ");
    const double clean = clean_rate(*c, gbps, window), half = clean_rate(*c, gbps / 2, window);
    std::fprintf(stderr, "\r  fabric bench: reroute, a cable pulled under a stream ...  ");
    shape_pair(*c, gbps);
    double before = 0, during = 0, pause_ms = -1;
    uint32_t resent = 0;
    {
        auto fabric = start(*c);
        Stream s(*c, *fabric, uint64_t(gbps * 1e9 * (2 * window.count() + 1600) / 1000));
        std::this_thread::sleep_for(milliseconds(300));
        before = s.rate(window);
        const uint32_t east = static_cast<uint32_t>(port_named(c->board(), "E"));
        c->set_link(0, east, false);
        const auto pulled = Clock::now();
        while (relayed(*c, *fabric) == 0 && Clock::now() - pulled < std::chrono::seconds(5))
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (relayed(*c, *fabric)) pause_ms = duration<double, std::milli>(Clock::now() - pulled).count();
        std::this_thread::sleep_for(milliseconds(200));
        during = s.rate(window);
        s.wait();
        for (const transport::FabricRouterPlan& p : fabric->builder().routers())
            resent += c->chip(p.chip).read32(p.config.status + offsetof(abi::FabricRouterStatus, resent));
        c->set_link(0, east, true);
    }
    std::fprintf(stderr, "\r  fabric bench: reroute, after the cable returns ...      ");
    const double after = clean_rate(*c, gbps, window);
    shape_pair(*c, 0);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nEthernet fallback on ring8x2: a stream from chip 0 to chip 1 over the plane-0 fabric (4 KiB packets), "
         "both cables between them shaped to "
      << gbps << " GB/s; chip 0's plane-0 cable pulled mid-stream, its traffic round over the plane-1 relays; "
         "rates as delivered at chip 1, sampled by the host\n\n"
      << "| stream | MB/s | of the clean rate |\n|---|---|---|\n"
      << "| clean | " << clean << " | 1.00 |\n"
      << "| clean, link at half rate | " << half << " | " << half / clean
      << (half / clean > 0.65 ? " (host-bound: not the link)" : " (the link is the bottleneck)") << " |\n"
      << "| before the pull | " << before << " | " << before / clean << " |\n"
      << "| rerouted over the fallback | " << during << " | " << during / clean << " |\n"
      << "| after the cable returns (next fabric) | " << after << " | " << after / clean << " |\n\n";
    t.precision(1);
    t << "Pull to first packet over the fallback: ";
    if (pause_ms < 0) t << "none within 5 s";
    else
        t << pause_ms << " ms";
    t << " (host-polled every 0.2 ms); packets sent again (on the wire when it died): " << resent << "\n";
    return t.str();
}

}  // namespace weft::bench
