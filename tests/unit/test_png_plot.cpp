// The PNG line-plot writer: reads the file back and checks it as a decoder
// would (signature, chunk CRCs, IHDR, the zlib stream (inflated with zlib) and
// Adler-32), then that the first series was actually drawn.

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <zlib.h>

#include "common/png_plot.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

// Bitwise rather than table-driven, so the check does not share the writer's table.
uint32_t reference_crc32(const uint8_t* p, size_t n) {
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
    }
    return ~crc;
}

uint32_t reference_adler32(const std::vector<uint8_t>& data) {
    uint32_t a = 1, b = 0;
    for (uint8_t byte : data) {
        a = (a + byte) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

// A unique path under /tmp, removed again by the test that asked for it.
std::string temp_png_path() {
    char name[] = "/tmp/weft_png_plot_XXXXXX";
    const int fd = mkstemp(name);
    assert_true(fd >= 0);
    close(fd);
    return name;
}

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    assert_true(in.good());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Image {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> scanlines;  // filter byte + RGB per row, as inflated

    const uint8_t* pixel(uint32_t x, uint32_t y) const { return &scanlines[y * (1 + 3 * width) + 1 + 3 * x]; }
};

// Walks the chunks, checking every CRC; returns IHDR fields and the joined IDAT data.
std::vector<uint8_t> read_chunks(const std::vector<uint8_t>& png, Image& img) {
    static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_true(png.size() >= 8);
    assert_memory_equal(png.data(), kSignature, 8);

    std::vector<uint8_t> idat;
    std::vector<std::string> order;
    for (size_t pos = 8; pos < png.size();) {
        assert_true(pos + 12 <= png.size());
        const uint32_t len = be32(&png[pos]);
        assert_true(pos + 12 + len <= png.size());
        const uint8_t* type = &png[pos + 4];
        const uint8_t* data = type + 4;
        assert_int_equal(be32(data + len), reference_crc32(type, 4 + len));
        order.emplace_back(reinterpret_cast<const char*>(type), 4);
        if (order.back() == "IHDR") {
            assert_int_equal(len, 13);
            img.width = be32(data);
            img.height = be32(data + 4);
            assert_int_equal(data[8], 8);   // bit depth
            assert_int_equal(data[9], 2);   // colour type: truecolour RGB
            assert_int_equal(data[10], 0);  // deflate
            assert_int_equal(data[11], 0);  // standard filter method
            assert_int_equal(data[12], 0);  // not interlaced
        } else if (order.back() == "IDAT") {
            idat.insert(idat.end(), data, data + len);
        }
        pos += 12 + len;
    }
    assert_true(order.size() >= 3);
    assert_string_equal(order.front().c_str(), "IHDR");
    assert_string_equal(order.back().c_str(), "IEND");
    return idat;
}

std::vector<uint8_t> inflate_zlib(const std::vector<uint8_t>& z, size_t expect) {
    assert_true(z.size() >= 2 + 4);
    assert_int_equal(z[0] & 0x0f, 8);               // CM = deflate
    assert_int_equal((z[0] * 256 + z[1]) % 31, 0);  // FCHECK
    std::vector<uint8_t> out(expect + 1);
    uLongf size = out.size();
    // uncompress checks the Adler-32 of the inflated data itself.
    assert_int_equal(uncompress(out.data(), &size, z.data(), z.size()), Z_OK);
    out.resize(size);
    assert_int_equal(reference_adler32(out), be32(&z[z.size() - 4]));
    return out;
}

Image decode(const std::vector<uint8_t>& png) {
    Image img;
    const std::vector<uint8_t> idat = read_chunks(png, img);
    img.scanlines = inflate_zlib(idat, size_t(img.height) * (1 + 3 * size_t(img.width)));
    assert_int_equal(img.scanlines.size(), size_t(img.height) * (1 + 3 * size_t(img.width)));
    for (uint32_t y = 0; y < img.height; ++y) assert_int_equal(img.scanlines[y * (1 + 3 * img.width)], 0);
    return img;
}

// True if every column of the middle tenth of the image holds a pixel of `c`.
// The legend sits in a corner and the test series do not cross there, so only
// a continuous data line passes; markers alone would leave gaps.
bool line_crosses_middle(const Image& img, Rgb c) {
    for (uint32_t x = img.width * 45 / 100; x < img.width * 55 / 100; ++x) {
        bool found = false;
        for (uint32_t y = 0; y < img.height && !found; ++y) {
            const uint8_t* p = img.pixel(x, y);
            found = p[0] == c.r && p[1] == c.g && p[2] == c.b;
        }
        if (!found) return false;
    }
    return true;
}

PlotSpec bandwidth_spec() {
    PlotSpec spec;
    spec.title = "all_reduce bus bandwidth";
    spec.x_label = "message size";
    spec.y_label = "GB/s";
    const char* names[] = {"ring", "tree", "direct"};
    for (int s = 0; s < 3; ++s) {
        PlotSeries series{names[s], {}};
        for (int e = 10; e <= 26; ++e) {  // 1 KiB .. 64 MiB
            const double bytes = std::exp2(e);
            series.points.emplace_back(bytes, (10.0 - 2 * s) * bytes / (bytes + 65536.0));
        }
        spec.series.push_back(series);
    }
    return spec;
}

void check_written_plot(const PlotSpec& spec) {
    const std::string path = temp_png_path();
    write_line_plot_png(path, spec);
    const std::vector<uint8_t> png = read_file(path);
    std::remove(path.c_str());  // before any assertion can skip it
    const Image img = decode(png);
    assert_int_equal(img.width, spec.width);
    assert_int_equal(img.height, spec.height);
    assert_true(line_crosses_middle(img, plot_series_colour(0)));
}

void test_bandwidth_plot_is_a_valid_png(void**) { check_written_plot(bandwidth_spec()); }

// Odd sizes: scanlines of an odd byte count must still inflate to exactly height rows
// differently, and a linear axis takes the other tick path.
void test_linear_axis_odd_size(void**) {
    PlotSpec spec = bandwidth_spec();
    spec.log2_x = false;
    spec.x_is_bytes = false;
    spec.width = 641;
    spec.height = 377;
    for (PlotSeries& s : spec.series)
        for (auto& [x, y] : s.points) x = std::log2(x);
    check_written_plot(spec);
}

void test_palette_is_distinct(void**) {
    for (size_t i = 0; i < 8; ++i)
        for (size_t j = i + 1; j < 8; ++j) assert_false(plot_series_colour(i) == plot_series_colour(j));
}

void expect_error_naming(const std::string& path, const PlotSpec& spec) {
    try {
        write_line_plot_png(path, spec);
        fail_msg("expected an error for %s", path.c_str());
    } catch (const std::runtime_error& e) {
        assert_non_null(std::strstr(e.what(), path.c_str()));
    }
}

void test_empty_spec_throws(void**) {
    char dir[] = "/tmp/weft_png_plot_dir_XXXXXX";
    assert_non_null(mkdtemp(dir));
    const std::string path = std::string(dir) + "/plot.png";
    PlotSpec spec;
    expect_error_naming(path, spec);  // no series at all
    spec.series.push_back({"empty", {}});
    expect_error_naming(path, spec);  // a series with no points
    spec.series.push_back({"unplaceable", {{0.0, 1.0}, {-4.0, 2.0}, {NAN, 3.0}}});
    expect_error_naming(path, spec);  // none can go on a log2 axis
    assert_int_equal(access(path.c_str(), F_OK), -1);  // nothing half-written left behind
    rmdir(dir);
}

void test_unreasonable_size_throws(void**) {
    PlotSpec spec = bandwidth_spec();
    spec.width = 10;
    expect_error_naming("/tmp/weft_png_plot_tiny.png", spec);
}

void test_unwritable_path_throws(void**) {
    expect_error_naming("/nonexistent-weft-dir/plot.png", bandwidth_spec());
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth_plot_is_a_valid_png),
        cmocka_unit_test(test_linear_axis_odd_size),
        cmocka_unit_test(test_palette_is_distinct),
        cmocka_unit_test(test_empty_spec_throws),
        cmocka_unit_test(test_unreasonable_size_throws),
        cmocka_unit_test(test_unwritable_path_throws),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
