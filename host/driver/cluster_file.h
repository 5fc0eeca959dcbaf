// Cluster files: which board every chip is, how many chips, and how their
// Ethernet ports are cabled. The bridge wires its links from this, and the
// driver uses it to name ports and chips in reports.
//
// Format (YAML, one document):
//
//   name: ring8             # required, [A-Za-z0-9_-]+
//   board: qemu-virt        # required, one of the built boards (only its DTB is read)
//   meshes:                 # required, at least one
//     - id: 0               # required, a non-negative integer, unique
//       shape: [8, 1]       # required, [width, height], both >= 1
//       topology: ring      # required: line | ring | mesh | torus
//       planes: 1           # optional, 1..board planes; default = all of them
//   links:                  # optional extra cables between any two chips
//     - [0.N, 7.S]          # CHIP.PORT; PORT is a direction with an optional
//                           # plane (E = E0, E1) or pN for raw port number N
//     - ends: [0.E, 1.W]    # a map entry sets wire options for one cable (the
//       drop_rate: 0.05     # keys below, except mtu); when a mesh already
//       mode: compliance    # made exactly this cable, it is not a new cable
//                           # but that one's options
//   link:                   # optional link model; 0 means unshaped
//     mtu: 16384            # payload bytes per TT-link frame, 1..65535
//     bandwidth_gbps: 0     # GB/s (1e9 bytes/s, not bits) per direction, of
//                           # whole frames; 0: as fast as the bridge copies
//     latency_us: 0         # on the wire after a frame's last byte
//     drop_rate: 0          # wire faults of every cable: frames lost, 0..1
//     bit_error_rate: 0     # bits flipped, 0..1 (e.g. 1e-6)
//     seed: 1               # faults are random but reproducible from this
//                           # (each cable draws its own stream from it)
//     mode: ttlink          # ttlink (Go-Back-N: nothing lost) | compliance
//                           # (plain frames: a bad frame is simply lost)
//     flap_period_ms: 0     # a flapping carrier: down flap_down_ms out of
//     flap_down_ms: 0       # every flap_period_ms (down first); 0: steady
//   fabric:                 # optional: the 1D fabric (--transport fabric)
//     topology: ring        # line | ring | auto (default: a ring where the
//                           # chips' ring order closes over a cable, else a
//                           # line); may be a downshift of the cabling
//     planes: 1             # cables per hop it uses; 1 (more: not yet)
//     slots: 8              # per router channel, 1..64
//     packet_bytes: 16384   # payload per packet, a multiple of 64, 64..1 MiB - 64
//     lanes: 4              # worker lanes per router, 1..4
//     router_timeout_ms: 2000  # a packet stuck this long is reported; 0: never
//   systems:                # optional: each mesh is one system (all of one
//     topology: ring_1d     # shape), joined as ring_1d | torus_2d | mesh_2d_no_wrap
//     w: 3                  # 2D: systems per row and rows; omitted, a square
//     h: 2                  # grid (then the count must be one); every pair of
//                           # neighbouring systems needs a cable between them
//
// Chips are numbered mesh by mesh in file order, row-major inside a mesh:
// chip = first_chip + x + y * width. On each plane p < planes, a mesh cables
// E(p) of (x, y) to W(p) of (x + 1, y) and S(p) of (x, y) to N(p) of (x, y + 1):
//   line   one row or one column (a 1xN line runs vertically on N/S)
//   ring   a line plus the cable closing it; needs at least 3 chips
//   mesh   the full grid
//   torus  the grid plus wrap cables in every dimension of size >= 3
// (a size-2 wrap would duplicate the cable already joining the two chips).
//
// Every error that can be tied to a place in the file is reported as
// "<path>:<line>: <message>" with a 1-based line, like a compiler.
#pragma once
#include <stdint.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

#include "driver/board.h"
#include "driver/fabric_spec.h"
#include "driver/mesh.h"
#include "driver/systems_spec.h"

