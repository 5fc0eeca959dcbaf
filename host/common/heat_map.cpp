#include "common/heat_map.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "common/error.h"
#include "common/plot.h"

namespace weft {
namespace {

// Shortest text that reads back as the same double.
std::string heat_number(double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

void check_heat_map(const HeatMapSpec& spec, int height, const std::string& path) {
    const std::string where = "heat map '" + path + "': ";
    if (spec.cells.empty() || spec.cells[0].empty()) throw Error(where + "no cells to draw");
    if (spec.cells.size() != spec.rows.size())
        throw Error(where + std::to_string(spec.rows.size()) + " row names for " + std::to_string(spec.cells.size()) +
                    " rows");
    for (const auto& row : spec.cells)
        if (row.size() != spec.cells[0].size()) throw Error(where + "rows of unequal length");
    if (!(spec.x_step > 0) || !std::isfinite(spec.x_start)) throw Error(where + "x must start finite and step above 0");
    if (spec.width < 160 || height < 120 || spec.width > 4096 || height > 4096)
        throw Error(where + "size " + std::to_string(spec.width) + "x" + std::to_string(height) +
                    " is outside 160x120..4096x4096");
}

// Every row's name while they fit at about 11 px a line; else every k-th.
void row_tics(std::ostream& o, const HeatMapSpec& spec, int height) {
    const size_t fit = std::max<size_t>(1, size_t(height - 120) / 11);
    const size_t every = (spec.rows.size() + fit - 1) / fit;
    o << "set ytics (";
    for (size_t r = 0; r < spec.rows.size(); r += every)
        o << (r ? ", " : "") << gnuplot_quoted(spec.rows[r]) << " " << r;
    o << ") font ',8'\n";
}

}  // namespace

int heat_map_height(size_t rows) { return int(std::clamp<size_t>(140 + rows * 12, 300, 4096)); }

std::string heat_map_script(const HeatMapSpec& spec, const std::string& png_path) {
    const int height = spec.height ? spec.height : heat_map_height(spec.rows.size());
    check_heat_map(spec, height, png_path);
    const size_t columns = spec.cells[0].size();
    double most = 0;
    for (const auto& row : spec.cells)
        for (double v : row)
            if (std::isfinite(v)) most = std::max(most, v);
    std::ostringstream o;
    o << "set encoding utf8\n"
      << "set terminal pngcairo size " << spec.width << "," << height
      << " noenhanced font 'sans,10' background '#ffffff'\n"
      << "set output " << gnuplot_quoted(png_path) << "\n";
    if (!spec.title.empty()) o << "set title " << gnuplot_quoted(spec.title) << " font ',12'\n";
    if (!spec.x_label.empty()) o << "set xlabel " << gnuplot_quoted(spec.x_label) << "\n";
    if (!spec.colour_label.empty()) o << "set cblabel " << gnuplot_quoted(spec.colour_label) << "\n";
    // White for nothing held, so an idle fabric reads as empty paper.
    o << "set palette defined (0 '#ffffff', 1 '#fee08b', 2 '#f46d43', 3 '#a50026')\n"
      << "set cbrange [0:" << heat_number(std::max(1.0, most)) << "]\n"
      << "set xrange [" << heat_number(spec.x_start - spec.x_step / 2) << ":"
      << heat_number(spec.x_start + (double(columns) - 0.5) * spec.x_step)
      << "]\n"
      // The first row on top, as the names are listed.
      << "set yrange [" << heat_number(double(spec.rows.size()) - 0.5) << ":-0.5]\n"
      << "set tics out\nunset key\nset border lc rgb '#464646'\n";
    row_tics(o, spec, height);
    o << "$cells << EOD\n";
    for (size_t c = 0; c < columns; ++c) {
        const std::string x = heat_number(spec.x_start + double(c) * spec.x_step);
        for (size_t r = 0; r < spec.rows.size(); ++r)
            o << x << " " << r << " " << heat_number(std::isfinite(spec.cells[r][c]) ? spec.cells[r][c] : 0) << "\n";
        o << "\n";  // a blank line between columns: gnuplot's grid of pixels
    }
    o << "EOD\nplot $cells using 1:2:3 with image\n";
    return o.str();
}

void write_heat_map_png(const std::string& path, const HeatMapSpec& spec) {
    const int height = spec.height ? spec.height : heat_map_height(spec.rows.size());
    check_heat_map(spec, height, path);
    draw_png_with_gnuplot(path, spec.width, height, [&](const std::string& png) { return heat_map_script(spec, png); });
}

}  // namespace weft
