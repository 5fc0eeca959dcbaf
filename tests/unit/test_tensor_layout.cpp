// Tensors in the chips' layouts (include/weft/abi/tensor.h, host/tensor):
// where every element lands, for every layout and memory, against a plain
// reference that enumerates pages and shards one by one instead of using the
// accessor's arithmetic; shapes that are not multiples of 32, one shard per
// core, more cores or banks than pages; host data placed and gathered back;
// tiles in their four faces; two layouts with one grid of pages resharded
// page for page; specs that cannot fit refused by name.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "tensor/tensor_layout.h"
#include "tensor/tensor_ops.h"
#include "tensor/tensor_space.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;
using abi::TensorSpec;

namespace {

using PageGrid = std::map<std::pair<uint64_t, uint64_t>, abi::TensorPlace>;  // (page row, page column) -> place

// Pages go round the banks in row-major order, each bank's one after another.
PageGrid reference_interleaved(const TensorSpec& t) {
    PageGrid g;
    uint64_t n = 0;
    for (uint64_t r = 0; r < abi::page_grid_rows(t); ++r)
        for (uint64_t c = 0; c < abi::page_grid_cols(t); ++c, ++n)
            g[{r, c}] = {uint32_t(n % t.banks), n / t.banks * abi::page_bytes(t)};
    return g;
}

// Walks the shards as the spec's memory lays them on the cores, and each
// shard's pages row-major, one after another in its core.
PageGrid reference_sharded(const TensorSpec& t) {
    const uint64_t rows = abi::tensor_rows(t), cols = abi::tensor_cols(t);
    const uint64_t sr = t.memory == abi::kWidthSharded ? rows : t.shard_rows;
    const uint64_t sc = t.memory == abi::kHeightSharded ? cols : t.shard_cols;
    const uint64_t pr = abi::page_rows(t), pc = abi::page_cols(t);
    PageGrid g;
    uint32_t unit = 0;
    for (uint64_t top = 0; top < rows; top += sr) {
        for (uint64_t left = 0, across = 0; left < cols; left += sc, ++across) {
            const uint32_t core = t.memory == abi::kBlockSharded ? uint32_t(top / sr * t.grid_x + across) : unit++;
            uint64_t offset = 0;
            for (uint64_t r = top; r < top + sr; r += pr)
                for (uint64_t c = left; c < left + sc; c += pc, offset += abi::page_bytes(t))
                    if (r < rows && c < cols) g[{r / pr, c / pc}] = {core, offset};
        }
    }
    return g;
}

// The row-major data of t: element i holds i (as many bytes of it as fit).
std::vector<uint8_t> counting(const TensorSpec& t) {
    const uint32_t eb = abi::dtype_size(t.dtype);
    std::vector<uint8_t> d(tensor::elements(t) * eb);
    for (uint64_t i = 0; i < tensor::elements(t); ++i) memcpy(&d[i * eb], &i, eb);
    return d;
}

// Every element where the reference says, padding zero, and back again.
void check_layout(const TensorSpec& t) {
    const PageGrid ref = abi::tensor_sharded(t) ? reference_sharded(t) : reference_interleaved(t);
    assert_int_equal(ref.size(), abi::tensor_pages(t));
    for (const auto& [at, want] : ref) {
        const abi::TensorPlace got = abi::tensor_page_place(t, at.first * abi::page_grid_cols(t) + at.second);
        if (got.unit != want.unit || got.offset != want.offset)
            fail_msg("%s: page (%llu, %llu) at unit %u offset %llu, not unit %u offset %llu",
                     tensor::describe(t).c_str(), (unsigned long long)at.first, (unsigned long long)at.second,
                     got.unit, (unsigned long long)got.offset, want.unit, (unsigned long long)want.offset);
        if (got.offset + abi::page_bytes(t) > abi::tensor_unit_bytes(t)) fail_msg("a page past its unit's bytes");
    }
    const std::vector<uint8_t> data = counting(t);
    const tensor::UnitImages units = tensor::place(t, data.data());
    // One element by hand: the last one, at its page's place.
    const uint32_t eb = abi::dtype_size(t.dtype);
    const uint64_t last = tensor::elements(t) - 1, w = t.shape[3], h = t.shape[2];
    const uint64_t slice = last / w / h, row = last / w % h, col = last % w;
    const uint64_t r = slice * (abi::tensor_rows(t) / (uint64_t(t.shape[0]) * t.shape[1])) + row;
    const abi::TensorPlace page = ref.at({r / abi::page_rows(t), col / abi::page_cols(t)});
    const uint64_t in_page = t.layout == abi::kTilePages ? abi::tile_index(uint32_t(r % 32), uint32_t(col % 32))
                                                         : col % abi::page_cols(t);
    assert_memory_equal(&units.at(page.unit)[page.offset + in_page * eb], &data[last * eb], eb);
    assert_true(tensor::gather(t, units) == data);
}

TensorSpec spec(std::vector<uint32_t> shape, abi::TensorLayout layout, abi::TensorMemory memory) {
    TensorSpec t = tensor::matrix(1, 1, abi::kF32, layout);
    for (size_t d = 0; d < 4; ++d) t.shape[d] = shape.at(d);
    t.memory = memory;
    return t;
}

void test_interleaved_pages_go_round_the_banks(void**) {
    for (abi::TensorLayout layout : {abi::kRowMajorPages, abi::kTilePages})
        for (uint32_t banks : {1u, 3u, 8u, 100u})  // 100: more banks than pages
            for (const auto& shape : std::vector<std::vector<uint32_t>>{{1, 1, 64, 96}, {2, 3, 50, 70}, {1, 1, 1, 1}}) {
                TensorSpec t = spec(shape, layout, abi::kInterleaved);
                t.banks = banks;
                check_layout(t);
            }
}

void test_height_width_and_block_shards(void**) {
    struct Case {
        abi::TensorMemory memory;
        uint16_t gx, gy;
        uint32_t rows, cols;
    };
    // Shapes 100 x 200 and 2 x 3 x 40 x 72: not multiples of 32, the last shards partly padding.
    for (abi::TensorLayout layout : {abi::kRowMajorPages, abi::kTilePages})
        for (const auto& shape : std::vector<std::vector<uint32_t>>{{1, 1, 100, 200}, {2, 3, 40, 72}})
            for (const Case& c : {Case{abi::kHeightSharded, 4, 4, 32, 0}, Case{abi::kHeightSharded, 8, 8, 64, 0},
                                  Case{abi::kWidthSharded, 8, 1, 0, 32}, Case{abi::kWidthSharded, 3, 3, 0, 96},
                                  Case{abi::kBlockSharded, 8, 8, 64, 64}, Case{abi::kBlockSharded, 7, 5, 96, 32}}) {
                TensorSpec t = spec(shape, layout, c.memory);
                t.grid_x = c.gx, t.grid_y = c.gy, t.shard_rows = c.rows, t.shard_cols = c.cols;
                check_layout(t);
            }
}

// As many shards as cores, and far more cores than pages.
void test_one_shard_per_core_and_more_cores_than_pages(void**) {
    TensorSpec t = spec({1, 1, 128, 64}, abi::kTilePages, abi::kBlockSharded);
    t.grid_x = 2, t.grid_y = 4, t.shard_rows = 32, t.shard_cols = 32;
    check_layout(t);
    assert_int_equal(abi::tensor_units(t), 8);
    assert_int_equal(abi::tensor_unit_bytes(t), abi::page_bytes(t));
    TensorSpec few = spec({1, 1, 32, 32}, abi::kTilePages, abi::kHeightSharded);
    few.grid_x = 8, few.grid_y = 8, few.shard_rows = 32;
    check_layout(few);
    assert_int_equal(abi::tensor_units(few), 1);
}

// A tile's four 16x16 faces: top-left, top-right, bottom-left, bottom-right.
void test_tiles_are_four_faces(void**) {
    assert_int_equal(abi::tile_index(0, 15), 15);
    assert_int_equal(abi::tile_index(0, 16), 256);
    assert_int_equal(abi::tile_index(1, 16), 272);
    assert_int_equal(abi::tile_index(16, 0), 512);
    assert_int_equal(abi::tile_index(31, 31), 1023);
    for (uint32_t eb : {2u, 4u}) {
        std::vector<uint8_t> rows(32 * 32 * eb);
        for (size_t i = 0; i < rows.size(); ++i) rows[i] = uint8_t(i * 7 + 3);
        const std::vector<uint8_t> tile = tensor::tilize(rows.data(), eb);
        assert_memory_equal(&tile[256 * eb], &rows[16 * eb], eb);  // (0, 16) starts face 1
        assert_true(tensor::untilize(tile.data(), eb) == rows);
    }
}

// Interleaved tiles and block-sharded tiles share one grid of pages: moving
// each page from where one layout keeps it to where the other does gives the
// other's bytes (a reshard in flight is a copy per page).
void test_layouts_with_one_page_grid_reshard_page_for_page(void**) {
    TensorSpec from = spec({1, 2, 64, 96}, abi::kTilePages, abi::kInterleaved);
    from.banks = 5;
    TensorSpec to = spec({1, 2, 64, 96}, abi::kTilePages, abi::kBlockSharded);
    to.grid_x = 3, to.grid_y = 2, to.shard_rows = 64, to.shard_cols = 32;
    assert_int_equal(abi::tensor_pages(from), abi::tensor_pages(to));
    const std::vector<uint8_t> data = counting(from);
    const tensor::UnitImages a = tensor::place(from, data.data()), want = tensor::place(to, data.data());
    tensor::UnitImages b(want.size(), std::vector<uint8_t>(want[0].size()));
    for (uint64_t p = 0; p < abi::tensor_pages(from); ++p) {
        const abi::TensorPlace s = abi::tensor_page_place(from, p), d = abi::tensor_page_place(to, p);
        memcpy(&b[d.unit][d.offset], &a[s.unit][s.offset], abi::page_bytes(from));
    }
    assert_true(b == want);
}

// Every rank's pages moved as the all-gather kernel moves them (by
// gathered_page, into the gathered layout's places) give the parts
// concatenated, for tiles and rows, each dimension, memories that differ.
void test_all_gather_pages_land_where_the_concatenation_says(void**) {
    struct Case {
        std::vector<uint32_t> shape;
        abi::TensorLayout layout;
        uint32_t dim;
        abi::TensorMemory out;
    };
    for (const Case& c : {Case{{1, 1, 64, 32}, abi::kTilePages, 3, abi::kBlockSharded},
                          Case{{2, 1, 40, 64}, abi::kTilePages, 0, abi::kInterleaved},
                          Case{{1, 2, 32, 96}, abi::kTilePages, 2, abi::kHeightSharded},
                          Case{{1, 3, 5, 7}, abi::kRowMajorPages, 3, abi::kInterleaved},
                          Case{{1, 1, 9, 16}, abi::kRowMajorPages, 3, abi::kWidthSharded},
                          Case{{2, 1, 5, 8}, abi::kRowMajorPages, 2, abi::kHeightSharded}}) {
        const uint32_t n = 3;
        TensorSpec part = spec(c.shape, c.layout, abi::kInterleaved);
        part.banks = 2;
        TensorSpec memory{};
        memory.memory = c.out, memory.banks = 3, memory.grid_x = 8, memory.grid_y = 8;
        memory.shard_rows = c.layout == abi::kTilePages ? 64 : 4;
        memory.shard_cols = c.layout == abi::kTilePages ? 32 : c.shape[3];  // a part's width: its rows fit a page
        const TensorSpec whole = tensor::gathered(part, c.dim, n, memory);
        tensor::check_all_gather(part, whole, c.dim, n);
        std::vector<std::vector<uint8_t>> parts;
        tensor::UnitImages out(abi::tensor_units(whole), std::vector<uint8_t>(abi::tensor_unit_bytes(whole)));
        for (uint32_t k = 0; k < n; ++k) {
            std::vector<uint8_t> d = counting(part);
            for (uint8_t& b : d) b = uint8_t(b * 3 + k * 101);
            parts.push_back(d);
            const tensor::UnitImages in = tensor::place(part, d.data());
            for (uint64_t p = 0; p < abi::tensor_pages(part); ++p) {
                const abi::GatheredPage g = abi::gathered_page(part, whole, c.dim, k, p);
                const abi::TensorPlace s = abi::tensor_page_place(part, p), t = abi::tensor_page_place(whole, g.page);
                memcpy(&out[t.unit][t.offset + g.offset], &in[s.unit][s.offset], g.bytes);
            }
        }
        if (tensor::gather(whole, out) != tensor::concatenate(part, c.dim, parts))
            fail_msg("%s along %u into %s: not the concatenation", tensor::describe(part).c_str(), c.dim,
                     tensor::describe(whole).c_str());
    }
}

void test_an_all_gather_that_would_split_pages_is_refused(void**) {
    TensorSpec part = spec({1, 1, 32, 40}, abi::kTilePages, abi::kInterleaved);
    part.banks = 1;
    TensorSpec memory{};
    memory.banks = 1;
    try {  // 40 columns: the second part's tiles would start mid-tile
        tensor::check_all_gather(part, tensor::gathered(part, 3, 2, memory), 3, 2);
        fail_msg("tiles split across the gathered tensor's pages were accepted");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "must be a multiple of 32"));
    }
    TensorSpec rows = spec({1, 1, 4, 16}, abi::kRowMajorPages, abi::kInterleaved);
    rows.banks = 1;
    memory.memory = abi::kWidthSharded, memory.grid_x = 8, memory.grid_y = 1, memory.shard_cols = 8;
    try {  // a part's row of 16 into pages of 8
        tensor::check_all_gather(rows, tensor::gathered(rows, 3, 2, memory), 3, 2);
        fail_msg("a row across two pages was accepted");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not fit inside one page"));
    }
}

