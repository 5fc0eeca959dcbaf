// Charts: the gnuplot script (log axis, a legend entry per series, quoting),
// then real charts drawn by the installed gnuplot, read back as a decoder
// would (chunk CRCs, IHDR, the inflated and unfiltered pixels) to check the
// size and that the first series was actually drawn. A gnuplot that is
// missing, fails or writes nothing must give an error naming the chart.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <zlib.h>

#include "common/gnuplot.h"
#include "common/plot.h"

// cmocka last: its fail() macro would clash with the C++ headers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using namespace weft;

namespace {

// ------------------------------------------------------------------ the script

PlotSpec bandwidth_spec() {
    PlotSpec spec;
    spec.title = "all_reduce bus bandwidth";
    spec.x_label = "message size";
    spec.y_label = "GB/s";
    const char* names[] = {"ring", "tree", "direct"};
    for (int s = 0; s < 3; ++s) {
        PlotSeries series{names[s], {}};
        for (int e = 26; e >= 10; --e) {  // 64 MiB .. 1 KiB, backwards: the chart sorts them
            const double bytes = std::exp2(e);
            series.points.emplace_back(bytes, (10.0 - 2 * s) * bytes / (bytes + 65536.0));
        }
        spec.series.push_back(series);
    }
    return spec;
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

void test_script_has_log_axis_and_legend(void**) {
    PlotSpec spec = bandwidth_spec();
    spec.series.push_back({"over budget", {}});  // nothing to draw, still in the legend
    const std::string script = gnuplot_script(spec, "/charts/ar.png");
    assert_int_equal(count_of(script, "set terminal pngcairo size 960,600"), 1);
    assert_int_equal(count_of(script, "set output '/charts/ar.png'\n"), 1);
    assert_int_equal(count_of(script, "set logscale x 2\n"), 1);
    assert_int_equal(count_of(script, "set title 'all_reduce bus bandwidth'"), 1);
    assert_int_equal(count_of(script, "noenhanced"), 1);  // all_reduce is not all subscript reduce
    for (const char* name : {"ring", "tree", "direct", "over budget"})
        assert_int_equal(count_of(script, std::string("title '") + name + "'"), 1);
    assert_int_equal(count_of(script, "NaN with linespoints"), 1);
    // Byte ticks in the tables' units, from 1K to 64M.
    assert_int_equal(count_of(script, "'1K' 1024"), 1);
    assert_int_equal(count_of(script, "'64M' 67108864"), 1);
    // Each drawn series' points inline, in x order.
    assert_int_equal(count_of(script, "<< EOD\n1024 "), 3);
    assert_int_equal(count_of(script, "\n67108864 "), 3);
    assert_int_equal(count_of(script, "\nEOD\n"), 3);
}

void test_script_linear_axis_and_quoting(void**) {
    PlotSpec spec;
    spec.log2_x = false;
    spec.x_is_bytes = false;
    spec.title = "it's\nfast";
    spec.series = {{"a 'b'", {{1, 2}, {NAN, 3}, {3, INFINITY}, {-1, 4}}}};
    const std::string script = gnuplot_script(spec, "/tmp/o'clock.png");
    assert_int_equal(count_of(script, "logscale"), 0);
    assert_int_equal(count_of(script, "set title 'it''s fast'"), 1);  // a line break would end the command
    assert_int_equal(count_of(script, "set output '/tmp/o''clock.png'"), 1);
    assert_int_equal(count_of(script, "title 'a ''b'''"), 1);
    // The non-finite points are gone; x <= 0 is fine on a linear axis, first in x order.
    assert_int_equal(count_of(script, "<< EOD\n-1 4\n1 2\nEOD\n"), 1);

    // Bytes on a linear axis: plotted in the largest unit reached, so the ticks are round in it.
    spec.x_is_bytes = true;
    spec.series = {{"s", {{1 << 20, 1}, {3 << 20, 2}}}};
    const std::string mib = gnuplot_script(spec, "b.png");
    assert_int_equal(count_of(mib, "set format x '%gM'\n"), 1);
    assert_int_equal(count_of(mib, "using ($1/1048576):2"), 1);
}

std::string xtics_of(const std::string& script) {
    const size_t at = script.find("set xtics (");
    assert_true(at != std::string::npos);
    return script.substr(at, script.find('\n', at) - at);
}

void test_log_ticks_thin_out_on_a_narrow_chart(void**) {
    PlotSpec spec = bandwidth_spec();
    const std::string wide = xtics_of(gnuplot_script(spec, "w.png"));
    spec.width = 320;
    const std::string narrow = xtics_of(gnuplot_script(spec, "n.png"));
    // Every power of two from 1K to 64M keeps its tick; fewer of them get a label.
    assert_int_equal(count_of(wide, ", "), 16);
    assert_int_equal(count_of(narrow, ", "), 16);
    assert_int_equal(count_of(wide, "'4K' 4096"), 1);
    assert_int_equal(count_of(narrow, "'4K'"), 0);
    assert_true(count_of(narrow, "'' ") > count_of(wide, "'' "));
    assert_int_equal(count_of(narrow, "'1K' 1024"), 1);
}

// ------------------------------------------------------------------ the PNG

uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    assert_true(in.good());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Image {
    uint32_t width = 0, height = 0, channels = 0;
    std::vector<uint8_t> pixels;  // unfiltered, channels bytes per pixel

    const uint8_t* pixel(uint32_t x, uint32_t y) const { return &pixels[(size_t(y) * width + x) * channels]; }
};

// Walks the chunks checking every CRC; returns the joined IDAT data.
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
        assert_int_equal(be32(data + len), crc32(0, type, 4 + len));
        order.emplace_back(reinterpret_cast<const char*>(type), 4);
        if (order.back() == "IHDR") {
            assert_int_equal(len, 13);
            img.width = be32(data);
            img.height = be32(data + 4);
            assert_int_equal(data[8], 8);               // bit depth
            assert_true(data[9] == 2 || data[9] == 6);  // RGB or RGBA
            img.channels = data[9] == 2 ? 3 : 4;
            assert_int_equal(data[12], 0);  // not interlaced
        } else if (order.back() == "IDAT") {
            idat.insert(idat.end(), data, data + len);
        }
        pos += 12 + len;
    }
    assert_string_equal(order.front().c_str(), "IHDR");
    assert_string_equal(order.back().c_str(), "IEND");
    return idat;
}

