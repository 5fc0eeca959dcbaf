// The WEFT_* environment variables: every one is declared once, here, with
// its type, default, valid range and meaning, and read only through this
// registry, so a bad value is refused naming the variable and its range, and
// `weft help env` lists them all from this table.
//
//     const uint32_t slots = knobs::integer(knobs::knob("WEFT_CCL_SLOTS"));
//
// knob() runs at compile time: a name missing from the table does not build.
#pragma once
#include <climits>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"

namespace weft::knobs {

enum class Type {
    kInteger,  // a whole number in [min, max], a multiple of step
    kReal,     // a number in [min, max]
    kFlag,     // on when set to anything but empty or 0
    kText,
    kPath,
    kProgram,  // a path, or a name looked up on PATH; check() refuses one that runs nothing
};

// Which program reads a knob; `weft help env` groups them by it.
enum class Reader { kCluster, kBridge, kCcl, kBench, kTest };

inline constexpr long long kUnbounded = LLONG_MAX;

struct Knob {
    std::string_view name;
    Type type;
    Reader reader;
    std::string_view meaning;                       // one line
    long long fallback = 0;                         // integers
    long long min = 0, max = kUnbounded, step = 1;  // integers and reals
    std::string_view text_fallback = {};            // texts and paths; empty: none
    std::string_view shown_default = {};            // where the code computes the default at run time
    bool tunable = false;                           // WEFT_CCL_CONFIG's file may set it too
};

// clang-format off
inline constexpr Knob kKnobs[] = {
    {.name = "WEFT_RUN_DIR", .type = Type::kPath, .reader = Reader::kCluster,
     .meaning = "a cluster's run directory: control socket, logs, consoles (weft --run-dir overrides)",
     .shown_default = "/tmp/weft-UID"},
    {.name = "WEFT_BUILD_DIR", .type = Type::kPath, .reader = Reader::kCluster,
     .meaning = "the build tree with bin/, firmware/ and boards/",
     .shown_default = "the tree the running binary is in"},
    {.name = "WEFT_DEBUG", .type = Type::kText, .reader = Reader::kCluster,
     .meaning = "logs on stderr, as NCCL_DEBUG: warn, info (clusters, ops, fabrics) or trace (every kernel launch)"},
    {.name = "WEFT_DEBUG_FILE", .type = Type::kPath, .reader = Reader::kCluster,
     .meaning = "the WEFT_DEBUG logs to this file instead (%h: host name, %p: process id)"},
    {.name = "WEFT_KEEP_RUN_DIR", .type = Type::kFlag, .reader = Reader::kCluster,
     .meaning = "keep a temporary cluster's run directory (logs, consoles) when it stops"},
    {.name = "WEFT_ACTIVE_WAKE_US", .type = Type::kInteger, .reader = Reader::kCluster,
     .meaning = "a sleeping core's fallback wake-up alarm in us, set by ops that run on the cluster",
     .fallback = 0, .min = 1, .max = UINT32_MAX, .shown_default = "the firmware's 5000"},
    {.name = "WEFT_CLAIM_WAIT_MS", .type = Type::kInteger, .reader = Reader::kCluster,
     .meaning = "how long an op waits in ms for another client to let go of the cluster",
     .fallback = 30000, .min = 0, .max = 86400000},
    {.name = "WEFT_ALLOW_ROOT", .type = Type::kFlag, .reader = Reader::kCluster,
     .meaning = "a cluster started now lets root reach it too (otherwise its owner only)"},
    {.name = "WEFT_GDB", .type = Type::kProgram, .reader = Reader::kCluster,
     .meaning = "the GDB that weft gdb runs", .text_fallback = "gdb-multiarch"},
    {.name = "WEFT_ADDR2LINE", .type = Type::kProgram, .reader = Reader::kCluster,
     .meaning = "the addr2line that names the function and line of a fault's pc",
     .text_fallback = "riscv64-unknown-elf-addr2line"},
    {.name = "WEFT_QEMU", .type = Type::kProgram, .reader = Reader::kBridge,
     .meaning = "the QEMU binary run for each chip; unset: the one its chip's devicetree names "
                "(qemu-system-riscv64, qemu-system-riscv32)"},
    {.name = "WEFT_QEMU_ACCEL", .type = Type::kText, .reader = Reader::kBridge,
     .meaning = "QEMU's -accel for each chip", .text_fallback = "tcg,thread=single"},
    {.name = "WEFT_BRIDGE_SPIN", .type = Type::kInteger, .reader = Reader::kBridge,
     .meaning = "idle engine passes the bridge spins before it naps",
     .fallback = 256, .min = 0, .max = UINT32_MAX},
    {.name = "WEFT_BRIDGE_NAP_US", .type = Type::kInteger, .reader = Reader::kBridge,
     .meaning = "the bridge engine's nap in us while an op is likely still going, cut short when a frame on a "
                "shaped wire is due (0: no naps)",
     .fallback = 50, .min = 0, .max = 1000000},
    {.name = "WEFT_CCL_CONFIG", .type = Type::kPath, .reader = Reader::kCcl,
     .meaning = "a YAML tuning file for the tunables that list a tuning file key (a set variable wins)"},
    {.name = "WEFT_CCL_TRACE", .type = Type::kText, .reader = Reader::kCcl,
     .meaning = "any value: each op's launch and kernel times on stderr; 2: each kernel's time too"},
    {.name = "WEFT_CCL_SLOTS", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "EDM buffer slots per channel", .fallback = 8, .min = 1, .max = 64, .tunable = true},
    {.name = "WEFT_CCL_SLOT_SIZE", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "bytes per EDM buffer slot (the largest message); unset: the most, up to the default, with which "
                "two channels fit an ERISC core's L1 (64 KiB on qemu-virt32)",
     .fallback = 128 * 1024, .min = 16, .max = 0xfffffff0, .step = 16, .tunable = true},
    {.name = "WEFT_CCL_WORKERS_PER_LINK", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "lanes per cable direction at most, each its own workers and EDM channel",
     .fallback = 1, .min = 1, .max = UINT32_MAX, .tunable = true},
    {.name = "WEFT_CCL_PLANES", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "cables per hop at most where neighbours have several (0: all)",
     .fallback = 0, .min = 0, .max = UINT32_MAX, .tunable = true},
    {.name = "WEFT_CTRING_PIPELINE_DEPTH", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING pipeline depth (0: by message size)",
     .fallback = 0, .min = 0, .max = UINT32_MAX, .tunable = true},
    {.name = "WEFT_CTRING_CHUNK_SIZE", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING chunk size in bytes (0: the message over its chunks)", .fallback = 0, .tunable = true},
    {.name = "WEFT_CTRING_NUM_CHUNKS", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING chunks per partition (0: pipeline depth x ranks)", .fallback = 0, .tunable = true},
    {.name = "WEFT_CTRING_MAX_BDP", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING bytes in flight at most (chunk size x chunks)",
     .fallback = 128ll << 20, .min = 1, .tunable = true},
    {.name = "WEFT_ALL_REDUCE_ALGO", .type = Type::kText, .reader = Reader::kCcl,
     .meaning = "the algorithm all_reduce's --algo auto runs, e.g. hierarchical (unset: the cost model picks)",
     .tunable = true},
    {.name = "WEFT_HIERARCHICAL_ROOT", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "the hierarchical all-reduce's root: the chip at this index of every system's mesh (-1: its center)",
     .fallback = -1, .min = -1, .max = 1023, .tunable = true},
    {.name = "WEFT_CTRING_MIN_SHARD_SIZE", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING's smallest shard in bytes", .fallback = 16, .tunable = true},
    {.name = "WEFT_CTRING_BIDIR_AG_MAX_SIZE", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING's all-gather goes both ways up to this many bytes (0: never, -1: always)",
     .fallback = -1, .min = -1, .tunable = true},
    {.name = "WEFT_CTRING_BIDIR_RS_MAX_SIZE", .type = Type::kInteger, .reader = Reader::kCcl,
     .meaning = "CTRING's reduce-scatter goes both ways up to this many bytes (0: never, -1: always)",
     .fallback = -1, .min = -1, .tunable = true},
    {.name = "WEFT_BENCH_QUICK", .type = Type::kFlag, .reader = Reader::kBench,
     .meaning = "a quick smoke run of the benches; its results go to /tmp, never bench/results"},
    {.name = "WEFT_BENCH_OUT", .type = Type::kPath, .reader = Reader::kBench,
     .meaning = "where the benches write bench/results/ and data/cost_model/ (make bench: the source tree); unset: "
                "the build tree, so a copied build tree never writes into the source it came from"},
    {.name = "WEFT_BENCH_REROUTE_ONLY", .type = Type::kFlag, .reader = Reader::kBench,
     .meaning = "weft-bench-fabric runs only its reroute table (a cable pulled under a stream)"},
    {.name = "WEFT_BENCH_PLANES_ONLY", .type = Type::kFlag, .reader = Reader::kBench,
     .meaning = "weft-bench-fabric runs only its table of ring8x2's two planes against one, shaped"},
    {.name = "WEFT_BENCH_SKIP_EDM", .type = Type::kFlag, .reader = Reader::kBench,
     .meaning = "weft-bench-platform leaves out the EDM link table"},
    {.name = "WEFT_BENCH_LINK_GBPS", .type = Type::kReal, .reader = Reader::kBench,
     .meaning = "weft-bench-platform --edm: the link shaped to this many GB/s", .min = 0,
     .shown_default = "unshaped"},
    {.name = "WEFT_SOURCE_DIR", .type = Type::kPath, .reader = Reader::kTest,
     .meaning = "the source tree the tests read (ctest sets it)", .text_fallback = "."},
};
// clang-format on

consteval const Knob& knob(std::string_view name) {
    for (const Knob& k : kKnobs)
        if (k.name == name) return k;
    throw "not a knob: declare it in kKnobs";  // evaluated at compile time: does not build
}

// A bad WEFT_* value (or tuning file entry): the message names the variable
// and the range it must be in.
class KnobError : public Error {
public:
    using Error::Error;
};

// Each returns the environment's value, else (for tunables) the tuning
// file's, else the default; an empty variable counts as unset.
long long integer(const Knob& k);
double real(const Knob& k);
bool flag(const Knob& k);
std::string text(const Knob& k);  // "" where there is no default (the caller computes one)
bool is_set(const Knob& k);

// `value` checked against k's range; `where` names its source in the message.
long long parse_integer(const Knob& k, const std::string& value, const std::string& where);

// Every knob `reader` reads: a bad one is refused before anything starts.
void check(Reader reader);

// For messages and `weft help env`.
std::string range_text(const Knob& k);    // e.g. "a whole number from 1 to 64"
std::string default_text(const Knob& k);  // e.g. "8", "none", "/tmp/weft-UID"
std::string_view reader_name(Reader r);
std::string file_key(const Knob& k);  // the tuning file's key: WEFT_CCL_SLOTS -> ccl_slots

}  // namespace weft::knobs
