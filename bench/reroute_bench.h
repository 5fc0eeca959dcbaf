// make bench: a sustained stream across a cable pulled under it: onto the
// Ethernet fallback (ring8x2) and round it by new tables (torus4x4).
#pragma once
#include <string>

namespace weft::bench {

// A markdown table: a stream's rate before a cable is pulled, while its
// traffic goes round over the fallback relays, and after the cable returns
// (the next fabric built takes it again), as fractions of the clean rate;
// the pause between the pull and the first packet over the fallback; and the
// clean rate at half the link rate (is the link the bottleneck?).
std::string reroute_table(bool quick);

}  // namespace weft::bench