uint8_t paeth(int a, int b, int c) {
    const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
    return uint8_t(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

// PNG's five scanline filters undone (the PNG specification, section 9).
void unfilter(Image& img, const std::vector<uint8_t>& raw) {
    const size_t bpp = img.channels, row = size_t(img.width) * bpp;
    assert_int_equal(raw.size(), img.height * (row + 1));
    img.pixels.assign(img.height * row, 0);
    for (uint32_t y = 0; y < img.height; ++y) {
        const uint8_t filter = raw[y * (row + 1)];
        const uint8_t* in = &raw[y * (row + 1) + 1];
        uint8_t* out = &img.pixels[y * row];
        const uint8_t* up = y ? out - row : nullptr;
        for (size_t i = 0; i < row; ++i) {
            const int a = i >= bpp ? out[i - bpp] : 0, b = up ? up[i] : 0, c = up && i >= bpp ? up[i - bpp] : 0;
            switch (filter) {
                case 0: out[i] = in[i]; break;
                case 1: out[i] = uint8_t(in[i] + a); break;
                case 2: out[i] = uint8_t(in[i] + b); break;
                case 3: out[i] = uint8_t(in[i] + (a + b) / 2); break;
                case 4: out[i] = uint8_t(in[i] + paeth(a, b, c)); break;
                default: fail_msg("row %u has filter type %u", y, filter);
            }
        }
    }
}

Image decode(const std::vector<uint8_t>& png) {
    Image img;
    const std::vector<uint8_t> idat = read_chunks(png, img);
    std::vector<uint8_t> raw(size_t(img.height) * (size_t(img.width) * img.channels + 1) + 1);
    uLongf size = raw.size();
    // uncompress checks the zlib header and the Adler-32 of the inflated data.
    assert_int_equal(uncompress(raw.data(), &size, idat.data(), idat.size()), Z_OK);
    raw.resize(size);
    unfilter(img, raw);
    return img;
}

bool near(const uint8_t* p, Rgb c) {
    return std::abs(p[0] - c.r) <= 12 && std::abs(p[1] - c.g) <= 12 && std::abs(p[2] - c.b) <= 12;
}

// Columns of the middle tenth of the image holding a pixel of colour c. The
// legend is outside the plot on the right, so only a drawn data line counts.
uint32_t columns_with(const Image& img, Rgb c) {
    uint32_t hits = 0;
    for (uint32_t x = img.width * 45 / 100; x < img.width * 55 / 100; ++x) {
        bool found = false;
        for (uint32_t y = 0; y < img.height && !found; ++y) found = near(img.pixel(x, y), c);
        hits += found;
    }
    return hits;
}

// A unique directory under /tmp, removed with its contents by the test.
struct TempDir {
    std::string path;
    TempDir() {
        char name[] = "/tmp/weft_plot_XXXXXX";
        assert_non_null(mkdtemp(name));
        path = name;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    size_t entries() const {
        size_t n = 0;
        for (const auto& e : std::filesystem::directory_iterator(path)) n += !e.path().empty();
        return n;
    }
};

Image draw(const PlotSpec& spec, const TempDir& dir) {
    const std::string path = dir.path + "/chart.png";
    std::string error;
    try {
        write_line_plot_png(path, spec);
    } catch (const std::runtime_error& e) {
        error = e.what();
    }
    if (!error.empty()) fail_msg("%s", error.c_str());
    assert_int_equal(dir.entries(), 1);  // the chart, no temporaries beside it
    struct stat st {};
    assert_int_equal(stat(path.c_str(), &st), 0);
    assert_int_not_equal(st.st_mode & 0044, 0);  // readable like any new file, not mkstemp's 0600
    return decode(read_file(path));
}

void test_chart_is_a_png_with_the_series_drawn(void**) {
    const TempDir dir;
    const PlotSpec spec = bandwidth_spec();
    const Image img = draw(spec, dir);
    assert_int_equal(img.width, spec.width);
    assert_int_equal(img.height, spec.height);
    const uint32_t middle = img.width * 55 / 100 - img.width * 45 / 100;
    assert_true(columns_with(img, plot_series_colour(0)) >= middle * 9 / 10);
    // A colour no series has stays absent: the check above can fail.
    assert_int_equal(columns_with(img, plot_series_colour(5)), 0);
}

// An odd size and a linear axis take other paths through the script.
void test_linear_chart_of_odd_size(void**) {
    const TempDir dir;
    PlotSpec spec = bandwidth_spec();
    spec.log2_x = false;
    spec.x_is_bytes = false;
    spec.width = 641;
    spec.height = 377;
    for (PlotSeries& s : spec.series)
        for (auto& [x, y] : s.points) x = std::log2(x);
    const Image img = draw(spec, dir);
    assert_int_equal(img.width, 641);
    assert_int_equal(img.height, 377);
    assert_true(columns_with(img, plot_series_colour(0)) > 0);
}

void test_palette_is_distinct(void**) {
    for (size_t i = 0; i < 8; ++i)
        for (size_t j = i + 1; j < 8; ++j) assert_false(plot_series_colour(i) == plot_series_colour(j));
}

// ------------------------------------------------------------------ errors

// The error drawing `spec` into `path` gives, which must name the path.
std::string error_of(const std::string& path, const PlotSpec& spec) {
    std::string what;
    try {
        write_line_plot_png(path, spec);
    } catch (const std::runtime_error& e) {
        what = e.what();
    }
    if (what.empty()) fail_msg("expected an error for %s", path.c_str());
    assert_non_null(std::strstr(what.c_str(), path.c_str()));
    return what;
}

std::string check_gnuplot_error() {
    try {
        check_gnuplot();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    fail_msg("check_gnuplot passed");
    return "";
}

void test_bad_data_throws(void**) {
    const TempDir dir;
    const std::string path = dir.path + "/chart.png";
    PlotSpec spec;
    error_of(path, spec);  // no series at all
    spec.series.push_back({"empty", {}});
    error_of(path, spec);  // a series with no points
    spec.series.push_back({"unplaceable", {{0.0, 1.0}, {-4.0, 2.0}, {NAN, 3.0}}});
    assert_non_null(std::strstr(error_of(path, spec).c_str(), "no points to draw"));  // none fits a log2 axis
    spec = bandwidth_spec();
    spec.width = 10;
    assert_non_null(std::strstr(error_of(path, spec).c_str(), "10x600"));
    assert_int_equal(dir.entries(), 0);  // nothing half-written left behind
}

void test_unwritable_path_throws(void**) {
    assert_non_null(
        std::strstr(error_of("/nonexistent-weft-dir/plot.png", bandwidth_spec()).c_str(), "No such file or directory"));
}

// A chart named by a symlink lands in its target, the link kept; a device
// (or anything but a regular file) is never replaced by the chart.
void test_a_symlink_is_written_through_and_a_device_refused(void**) {
    const TempDir dir;
    const std::string target = dir.path + "/target.png", link = dir.path + "/link.png";
    std::filesystem::create_symlink(target, link);
    write_line_plot_png(link, bandwidth_spec());
    assert_true(std::filesystem::is_symlink(link));
    assert_int_equal(decode(read_file(target)).width, bandwidth_spec().width);
    assert_non_null(std::strstr(error_of("/dev/null", bandwidth_spec()).c_str(), "it is not a regular file"));
    struct stat st {};
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

// PATH set to a directory holding only the given `gnuplot` (none: no gnuplot at all).
struct FakeGnuplot {
    TempDir bin;
    std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
    explicit FakeGnuplot(const char* script) {
        if (script) {
            const std::string exe = bin.path + "/gnuplot";
            std::ofstream(exe) << "#!/bin/sh\n" << script << "\n";
            chmod(exe.c_str(), 0755);
        }
        setenv("PATH", bin.path.c_str(), 1);
    }
    ~FakeGnuplot() { setenv("PATH", old_path.c_str(), 1); }
};

void test_missing_gnuplot_names_the_package(void**) {
    const TempDir dir;
    const FakeGnuplot none(nullptr);
    const std::string what = error_of(dir.path + "/chart.png", bandwidth_spec());
    assert_non_null(std::strstr(what.c_str(), "gnuplot is not installed"));
    assert_non_null(std::strstr(what.c_str(), kGnuplotPackage));
    assert_int_equal(dir.entries(), 0);
    assert_non_null(std::strstr(check_gnuplot_error().c_str(), kGnuplotPackage));
}

void test_failing_gnuplot_is_reported(void**) {
    const TempDir dir;
    {
        const FakeGnuplot failing("echo 'line 7: undefined variable: boom' >&2; exit 1");
        const std::string what = error_of(dir.path + "/chart.png", bandwidth_spec());
        assert_non_null(std::strstr(what.c_str(), "undefined variable: boom"));
        assert_non_null(std::strstr(what.c_str(), "exit status 1"));
    }
    {
        // Claims success and draws nothing. It also fails if it inherited one
        // of our descriptors (a cluster's socket or chip memory would be one).
        const int ours = open("/dev/null", O_RDONLY);  // no O_CLOEXEC
        assert_true(ours >= 3);
        const std::string check = "[ -e /proc/$$/fd/" + std::to_string(ours) +
                                  " ] && echo inherited >&2 && exit 1; exit 0";
        const FakeGnuplot silent(check.c_str());
        const std::string what = error_of(dir.path + "/chart.png", bandwidth_spec());
        close(ours);
        assert_null(std::strstr(what.c_str(), "inherited"));
        assert_non_null(std::strstr(what.c_str(), "did not write a PNG"));
    }
    {
        const FakeGnuplot no_cairo("echo 'unknown or ambiguous terminal type' >&2; exit 1");
        assert_non_null(std::strstr(check_gnuplot_error().c_str(), "no pngcairo terminal"));
    }
    assert_int_equal(dir.entries(), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_has_log_axis_and_legend),
        cmocka_unit_test(test_script_linear_axis_and_quoting),
        cmocka_unit_test(test_log_ticks_thin_out_on_a_narrow_chart),
        cmocka_unit_test(test_chart_is_a_png_with_the_series_drawn),
        cmocka_unit_test(test_linear_chart_of_odd_size),
        cmocka_unit_test(test_palette_is_distinct),
        cmocka_unit_test(test_bad_data_throws),
        cmocka_unit_test(test_unwritable_path_throws),
        cmocka_unit_test(test_a_symlink_is_written_through_and_a_device_refused),
        cmocka_unit_test(test_missing_gnuplot_names_the_package),
        cmocka_unit_test(test_failing_gnuplot_is_reported),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
