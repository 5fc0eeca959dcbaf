// weft-bench-systems: the hierarchical all-reduce (seed 003) beside a flat
// ring over every chip, in one run:
//   - on QEMU, systems-ring2x4x4 (32 chips: two 4x4 systems as a ring) with
//     every cable shaped: time and busbw from 4 KiB to 4 MiB over the EDM and
//     over the fabric, the lowered op's critical path, and whether halving
//     the rate doubles the time (else the host, not the link, set it); the
//     record's center root beside a corner one;
//   - in the fabric model, 16 systems of 8x4 (512 chips as a 4x4 mesh of
//     systems) in virtual time.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "ccl/op_case.h"
#include "common/error.h"
#include "common/knobs.h"
#include "driver/paths.h"
#include "fabric_model/grid_cluster.h"
#include "fabric_model/plan_traffic.h"
#include "shaping.h"
#include "start.h"

using namespace weft;
using bench::shape_every_cable;

namespace {

struct Row {
    std::string name, transport, algo;
    const char* root = nullptr;  // WEFT_HIERARCHICAL_ROOT, or the default
};

ccl::OpRequest all_reduce(const std::string& algo, uint64_t bytes) {
    ccl::OpRequest r;
    r.op = ccl::Collective::kAllReduce;
    r.algo = algo;
    r.bytes = bytes;
    return r;
}

// The better of two runs' seconds; the first is checked.
double best_seconds(ccl::CollectiveRunner& run, Cluster& c, const ccl::OpRequest& r) {
    double best = 1e30;
    for (int i = 0; i < 2; ++i) {
        const ccl::CaseResult res = ccl::run_case(run, c, r, 1 + i, i == 0);
        if (i == 0 && res.check.wrong) throw Error(r.algo + " over " + run.transport_name() + " gave wrong results");
        best = std::min(best, res.timing.seconds);
    }
    return best;
}

struct Measured {
    std::vector<double> seconds;  // by size
    double half_rate = 0;         // time at half the rate over time at the rate, at the largest size
    uint32_t critical_path = 0;
};

std::string qemu_table(const std::vector<uint64_t>& sizes, double rate) {
    auto c = Cluster::start(paths::cluster_file("systems-ring2x4x4"),
                            "/tmp/weft-bench-systems-" + std::to_string(getpid()));
    const auto n = static_cast<uint32_t>(c->size());
    const std::vector<Row> rows = {{"hierarchical, center root", "edm", "hierarchical"},
                                   {"hierarchical, corner root", "edm", "hierarchical", "0"},
                                   {"ring (CTRING), flat over 32 chips", "edm", "ring"},
                                   {"hierarchical over the fabric", "fabric", "hierarchical"},
                                   {"ring over the fabric", "fabric", "ring"}};
    std::vector<Measured> m(rows.size());
    for (double shaped : {rate, rate / 2}) {
        shape_every_cable(*c, shaped);
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row& row = rows[i];
            if (row.root) setenv("WEFT_HIERARCHICAL_ROOT", row.root, 1);
            ccl::RunnerOptions o = ccl::RunnerOptions::from_env();
            o.transport = row.transport;
            ccl::CollectiveRunner run(*c, o);
            const std::vector<uint64_t> at = shaped == rate ? sizes : std::vector<uint64_t>{sizes.back()};
            for (uint64_t bytes : at) {
                std::fprintf(stderr, "\r  systems bench: %.4f GB/s, %s, %llu B ...          ", shaped,
                             row.name.c_str(), (unsigned long long)bytes);
                const double s = best_seconds(run, *c, all_reduce(row.algo, bytes));
                if (shaped == rate) m[i].seconds.push_back(s);
                else
                    m[i].half_rate = s / m[i].seconds.back();
            }
            m[i].critical_path = run.lower_op(all_reduce(row.algo, sizes.back()), row.algo).critical_path;
            unsetenv("WEFT_HIERARCHICAL_ROOT");
        }
    }
    shape_every_cable(*c, 0);
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(3);
    t << "\nall_reduce on systems-ring2x4x4 (two 4x4 systems as a ring, 32 QEMU chips), every cable shaped to "
      << rate << " GB/s: time in ms and busbw as a fraction of the cable; the critical path (ops that must run one "
      << "after another, at " << (sizes.back() >> 10) << " KiB); the time at half the rate (2.0: the cable sets it)\n\n";
    t << "| algorithm | transport |";
    for (uint64_t b : sizes) t << " " << (b >> 10) << " KiB ms | busbw |";
    t << " critical path | time at half rate |\n|---|---|";
    for (size_t k = 0; k < sizes.size(); ++k) t << "---|---|";
    t << "---|---|\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        t << "| " << rows[i].name << " | " << rows[i].transport << " |";
        for (size_t k = 0; k < sizes.size(); ++k) {
            const double busbw = double(sizes[k]) / m[i].seconds[k] / 1e9 * ccl::bus_factor(ccl::Collective::kAllReduce, n);
            t << " " << m[i].seconds[k] * 1e3 << " | " << busbw / rate << " |";
        }
        t << " " << m[i].critical_path << " | " << m[i].half_rate << "x"
          << (m[i].half_rate < 1.8 ? " (host-bound)" : "") << " |\n";
    }
    return t.str();
}

