// make bench, planes: ring all-gather one way and half way, and ring
// all-reduce, on ring8x2 (two cables between neighbours) over one plane and
// over both, every cable shaped to one rate so the wires, not the host, are
// the bottleneck. Returns the JSON rows.
#pragma once
#include <nlohmann/json.hpp>

namespace weft::bench {

nlohmann::json planes_runs(bool quick);

}  // namespace weft::bench