// The kernel's peer table holds kTensorMaxPeers chips: 64 gather, 65 are
// refused by name (before the table overflows on the chips), as is one.
void test_an_all_gather_spans_2_to_64_chips(void**) {
    TensorSpec part = spec({1, 1, 32, 32}, abi::kTilePages, abi::kInterleaved);
    part.banks = 1;
    TensorSpec memory{};
    memory.banks = 1;
    for (uint32_t ranks : {2u, abi::kTensorMaxPeers})
        tensor::check_all_gather(part, tensor::gathered(part, 2, ranks, memory), 2, ranks);
    for (uint32_t ranks : {1u, abi::kTensorMaxPeers + 1}) {
        try {
            tensor::check_all_gather(part, tensor::gathered(part, 2, ranks, memory), 2, ranks);
            fail_msg("an all_gather over %u chips was accepted", ranks);
        } catch (const Error& e) {
            assert_non_null(strstr(e.what(), "the tensor all_gather spans 2 to 64 chips"));
        }
    }
}

void expect_refused(const TensorSpec& t, const char* says) {
    try {
        tensor::check_spec(t);
        fail_msg("%s was accepted", tensor::describe(t).c_str());
    } catch (const Error& e) {
        if (!strstr(e.what(), says)) fail_msg("%s: got '%s', wanted '%s'", tensor::describe(t).c_str(), e.what(), says);
    }
}

