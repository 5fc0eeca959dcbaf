#include "common/plot.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "common/error.h"
#include "common/gnuplot.h"

namespace weft {
namespace {

using Points = std::vector<std::pair<double, double>>;

// Tableau-style hues: distinct from each other and from the greys of the grid.
constexpr std::array<Rgb, 8> kPalette = {{
    {31, 119, 180},   // blue
    {255, 127, 14},   // orange
    {44, 160, 44},    // green
    {214, 39, 40},    // red
    {148, 103, 189},  // purple
    {140, 86, 75},    // brown
    {227, 119, 194},  // pink
    {23, 190, 207},   // cyan
}};

// Filled circle, square, triangles, diamond, pentagon: lines that cross stay
// apart in greyscale too.
constexpr std::array<int, 6> kPointTypes = {7, 5, 9, 11, 13, 15};

bool placeable(double v) { return std::isfinite(v) && std::fabs(v) <= 1e300; }

// Connecting points in x order keeps each line a function of x whatever order
// the caller measured in.
Points drawable_points(const PlotSeries& s, bool log2_x) {
    Points out;
    for (const auto& [x, y] : s.points)
        if (placeable(x) && placeable(y) && (!log2_x || x > 0)) out.emplace_back(x, y);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

void check_size(const PlotSpec& spec, const std::string& path) {
    // Below this the labels crowd out the plot; above it nobody looks at a benchmark chart.
    if (spec.width < 160 || spec.height < 120 || spec.width > 4096 || spec.height > 4096)
        throw Error("chart '" + path + "': size " + std::to_string(spec.width) + "x" + std::to_string(spec.height) +
                    " is outside 160x120..4096x4096");
}

std::vector<Points> drawable_data(const PlotSpec& spec, const std::string& path) {
    check_size(spec, path);
    std::vector<Points> data;
    bool any = false;
    for (const PlotSeries& s : spec.series) {
        data.push_back(drawable_points(s, spec.log2_x));
        any = any || !data.back().empty();
    }
    if (!any)
        throw Error("chart '" + path + "': no points to draw (" + std::to_string(spec.series.size()) +
                    " series; points need finite x and y, and x > 0 on a log2 axis)");
    return data;
}

// gnuplot takes a single-quoted string literally except for the quote itself,
// written twice. A line break would end the command, so control characters
// become spaces.
std::string gnuplot_string(std::string_view s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "''";
        else if (static_cast<unsigned char>(c) < 0x20)
            out += ' ';
        else
            out += c;
    }
    return out + "'";
}

// Shortest text that reads back as the same double: the chart shows what was measured.
std::string number(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string hex_colour(Rgb c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
    return buf;
}

// Byte units as the benchmarks' tables print them: 1K, 64M.
constexpr std::array<const char*, 7> kByteUnits = {"", "K", "M", "G", "T", "P", "E"};

// 2^e as a tick label: bytes in kByteUnits, other powers of two as numbers
// until they grow long.
std::string power_of_two_label(int e, bool bytes) {
    if (bytes && e >= 0 && e / 10 < int(kByteUnits.size())) return std::to_string(1L << (e % 10)) + kByteUnits[e / 10];
    if (!bytes && e >= 0 && e < 20) return std::to_string(1L << e);
    return "2^" + std::to_string(e);
}

// Ticks at powers of two over the data, labelled at most every `step` so the
// labels fit side by side, with unlabelled minor ticks between.
void log2_axis(std::ostream& o, double xmin, double xmax, const PlotSpec& spec) {
    int lo = int(std::floor(std::log2(xmin))), hi = int(std::ceil(std::log2(xmax)));
    if (lo == hi) --lo, ++hi;  // one x value: gnuplot refuses an empty range
    // About 60 px per label in the two thirds of the width the plot area gets
    // beside the axis labels and the legend.
    const int room = std::max(2, spec.width * 2 / 3 / 60);
    const int step = std::max(1, (hi - lo + room - 2) / (room - 1));
    o << "set logscale x 2\n"
      // A quarter of a power of two to spare each side: the end points are off
      // the frame, and gnuplot drops a tick that rounds to beyond the range.
      << "set xrange [" << number(std::exp2(lo - 0.25)) << ":" << number(std::exp2(hi + 0.25)) << "]\n"
      << "set xtics (";
    for (int e = lo; e <= hi; ++e) {
        if (e > lo) o << ", ";
        const bool major = (e - lo) % step == 0;
        o << gnuplot_string(major ? power_of_two_label(e, spec.x_is_bytes) : "") << " " << number(std::exp2(e))
          << (major ? "" : " 1");
    }
    o << ")\n";
}

// A linear byte axis in the largest unit the data reaches, so gnuplot's round
// tick steps are round in that unit (1M, 2M, 3M rather than 0.95Mi, 1.9Mi).
// Returns the data column to plot.
std::string linear_bytes_axis(std::ostream& o, double xmin, double xmax) {
    const double biggest = std::max(std::fabs(xmin), std::fabs(xmax));
    size_t unit = 0;
    while (unit + 1 < kByteUnits.size() && biggest >= std::exp2(10.0 * (unit + 1))) ++unit;
    o << "set format x " << gnuplot_string(std::string("%g") + kByteUnits[unit]) << "\n";
    return unit ? "($1/" + number(std::exp2(10.0 * unit)) + ")" : "1";
}

std::string script_for(const PlotSpec& spec, const std::vector<Points>& data, const std::string& png_path) {
    std::ostringstream o;
    // noenhanced: names like all_reduce and ring_bidir are text, not subscripts.
    o << "set encoding utf8\n"
      << "set terminal pngcairo size " << spec.width << "," << spec.height
      << " noenhanced font 'sans,10' background '#ffffff'\n"
      << "set output " << gnuplot_string(png_path) << "\n";
    if (!spec.title.empty()) o << "set title " << gnuplot_string(spec.title) << " font ',12'\n";
    if (!spec.x_label.empty()) o << "set xlabel " << gnuplot_string(spec.x_label) << "\n";
    if (!spec.y_label.empty()) o << "set ylabel " << gnuplot_string(spec.y_label) << "\n";

    double xmin = INFINITY, xmax = -INFINITY;
    for (const Points& pts : data)
        for (const auto& p : pts) xmin = std::min(xmin, p.first), xmax = std::max(xmax, p.first);
    std::string x_column = "1";
    if (spec.log2_x) log2_axis(o, xmin, xmax, spec);
    else if (spec.x_is_bytes)
        x_column = linear_bytes_axis(o, xmin, xmax);
    else
        o << "set format x '%g'\n";

    // Outside the plot: a legend inside would hide the curves of some chart.
    o << "set key outside right top Left reverse samplen 3\n"
      << "set grid back lt 1 lc rgb '#e1e1e1'\n"
      << "set border lc rgb '#464646'\n"
      << "set offsets 0, 0, graph 0.05, 0\n";  // the top curve clear of the frame

    for (size_t i = 0; i < data.size(); ++i) {
        if (data[i].empty()) continue;
        o << "$series" << i << " << EOD\n";
        for (const auto& [x, y] : data[i]) o << number(x) << " " << number(y) << "\n";
        o << "EOD\n";
    }
    std::vector<size_t> bands;
    for (size_t i = 0; i < spec.series.size(); ++i) {
        std::vector<PlotRange> band;
        for (const PlotRange& r : spec.series[i].spread)
            if (placeable(r.x) && placeable(r.low) && placeable(r.high) && (!spec.log2_x || r.x > 0)) band.push_back(r);
        if (band.empty()) continue;
        std::stable_sort(band.begin(), band.end(), [](const PlotRange& a, const PlotRange& b) { return a.x < b.x; });
        o << "$spread" << i << " << EOD\n";
        for (const PlotRange& r : band) o << number(r.x) << " " << number(r.low) << " " << number(r.high) << "\n";
        o << "EOD\n";
        bands.push_back(i);
    }
    o << "plot ";
    // The bands first: each series' line is drawn over its own band.
    for (size_t i : bands)
        o << "$spread" << i << " using " << x_column << ":2:3 with filledcurves fc rgb "
          << gnuplot_string(hex_colour(plot_series_colour(i)))
          << " fs transparent solid 0.18 noborder notitle, \\\n     ";
    for (size_t i = 0; i < data.size(); ++i) {
        if (i) o << ", \\\n     ";
        // NaN draws nothing but keeps the series' legend entry.
        if (data[i].empty()) o << "NaN";
        else
            o << "$series" << i << " using " << x_column << ":2";
        o << " with linespoints lw 2 pt " << kPointTypes[i % kPointTypes.size()] << " ps 0.8 lc rgb "
          << gnuplot_string(hex_colour(plot_series_colour(i))) << " title " << gnuplot_string(spec.series[i].name);
    }
    o << "\n";
    return o.str();
}

// A file removed when it goes out of scope, unless kept.
class TempFile {
public:
    explicit TempFile(std::string path) : path_(std::move(path)) {}
    ~TempFile() {
        if (!path_.empty()) unlink(path_.c_str());
    }
    TempFile(TempFile&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
    TempFile& operator=(TempFile&&) = delete;

    const std::string& path() const { return path_; }
    void keep() { path_.clear(); }

private:
    std::string path_;
};

std::string errno_text() { return std::strerror(errno); }

// Beside the chart, so the final rename cannot cross file systems. Created
// here rather than by mkstemp so it gets the mode the umask gives any new file.
TempFile create_beside(const std::string& path) {
    for (int attempt = 0;; ++attempt) {
        const std::string tmp = path + ".tmp" + std::to_string(getpid()) + "-" + std::to_string(attempt);
        const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            close(fd);
            return TempFile(tmp);
        }
        if (errno != EEXIST || attempt == 100) throw Error("cannot write chart '" + path + "': " + errno_text());
    }
}

TempFile write_script(const std::string& script) {
    const std::string dir = std::filesystem::temp_directory_path().string();
    std::string name = dir + "/weft-chart-XXXXXX.gp";
    const int fd = mkstemps(name.data(), 3);
    if (fd < 0) throw Error("cannot create a gnuplot script in " + dir + ": " + errno_text());
    TempFile file(name);
    errno = 0;
    const bool ok = write(fd, script.data(), script.size()) == ssize_t(script.size());
    const std::string why = ok ? "" : errno ? errno_text() : "short write";  // before close() can change errno
    close(fd);
    if (!ok) throw Error("cannot write gnuplot script " + name + ": " + why);
    return file;
}

// What gnuplot wrote: a PNG of the asked size, read from its IHDR chunk.
void check_png(const std::string& path, int width, int height) {
    std::ifstream in(path, std::ios::binary);
    unsigned char h[24] = {};
    in.read(reinterpret_cast<char*>(h), sizeof h);
    static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (!in || std::memcmp(h, kSignature, 8) != 0 || std::memcmp(h + 12, "IHDR", 4) != 0)
        throw Error("gnuplot did not write a PNG");
    auto be32 = [](const unsigned char* p) { return int(uint32_t(p[0]) << 24 | p[1] << 16 | p[2] << 8 | p[3]); };
    if (be32(h + 16) != width || be32(h + 20) != height)
        throw Error("gnuplot drew " + std::to_string(be32(h + 16)) + "x" + std::to_string(be32(h + 20)) +
                    " instead of " + std::to_string(width) + "x" + std::to_string(height));
}

}  // namespace

Rgb plot_series_colour(std::size_t index) { return kPalette[index % kPalette.size()]; }

std::string gnuplot_script(const PlotSpec& spec, const std::string& png_path) {
    return script_for(spec, drawable_data(spec, png_path), png_path);
}

std::string gnuplot_quoted(std::string_view s) { return gnuplot_string(s); }

namespace {
// Where a chart named `path` goes: a symlink's target (the rename that puts
// the chart in place would replace the link), and never over a device.
std::string chart_destination(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path target = path;
    for (int links = 0; links < 8 && fs::is_symlink(target, ec); ++links) {  // its target need not exist yet
        const fs::path to = fs::read_symlink(target, ec);
        target = to.is_absolute() ? to : target.parent_path() / to;
    }
    if (std::filesystem::exists(target, ec) && !std::filesystem::is_regular_file(target, ec))
        throw Error("cannot write chart '" + path + "': it is not a regular file");
    return target.string();
}
}  // namespace

void draw_png_with_gnuplot(const std::string& named, int width, int height,
                           const std::function<std::string(const std::string& png_path)>& script_for) {
    const std::string path = chart_destination(named);
    TempFile png = create_beside(path);
    try {
        const TempFile script = write_script(script_for(png.path()));
        run_gnuplot({script.path()});
        check_png(png.path(), width, height);
    } catch (const Error& e) {
        throw Error("cannot draw chart '" + path + "': " + e.what());
    }
    if (std::rename(png.path().c_str(), path.c_str()) != 0)
        throw Error("cannot write chart '" + path + "': " + errno_text());
    png.keep();
}

void write_line_plot_png(const std::string& path, const PlotSpec& spec) {
    const std::vector<Points> data = drawable_data(spec, path);
    draw_png_with_gnuplot(path, spec.width, spec.height,
                          [&](const std::string& png) { return script_for(spec, data, png); });
}

}  // namespace weft
