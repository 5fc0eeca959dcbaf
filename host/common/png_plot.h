#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace weft {

// A line-plot PNG writer for benchmark charts (bus bandwidth against message
// size, one line per algorithm), with its own font and rasteriser; zlib only
// compresses the pixels.

struct PlotSeries {
    std::string name;
    std::vector<std::pair<double, double>> points;  // (x, y)
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
// Exposed so callers and tests can find a series in the image.
Rgb plot_series_colour(std::size_t index);

// Writes an 8-bit RGB PNG. Points that cannot be placed (non-finite, beyond
// +-1e300, or x <= 0 on a log2 axis) are skipped. Throws Error (a
// std::runtime_error) naming the path if the file cannot be written, the size
// is outside 160x120..4096x4096, or no series has a point to draw.
void write_line_plot_png(const std::string& path, const PlotSpec& spec);

}  // namespace weft