void test_specs_that_cannot_fit_are_refused_by_name(void**) {
    TensorSpec t = spec({1, 1, 64, 64}, abi::kTilePages, abi::kHeightSharded);
    t.grid_x = 2, t.grid_y = 1, t.shard_rows = 48;
    expect_refused(t, "shard rows 48 is not a multiple of 32");
    t.shard_rows = 32;
    t.shape[2] = 200;  // 7 shards on 2 cores
    expect_refused(t, "cuts into 7 x 1 shards, more than the 2 x 1 core grid holds");
    t.memory = abi::kBlockSharded, t.shard_cols = 64, t.grid_y = 4;  // 7 blocks down, 4 rows of cores
    expect_refused(t, "cuts into 7 x 1 shards, more than the 2 x 4 core grid holds");
    TensorSpec bad = spec({1, 1, 0, 4}, abi::kRowMajorPages, abi::kInterleaved);
    bad.banks = 1;
    expect_refused(bad, "dimension 2 is 0");
    bad.shape[2] = 4, bad.banks = 0;
    expect_refused(bad, "interleaved over no banks");
    bad.banks = 1, bad.dtype = 99;
    expect_refused(bad, "unknown dtype 99");
}

// A tensor cut into parts along each dimension and concatenated back is
// itself; a cut that does not divide the dimension is refused.
void test_cut_undoes_concatenate(void**) {
    TensorSpec whole = tensor::matrix(6, 10, abi::kI32, abi::kRowMajorPages);
    whole.shape[1] = 4;
    std::vector<int32_t> data(tensor::elements(whole));
    for (size_t i = 0; i < data.size(); ++i) data[i] = int32_t(i * 7 + 3);
    const std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(data.data()),
                                     reinterpret_cast<const uint8_t*>(data.data() + data.size()));
    for (uint32_t dim = 1; dim < 4; ++dim) {
        const uint32_t parts = 2;
        TensorSpec part = whole;
        part.shape[dim] /= parts;
        std::vector<std::vector<uint8_t>> cuts;
        for (uint32_t k = 0; k < parts; ++k) cuts.push_back(tensor::cut(whole, dim, parts, k, data.data()));
        if (tensor::concatenate(part, dim, cuts) != bytes) fail_msg("dimension %u: the parts do not join back", dim);
    }
    try {
        tensor::cut(whole, 3, 3, 0, data.data());
        fail_msg("10 columns cut in 3");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not cut into 3 equal parts along dimension 3"));
    }
}

