// weft run / weft bench: collective ops from the command line.
#pragma once
#include <string>
#include <vector>

#include "driver/cluster.h"

namespace weft::cli {

struct CclArgs {
    std::string op;
    uint64_t size = 0;
    std::string dtype = "f32", redop = "sum", algo = "auto";
    uint32_t root = 0;
    std::string shape;  // "a,b,c,d"
    uint32_t dim = 0;
    uint32_t iters = 0, warmup = 1;
    uint64_t min_bytes = 1024, max_bytes = 0;
    uint32_t factor = 2;
    bool all_algos = false, check = true, fit = false;
    std::string json, csv, png;
};

int cmd_run(Cluster& cluster, const CclArgs& a);
int cmd_bench(Cluster& cluster, const CclArgs& a);

}  // namespace weft::cli
