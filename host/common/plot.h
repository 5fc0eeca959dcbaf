// Line charts of benchmark results (bus bandwidth against message size, one
// line per algorithm) as PNG files, drawn by gnuplot (common/gnuplot.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
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

}  // namespace weft