// The space for tensors that outlive ops hands out the lowest gap clear of
// what it holds, in whole pages, takes back what it gave, and refuses a
// tensor no gap holds, saying how much is taken.
void test_the_tensor_space_keeps_tensors_apart(void**) {
    BoardInfo board;
    board.name = "test";
    board.dram = Region{0x81800000, 8 * (64 << 10)};
    board.dram_banks = 8;
    tensor::TensorSpace space(board, 4096);
    const TensorSpec small = tensor::matrix(32, 32, abi::kF32, abi::kTilePages);  // 8 tiles: one a bank
    const abi::TensorAt a = space.take(small), b = space.take(small), c = space.take(small);
    assert_int_equal(a.base, board.dram.base + 4096);
    assert_int_equal(b.base, a.base + 4096);
    assert_int_equal(c.base, b.base + 4096);
    space.give_back(b);
    assert_int_equal(space.take(small).base, b.base);  // the gap it left
    assert_int_equal(space.taken().size(), 3);
    try {
        space.take(tensor::matrix(512, 256, abi::kF32, abi::kTilePages));  // 64 KiB a bank: all of it
        fail_msg("a tensor past the banks was placed");
    } catch (const Error& e) {
        assert_non_null(strstr(e.what(), "does not fit beside the 3 tensor(s) kept"));
        assert_non_null(strstr(e.what(), "12288 of the 61440"));
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_pages_go_round_the_banks),
        cmocka_unit_test(test_height_width_and_block_shards),
        cmocka_unit_test(test_one_shard_per_core_and_more_cores_than_pages),
        cmocka_unit_test(test_tiles_are_four_faces),
        cmocka_unit_test(test_layouts_with_one_page_grid_reshard_page_for_page),
        cmocka_unit_test(test_specs_that_cannot_fit_are_refused_by_name),
        cmocka_unit_test(test_all_gather_pages_land_where_the_concatenation_says),
        cmocka_unit_test(test_an_all_gather_that_would_split_pages_is_refused),
        cmocka_unit_test(test_an_all_gather_spans_2_to_64_chips),
        cmocka_unit_test(test_cut_undoes_concatenate),
        cmocka_unit_test(test_the_tensor_space_keeps_tensors_apart),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
