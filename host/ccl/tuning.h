// CCL tunables (DESIGN section 7): the default in code, then a tuning file,
// then the environment. WEFT_CCL_CONFIG names the file, a YAML map of the
// tunables' names in lower case without WEFT_, e.g.
//     ctring_chunk_size: 65536
//     ccl_slots: 4
// A WEFT_* variable that is set wins over the file, as CTRING's CVARs win
// over its configuration.
#pragma once
#include <string>
#include <vector>

namespace weft::ccl {

// The tunables a file may set, by their environment names.
const std::vector<std::string>& tunable_names();

// The value of tunable `env_name` (one of tunable_names()): the environment,
// else the tuning file, else `fallback`. Throws weft::Error naming the
// variable, or the file and line, for a value that is not a whole number or
// is below `min`, and for a file that does not parse or names an unknown key.
long long tunable(const char* env_name, long long fallback, long long min);

}  // namespace weft::ccl
