#include "shaped_planes.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "ccl/collective.h"
#include "ccl/op_case.h"
#include "driver/paths.h"
#include "shaping.h"
#include "timing.h"

namespace weft::bench {
namespace {

// The median time of three runs of `r` on a runner of its own (over the
// fabric a runner starts its fabrics, one a plane: two runners' would
// share the routers' cores, so they take no turns).
double seconds_of(Cluster& c, const ccl::OpRequest& r, const std::string& transport, uint32_t planes, uint64_t* wrong) {
    ccl::RunnerOptions o;
    o.transport = transport;
    o.planes = planes;
    ccl::CollectiveRunner run(c, o);
    *wrong += ccl::run_case(run, c, r, 1, true).check.wrong;
    return medians_in_turns({[&] { return ccl::run_case(run, c, r, 1, false).timing.seconds; }}, 3)[0];
}

}  // namespace

std::string shaped_planes_table(bool quick) {
    const double rate = 0.005;  // GB/s: link-bound here for both transports (halving it doubles the time)
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.algo = "ring";
    r.bytes = quick ? (4ull << 20) : (16ull << 20);
    auto c = Cluster::start(paths::cluster_file("ring8x2"), "/tmp/weft-bench-planes-" + std::to_string(getpid()));
    const double bus = ccl::bus_factor(r.op, static_cast<uint32_t>(c->size()));
    std::ostringstream t;
    t << "\nRing all-reduce of " << (r.bytes >> 20)
      << " MiB on ring8x2 (two cables between neighbours, a plane each) with every cable shaped: busbw as a "
         "fraction of one cable's rate over one plane and over both, and how much longer both took at half the "
         "rate (2.0: the cables are the bottleneck)\n\n"
      << "| transport | 1 plane | 2 planes | 2 planes / 1 | time at half rate |\n|---|---|---|---|---|\n";
    for (const char* transport : {"edm", "fabric"}) {
        uint64_t wrong = 0;
        double seconds[2], half = 0;
        shape_every_cable(*c, rate);
        for (uint32_t planes : {1u, 2u}) {
            std::fprintf(stderr, "\r  planes bench: %s, %u plane(s) ...          ", transport, planes);
            seconds[planes - 1] = seconds_of(*c, r, transport, planes, &wrong);
        }
        shape_every_cable(*c, rate / 2);
        std::fprintf(stderr, "\r  planes bench: %s, 2 planes at half the rate ...", transport);
        half = seconds_of(*c, r, transport, 2, &wrong);
        const auto fraction = [&](double s) { return double(r.bytes) / s / 1e9 * bus / rate; };
        char row[200];
        std::snprintf(row, sizeof row, "| %s | %.3f | %.3f | %.2fx | %.2fx%s |%s\n", transport, fraction(seconds[0]),
                      fraction(seconds[1]), seconds[0] / seconds[1], half / seconds[1],
                      half / seconds[1] < 1.8 ? " (host-bound)" : "", wrong ? " WRONG RESULTS" : "");
        t << row;
    }
    std::fprintf(stderr, "\r%70s\r", "");
    return t.str();
}

}  // namespace weft::bench
