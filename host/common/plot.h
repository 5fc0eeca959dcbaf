// Line charts of benchmark results (bus bandwidth against message size, one
// line per algorithm) as PNG files, drawn by gnuplot (common/gnuplot.h); and
// the way any chart of weft's (common/heat_map.h too) gets its PNG drawn.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft {

struct PlotRange {
    double x, low, high;
};

struct PlotSeries {
    std::string name;                               // its legend entry
    std::vector<std::pair<double, double>> points;  // (x, y), any order
    std::vector<PlotRange> spread = {};             // optional: a shaded band from low to high (min-max of runs)
};

struct PlotSpec {
    std::string title, x_label, y_label;
    bool log2_x = true;      // x axis on a log2 scale (message sizes 1 KiB .. 64 MiB)
    bool x_is_bytes = true;  // x tick labels as 1K, 4K, 1M, 64M ...
    std::vector<PlotSeries> series;
    int width = 960, height = 600;
};

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// The colour series `index` is drawn in; the palette of 8 repeats after that.
// Exposed so tests can find a series in the image.
Rgb plot_series_colour(std::size_t index);

// The gnuplot script that draws `spec` into png_path: its data inline, one
// legend entry per series (a series with nothing to draw keeps its entry).
// Points that cannot be placed (non-finite, beyond +-1e300, or x <= 0 on a
// log2 axis) are left out. Throws Error naming png_path if the size is outside
// 160x120..4096x4096 or no series has a point to draw.
std::string gnuplot_script(const PlotSpec& spec, const std::string& png_path);

// Writes the chart as a PNG of spec.width x spec.height. The file appears only
// once complete: a failed chart leaves nothing at `path`. Throws Error naming
// the path for bad data, an unwritable path, or gnuplot missing (naming its
// package) or failing.
void write_line_plot_png(const std::string& path, const PlotSpec& spec);

// gnuplot's literal string for `s` (single-quoted; control characters as spaces).
std::string gnuplot_quoted(std::string_view s);

// Has gnuplot draw a PNG of width x height at `path` by the script
// `script_for(png_path)`, which sets its output to png_path: a file beside
// `path`, renamed onto it once gnuplot wrote a PNG of that size, so a failed
// chart leaves nothing at `path`. Throws Error naming the path as
// write_line_plot_png does.
void draw_png_with_gnuplot(const std::string& path, int width, int height,
                           const std::function<std::string(const std::string& png_path)>& script_for);

}  // namespace weft