std::string model_table(const std::vector<uint64_t>& sizes) {
    fabric_model::GridCluster g;
    g.meshes = 16, g.width = 8, g.height = 4, g.systems = true;
    const fabric_model::GridClusterFile file(g);
    fabric_model::ModelOptions o;
    o.cluster = file.path();
    std::ostringstream t;
    t.setf(std::ios::fixed);
    t.precision(2);
    t << "\nThe same in the fabric model: 16 systems of 8x4 (512 chips, a 4x4 mesh of systems), in virtual time "
      << "(12.5 GB/s cables): time in us and busbw as a fraction of a cable\n\n| algorithm |";
    for (uint64_t b : sizes) t << " " << (b >> 10) << " KiB us | busbw |";
    t << "\n|---|";
    for (size_t k = 0; k < sizes.size(); ++k) t << "---|---|";
    t << "\n";
    for (const char* algo : {"hierarchical", "ring"}) {
        t << "| " << algo << " |";
        for (uint64_t bytes : sizes) {
            std::fprintf(stderr, "\r  systems bench: the model, %s, %llu B ...          ", algo, (unsigned long long)bytes);
            fabric_model::Simulation sim(o);
            const fabric_model::OpTime r = fabric_model::planned_collective(sim, "all_reduce", algo, bytes);
            t << " " << double(r.ns) / 1e3 << " | " << r.busbw() / o.costs.cable_gbps << " |";
        }
        t << "\n";
    }
    std::remove(o.cluster.c_str());
    return t.str();
}

}  // namespace

constexpr const char* kUsage =
    "usage: weft-bench-systems\n"
    "The hierarchical all-reduce (seed 003) on clusters of systems, on QEMU and\n"
    "in the fabric model. WEFT_BENCH_QUICK=1: fewer sizes.\n";

int main(int argc, char** argv) {
    bench::start(argc, argv, kUsage);
    try {
        const bool quick = knobs::flag(knobs::knob("WEFT_BENCH_QUICK"));
        std::printf("weft systems bench: the hierarchical all-reduce (seed 003) (host: %ld cores)\n",
                    sysconf(_SC_NPROCESSORS_ONLN));
        std::vector<uint64_t> sizes = {4ull << 10, 64ull << 10, 1ull << 20};
        if (!quick) sizes.push_back(4ull << 20);
        std::printf("%s", qemu_table(sizes, 0.004).c_str());
        std::printf("%s", model_table(quick ? std::vector<uint64_t>{64ull << 10}
                                            : std::vector<uint64_t>{64ull << 10, 1ull << 20})
                              .c_str());
        std::fprintf(stderr, "\r%70s\r", "");
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "\nweft-bench-systems: %s\n", e.what());
        return 1;
    }
}
