// Heat maps as PNG files: rows of cells over an even x axis, each cell's
// value a colour (the fabric model's packets held per router over virtual
// time), drawn by gnuplot (common/plot.h's draw_png_with_gnuplot).
#pragma once
#include <string>
#include <vector>

namespace weft {

struct HeatMapSpec {
    std::string title, x_label, colour_label;
    std::vector<std::string> rows;           // the rows' names, top row first
    double x_start = 0, x_step = 1;          // column c stands at x_start + c * x_step
    std::vector<std::vector<double>> cells;  // [row][column]; every row as long
    int width = 1200, height = 0;            // 0: as tall as the rows need
};

// The height a heat map of `rows` rows gets when the spec leaves it 0.
int heat_map_height(size_t rows);

// The gnuplot script that draws `spec` into png_path, its cells inline.
// Throws Error naming png_path for a map with no cells, rows of unequal
// length, a step that is not above 0 or a size outside 160x120..4096x4096.
std::string heat_map_script(const HeatMapSpec& spec, const std::string& png_path);

// Writes the heat map as a PNG; errors as write_line_plot_png's.
void write_heat_map_png(const std::string& path, const HeatMapSpec& spec);

}  // namespace weft