namespace weft {

struct PortRef {
    uint32_t chip = 0;
    uint32_t port = 0;
};

// Wire options of a cable: the link model's, or a links: entry's override.
struct LinkOptions {
    double drop_rate = 0;                           // per frame
    double bit_error_rate = 0;                      // per bit
    uint64_t seed = 1;                              // of the cable's fault stream
    bool compliance = false;                        // compliance mode instead of TT-link's ARQ
    uint32_t flap_period_ms = 0, flap_down_ms = 0;  // a flapping carrier; 0: steady
    double bandwidth_gbps = 0;                      // shaping: GB/s per direction; 0 = unshaped
    double latency_us = 0;                          // 0 = none
};

// What a links: map entry overrides; the rest comes from the link model.
struct LinkOverrides {
    std::optional<double> drop_rate, bit_error_rate;
    std::optional<uint64_t> seed;
    std::optional<bool> compliance;
    std::optional<uint32_t> flap_period_ms, flap_down_ms;
    std::optional<double> bandwidth_gbps, latency_us;
};

struct LinkSpec {
    PortRef a, b;
    int line = 0;  // 1-based line of the file entry that made it; 0 if none
    LinkOverrides overrides;
    int overrides_line = 0;  // of the links: entry that set them; 0 if none
};

struct LinkModel {
    uint32_t mtu = 16384;
    LinkOptions options;  // of every cable without an override
};

// Where a chip sits: the id of its mesh and its coordinates in it.
struct ChipCoord {
    uint32_t mesh = 0;
    uint32_t x = 0, y = 0;
};

struct ClusterSpec {
    std::string name;
    std::string board_name;
    BoardInfo board;
    uint32_t num_chips = 0;
    std::vector<Mesh> meshes;
    std::vector<LinkSpec> links;
    LinkModel link_model;
    FabricSpec fabric;
    SystemsSpec systems;  // the meshes as systems (systems_spec.h); empty: none
    std::string path;

    // The link attached to (chip, port), or nullptr.
    const LinkSpec* link_at(uint32_t chip, uint32_t port) const;
    // Mesh coordinates of a chip; throws weft::Error if there is no such chip.
    ChipCoord chip_coord(uint32_t chip) const;
    // What links[index] runs with: its overrides over the link model. Without
    // its own seed, a cable's seed is derived from the model's and its index,
    // so cables do not drop the same frames in lockstep.
    LinkOptions link_options(size_t index) const;
};

// The cluster files refuse more chips than this, so that a typo such as
// shape: [8000, 8000] fails at once instead of generating millions of links.
inline constexpr uint32_t kMaxClusterChips = 1024;
// A TT-link frame's payload: its header's 16-bit length field says at most this.
inline constexpr uint32_t kMaxLinkMtu = 65535;
// Shaping bounds (the bridge's cable refuses the same): far beyond any link.
inline constexpr double kMaxLinkGBps = 10000;
// The slowest shaped link: 1 KB/s (a 16 KiB frame in 16 s). Slower, a frame
// would hold its wire for days, as if the cable were gone.
inline constexpr double kMinLinkGBps = 1e-6;
inline constexpr double kMaxLinkLatencyUs = 1e6;

// The board of a given name, or weft::Error saying why there is none (the
// parser puts the file and line in front). paths::load_built_board reads
// the build's DTB of that board alone.
using BoardSource = std::function<BoardInfo(const std::string& name)>;
// A source over boards in hand (tests); it refers to `boards`, which must outlive it.
BoardSource boards_in(const std::map<std::string, BoardInfo>& boards);

// Throws weft::Error; see the format above.
ClusterSpec parse_cluster(const std::string& yaml_text, const std::string& path, const BoardSource& boards);
ClusterSpec parse_cluster(const std::string& yaml_text, const std::string& path,
                          const std::map<std::string, BoardInfo>& boards);
// Reads the file at `path` and parses it.
// A cluster file larger than this is refused unread (a 1000-chip file is ~100 KiB).
inline constexpr uint64_t kMaxClusterFileBytes = 1 << 20;
// The text of a cluster file; refuses (naming the file) a directory, a device,
// FIFO or socket, or a file over kMaxClusterFileBytes, without reading it.
std::string read_cluster_text(const std::string& path);
ClusterSpec load_cluster(const std::string& path, const BoardSource& boards);
ClusterSpec load_cluster(const std::string& path, const std::map<std::string, BoardInfo>& boards);

// "E" for the E port of plane 0, "E1" for plane 1, "p<N>" for a port the
// board does not have.
std::string port_name(const BoardInfo& board, uint32_t port);
// The inverse: "E", "E1", "p3" or a bare port number "1"; -1 if the board has
// no such port.
int port_named(const BoardInfo& board, const std::string& name);

}  // namespace weft
