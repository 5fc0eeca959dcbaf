// A tensor as the chips hold it (the CCL document's layouts), and where each
// of its pages lives: the host places and reads tensors with it, and a worker
// kernel finds a page's bank or core and offset with the same functions.
//
// The tensor is seen as 2-D: rows = shape[0] * shape[1] * shape[2] (each
// shape[2] padded to 32 with tiles), cols = shape[3] (padded to 32 with
// tiles). It is cut into pages: a 32x32 tile, or a run of one row (the whole
// width, or a shard's width when sharded by width or block). Pages are
// numbered row-major over that grid of pages, whatever the memory, so two
// layouts with the same grid of pages reshard page for page.
//
// Memory: interleaved, page p in bank p % banks at (p / banks) * page bytes
// of that bank's share; or sharded over a grid of cores, each core's L1
// holding one shard (a block of rows, of columns, or both) with its pages in
// row-major order within the shard. A place is a unit (bank or core, in grid
// order: y * grid_x + x) and an offset in that unit's buffer; the caller adds
// the unit's base address.
#pragma once
#include <stdint.h>

#include "weft/abi/commands.h"
#include "weft/abi/kernel_args.h"

namespace weft::abi {

inline constexpr uint32_t kTileSide = 32;  // a tile is 32x32 elements
inline constexpr uint32_t kFaceSide = 16;  // stored as four 16x16 faces, row-major each
inline constexpr uint32_t kTensorDims = 4;

enum TensorLayout : uint8_t { kRowMajorPages = 0, kTilePages = 1 };
enum TensorMemory : uint8_t { kInterleaved = 0, kHeightSharded = 1, kWidthSharded = 2, kBlockSharded = 3 };

struct TensorSpec {
    uint32_t shape[kTensorDims];  // outermost first; a matrix is {1, 1, rows, cols}
    uint16_t dtype;               // DataType
    uint8_t layout;               // TensorLayout
    uint8_t memory;               // TensorMemory
    uint32_t banks;               // interleaved: DRAM banks the pages go round
    uint16_t grid_x, grid_y;      // sharded: the core grid (units y * grid_x + x)
    uint32_t shard_rows;          // sharded: a shard's rows and columns, in elements
    uint32_t shard_cols;          //   (whole pages: multiples of 32 with tiles)
    uint32_t pad;
};
static_assert(sizeof(TensorSpec) == 40, "TensorSpec layout");

// Where a page lives: its bank or core, and the offset in that unit's buffer.
struct TensorPlace {
    uint32_t unit;
    uint64_t offset;
};

constexpr uint32_t tensor_round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

constexpr bool tensor_sharded(const TensorSpec& t) { return t.memory != kInterleaved; }
constexpr uint64_t tensor_rows(const TensorSpec& t) {
    const uint32_t h = t.layout == kTilePages ? tensor_round_up(t.shape[2], kTileSide) : t.shape[2];
    return uint64_t(t.shape[0]) * t.shape[1] * h;
}
constexpr uint32_t tensor_cols(const TensorSpec& t) {
    return t.layout == kTilePages ? tensor_round_up(t.shape[3], kTileSide) : t.shape[3];
}
// A page's extent in elements.
constexpr uint32_t page_rows(const TensorSpec& t) { return t.layout == kTilePages ? kTileSide : 1; }
constexpr uint32_t page_cols(const TensorSpec& t) {
    if (t.layout == kTilePages) return kTileSide;
    return t.memory == kWidthSharded || t.memory == kBlockSharded ? t.shard_cols : tensor_cols(t);
}
constexpr uint32_t page_bytes(const TensorSpec& t) { return page_rows(t) * page_cols(t) * dtype_size(t.dtype); }
// The grid of pages: rows of pages, and pages in a row.
constexpr uint64_t page_grid_rows(const TensorSpec& t) { return tensor_rows(t) / page_rows(t); }
constexpr uint32_t page_grid_cols(const TensorSpec& t) {
    return page_cols(t) ? (tensor_cols(t) + page_cols(t) - 1) / page_cols(t) : 0;
}
constexpr uint64_t tensor_pages(const TensorSpec& t) { return page_grid_rows(t) * page_grid_cols(t); }

// A shard's extent: a whole column of rows or row of columns where the
// memory does not cut that way.
constexpr uint64_t shard_rows_of(const TensorSpec& t) {
    return t.memory == kWidthSharded ? tensor_rows(t) : t.shard_rows;
}
constexpr uint32_t shard_cols_of(const TensorSpec& t) {
    return t.memory == kHeightSharded ? tensor_cols(t) : t.shard_cols;
}
// How many shards the tensor cuts into, down and across.
constexpr uint64_t shards_down(const TensorSpec& t) {
    return shard_rows_of(t) ? (tensor_rows(t) + shard_rows_of(t) - 1) / shard_rows_of(t) : 0;
}
constexpr uint32_t shards_across(const TensorSpec& t) {
    return shard_cols_of(t) ? (tensor_cols(t) + shard_cols_of(t) - 1) / shard_cols_of(t) : 0;
}

// The unit holding the shard `down` blocks of rows and `across` blocks of
// columns in: height and width shards go to the cores in grid order, block
// shards to the core at (x = across, y = down).
constexpr uint32_t shard_unit(const TensorSpec& t, uint64_t down, uint32_t across) {
    if (t.memory == kHeightSharded) return uint32_t(down);
    if (t.memory == kWidthSharded) return across;
    return uint32_t(down) * t.grid_x + across;
}

constexpr TensorPlace tensor_page_place(const TensorSpec& t, uint64_t page) {
    if (!tensor_sharded(t)) return {uint32_t(page % t.banks), page / t.banks * page_bytes(t)};
    const uint64_t row = page / page_grid_cols(t) * page_rows(t);            // its first element's row
    const uint64_t col = uint64_t(page % page_grid_cols(t)) * page_cols(t);  // and column
    const uint64_t down = row / shard_rows_of(t), across = col / shard_cols_of(t);
    // Its place among the shard's pages, row-major in the shard.
    const uint64_t in_row = (row - down * shard_rows_of(t)) / page_rows(t);
    const uint64_t in_col = (col - across * shard_cols_of(t)) / page_cols(t);
    const uint64_t per_row = shard_cols_of(t) / page_cols(t);
    return {shard_unit(t, down, uint32_t(across)), (in_row * per_row + in_col) * page_bytes(t)};
}

// The bytes each unit must hold: a bank's share of the pages, or a whole shard.
constexpr uint64_t tensor_unit_bytes(const TensorSpec& t) {
    if (!tensor_sharded(t)) return t.banks ? (tensor_pages(t) + t.banks - 1) / t.banks * page_bytes(t) : 0;
    return shard_rows_of(t) / page_rows(t) * (shard_cols_of(t) / page_cols(t)) * uint64_t(page_bytes(t));
}
// The units that hold pages.
constexpr uint32_t tensor_units(const TensorSpec& t) {
    if (!tensor_sharded(t)) return t.banks;
    if (t.memory == kBlockSharded) return uint32_t(shards_down(t) - 1) * t.grid_x + shards_across(t);
    return uint32_t(shards_down(t) * shards_across(t));
}

// A tensor where a kernel finds it: unit u's buffer at base + u * unit_stride
// (a DRAM bank, or a worker core's L1 at the same offset in each: both
// boards space banks and worker L1s evenly).
struct TensorAt {
    TensorSpec spec;
    uint64_t base;
    uint64_t unit_stride;
};
static_assert(sizeof(TensorAt) == 56, "TensorAt layout");

constexpr uint64_t tensor_page_address(const TensorAt& t, uint64_t page) {
    const TensorPlace p = tensor_page_place(t.spec, page);
    return t.base + p.unit * t.unit_stride + p.offset;
}

// The tensor_reshard kernel: copies every page of `from` to its place in `to`
// (the same tensor and grid of pages, in another memory) by the NoC.
struct ReshardArgs {
    TensorAt from;
    TensorAt to;
};
static_assert(kIsKernelArgs<ReshardArgs> && sizeof(ReshardArgs) == 112, "ReshardArgs layout");

// Where the page `p` of rank `k`'s part lands when the parts are concatenated
// along shape[dim] into `whole` (an all-gather, resharding as it goes): the
// whole's page, the byte offset in it, and the bytes of the part's page that
// belong to the tensor (a row-major page may end in padding). The host
// checks every page of a pair of specs lands inside one page
// (tensor_ops.h); the kernel then trusts it.
struct GatheredPage {
    uint64_t page;
    uint32_t offset, bytes;
};
constexpr GatheredPage gathered_page(const TensorSpec& part, const TensorSpec& whole, uint32_t dim, uint32_t k,
                                     uint64_t p) {
    const uint64_t part_h = tensor_rows(part) / (uint64_t(part.shape[0]) * part.shape[1]);
    const uint64_t whole_h = tensor_rows(whole) / (uint64_t(whole.shape[0]) * whole.shape[1]);
    const uint64_t row = p / page_grid_cols(part) * page_rows(part);
    const uint64_t col = uint64_t(p % page_grid_cols(part)) * page_cols(part);
    uint64_t at[kTensorDims] = {row / part_h / part.shape[1], row / part_h % part.shape[1], row % part_h, col};
    at[dim] += uint64_t(k) * part.shape[dim];
    const uint64_t r = (at[0] * whole.shape[1] + at[1]) * whole_h + at[2], c = at[3];
    const uint32_t eb = dtype_size(part.dtype);
    const uint64_t left = part.layout == kTilePages || col + page_cols(part) <= part.shape[3]
                              ? page_cols(part)
                              : part.shape[3] - col;
    return {r / page_rows(whole) * page_grid_cols(whole) + c / page_cols(whole),
            uint32_t(c % page_cols(whole) * eb), uint32_t(left * page_rows(part) * eb)};
}

// The tensor_split kernel: cuts `whole` into `ranks` parts along
// shape[dim], part k into its own tensor `part` at part.base + k * stride
// (gathered_page's map, read the other way): the first step of a tensor's
// reduce-scatter through the flat one (host/tensor/tensor_flat.h). With
// `join`, the other way: the parts into `whole` (the last step of an
// all-gather through the flat one).
struct TensorSplitArgs {
    TensorAt whole;
    TensorAt part;
    uint32_t dim, ranks;
    uint64_t stride;
    uint32_t join, pad;
};
static_assert(kIsKernelArgs<TensorSplitArgs> && sizeof(TensorSplitArgs) == 136, "TensorSplitArgs layout");

// The tensor_all_gather kernel's way to one peer over the fabric (its route
// as the fabric builder gives it).
struct TensorPeerRoute {
    uint16_t mesh, chip;
    uint8_t direction;  // the connection: 2D by compass; 1D forward (0), backward (1)
    uint8_t hops, ttl, pad;
    uint32_t route;
};
static_assert(sizeof(TensorPeerRoute) == 12, "TensorPeerRoute layout");
// Chips one tensor all-gather spans: the fabric's 64 chips a mesh, and
// 4mesh3x3's 36 over several; the routes fill 768 of a kernel's 4 KiB of
// arguments.
inline constexpr uint32_t kTensorMaxPeers = 64;

// How tensor_all_gather moves the parts: each page straight to every peer;
// round a ring of one-hop neighbours (rank + 1 and rank - 1), half the pages
// each way, each chip passing on what it received; or along a line of
// one-hop neighbours (no wrap), every part both ways, each chip passing on
// the parts from behind it.
enum TensorGatherAlgo : uint32_t { kGatherDirect = 0, kGatherRing = 1, kGatherLine = 2 };

// The tensor_all_gather kernel: this chip's `input` (rank `rank` of
// `ranks`) is written into `output` at the same addresses on every chip,
// concatenated along shape[dim], by the fabric. `done_sem` (this core's L1,
// two words): direct, [0] counts the peers whose last page has landed; ring
// and line, [0] the steps received from rank - 1, [1] from rank + 1.
struct TensorAllGatherArgs {
    TensorAt input;
    TensorAt output;
    uint32_t rank, ranks, dim, algo;
    uint64_t done_sem;
    uint64_t connection[4];  // abi::FabricWorkerConnection per direction; 0: none
    TensorPeerRoute peers[kTensorMaxPeers];  // by rank
};
static_assert(kIsKernelArgs<TensorAllGatherArgs> && sizeof(TensorAllGatherArgs) == 936,
              "TensorAllGatherArgs layout");

// The tensor_send_recv kernel: a chip that sends writes each page of
// `input` (its own) by the fabric to its place in `output` on its peer,
// resharding in flight as all-gather does (the two may differ in memory, not
// in shape, dtype or page layout), and its last page increments `peer_sem`
// there; a chip that receives waits until its own `done_sem` (this core's
// L1) reaches 1. A chip may do both (a shift round a ring), sending first.
enum TensorSendRecvRole : uint32_t { kTensorSend = 1, kTensorReceive = 2 };
struct TensorSendRecvArgs {
    TensorAt input;
    TensorAt output;
    uint32_t role, pad;      // kTensorSend | kTensorReceive
    uint64_t done_sem;       // receiving: the word the sender's last page increments
    uint64_t peer_sem;       // sending: the peer's done_sem
    uint64_t connection[4];  // sending: abi::FabricWorkerConnection per direction; 0: none
    TensorPeerRoute peer;    // sending: the route to the peer
    uint32_t pad2;
};
static_assert(kIsKernelArgs<TensorSendRecvArgs> && sizeof(TensorSendRecvArgs) == 184,
              "TensorSendRecvArgs layout");

// Element (r, c) of a 32x32 tile: its index in the tile's four 16x16 faces
// (top-left, top-right, bottom-left, bottom-right, each row-major).
constexpr uint32_t tile_index(uint32_t r, uint32_t c) {
    const uint32_t face = (r / kFaceSide) * 2 + c / kFaceSide;
    return face * kFaceSide * kFaceSide + (r % kFaceSide) * kFaceSide + c % kFaceSide;
}

}  // namespace weft::abi
