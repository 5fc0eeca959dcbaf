// make bench: the collectives striped over both planes of ring8x2 against
// one plane, over the EDM and over the fabric, with every cable shaped so
// the wires are the bottleneck.
#pragma once
#include <string>

namespace weft::bench {

// A markdown table: the ring all-reduce's busbw over one plane and over
// both, as fractions of one cable's rate, their ratio, and how much longer
// both planes took at half the rate (2.0: the cables are the bottleneck).
std::string shaped_planes_table(bool quick);

}  // namespace weft::bench
