// The CCL tuning file WEFT_CCL_CONFIG names (docs/architecture.md, "Collectives"): a YAML map of
// tunables by their file keys (the knob's name in lower case without WEFT_),
//     ctring_chunk_size: 65536
//     ccl_slots: 4
// read once per path. A set WEFT_* variable wins over the file, as CTRING's
// CVARs win over its configuration; knobs::integer() applies that order.
#pragma once
#include <optional>
#include <string>

#include "common/knobs.h"

namespace weft::knobs {

struct TuningValue {
    std::string text;
    std::string where;  // "FILE:LINE: key", for messages
};

// The file's value for tunable `k`, if it sets one. Throws KnobError naming
// the file and line for a file that does not parse or names an unknown key.
std::optional<TuningValue> tuning_file_value(const std::string& path, const Knob& k);

}  // namespace weft::knobs
