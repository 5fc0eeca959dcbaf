#include "common/png_plot.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>

#include "common/error.h"

namespace weft {
namespace {

using Points = std::vector<std::pair<double, double>>;

// ------------------------------------------------------------------ PNG encoding

constexpr std::array<uint32_t, 256> make_crc_table() {
    std::array<uint32_t, 256> table{};
    for (uint32_t n = 0; n < 256; ++n) {
        uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    return table;
}

// Built at compile time, so there is no lazily initialised table to race on.
constexpr std::array<uint32_t, 256> kCrcTable = make_crc_table();

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size) {
    for (size_t i = 0; i < size; ++i) crc = kCrcTable[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
    return crc;
}


void put_u32_be(std::vector<uint8_t>& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}


void append_chunk(std::vector<uint8_t>& png, std::string_view type, const std::vector<uint8_t>& data) {
    put_u32_be(png, uint32_t(data.size()));
    const size_t type_at = png.size();
    png.insert(png.end(), type.begin(), type.end());
    png.insert(png.end(), data.begin(), data.end());
    // The CRC covers the chunk type too, so a damaged type is caught as well.
    const uint32_t crc = crc32_update(0xffffffffu, png.data() + type_at, png.size() - type_at);
    put_u32_be(png, crc ^ 0xffffffffu);
}

// Charts are mostly background: zlib shrinks a 960x600 chart from 1.7 MB to
// tens of KB, which matters for charts committed under bench/results.
std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& raw) {
    uLongf size = compressBound(raw.size());
    std::vector<uint8_t> out(size);
    if (compress2(out.data(), &size, raw.data(), raw.size(), Z_BEST_COMPRESSION) != Z_OK)
        throw Error("png: zlib could not compress the image");
    out.resize(size);
    return out;
}

// ------------------------------------------------------------------ canvas and drawing

class Canvas {
public:
    Canvas(int width, int height, Rgb fill) : width_(width), height_(height), rgb_(size_t(width) * size_t(height) * 3) {
        fill_rect(0, 0, width - 1, height - 1, fill);
    }

    int width() const { return width_; }
    int height() const { return height_; }
    const std::vector<uint8_t>& rgb() const { return rgb_; }

    // Pixels off the image are dropped, so markers and thick lines may overhang an edge.
    void set(int x, int y, Rgb c) {
        if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
        uint8_t* p = &rgb_[(size_t(y) * size_t(width_) + size_t(x)) * 3];
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
    }

    // Inclusive corners, in either order.
    void fill_rect(int x0, int y0, int x1, int y1, Rgb c) {
        for (int y = std::min(y0, y1); y <= std::max(y0, y1); ++y)
            for (int x = std::min(x0, x1); x <= std::max(x0, x1); ++x) set(x, y, c);
    }

private:
    int width_, height_;
    std::vector<uint8_t> rgb_;
};

std::vector<uint8_t> encode_png(const Canvas& canvas) {
    const size_t w = size_t(canvas.width()), h = size_t(canvas.height());
    std::vector<uint8_t> ihdr;
    put_u32_be(ihdr, uint32_t(w));
    put_u32_be(ihdr, uint32_t(h));
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit truecolour, deflate, standard filters, no interlace

    std::vector<uint8_t> scanlines;
    scanlines.reserve(h * (1 + 3 * w));
    for (size_t y = 0; y < h; ++y) {
        scanlines.push_back(0);  // filter None: the other filters only pay off under compression
        auto row = canvas.rgb().begin() + std::ptrdiff_t(y * w * 3);
        scanlines.insert(scanlines.end(), row, row + std::ptrdiff_t(w * 3));
    }

    std::vector<uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    append_chunk(png, "IHDR", ihdr);
    append_chunk(png, "IDAT", zlib_compress(scanlines));
    append_chunk(png, "IEND", {});
    return png;
}

// Bresenham with a square brush; the brush straddles the ideal line so thick
// lines stay centred on their points.
void draw_line(Canvas& c, int x0, int y0, int x1, int y1, Rgb colour, int thickness) {
    const int lo = -(thickness - 1) / 2, hi = thickness / 2;
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        c.fill_rect(x0 + lo, y0 + lo, x0 + hi, y0 + hi, colour);
        if (x0 == x1 && y0 == y1) return;
        const int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

void draw_frame(Canvas& c, int x0, int y0, int x1, int y1, Rgb colour) {
    draw_line(c, x0, y0, x1, y0, colour, 1);
    draw_line(c, x0, y1, x1, y1, colour, 1);
    draw_line(c, x0, y0, x0, y1, colour, 1);
    draw_line(c, x1, y0, x1, y1, colour, 1);
}

// ------------------------------------------------------------------ bitmap font

// 5x8 cells for ASCII 32..126: rows 0-6 hold capitals and digits, row 7 the
// descenders. One byte per row, top row in the high byte, bit 4 = leftmost column.
constexpr int kGlyphCols = 5, kGlyphRows = 8, kCapRows = 7, kAdvance = kGlyphCols + 1;
constexpr std::array<uint64_t, 95> kGlyphs = {
    0x0000000000000000, 0x0404040404000400, 0x0a0a0a0000000000, 0x0a0a1f0a1f0a0a00,  //   ! " #
    0x040f140e051e0400, 0x1819020408130300, 0x0c12140815120d00, 0x0404080000000000,  // $ % & '
    0x0204080808040200, 0x0804020202040800, 0x0004150e15040000, 0x0004041f04040000,  // ( ) * +
    0x00000000000c0408, 0x0000001f00000000, 0x00000000000c0c00, 0x0001020408100000,  // , - . /
    0x0e11131519110e00, 0x040c040404040e00, 0x0e11010204081f00, 0x1f02040201110e00,  // 0 1 2 3
    0x02060a121f020200, 0x1f101e0101110e00, 0x0608101e11110e00, 0x1f01020408080800,  // 4 5 6 7
    0x0e11110e11110e00, 0x0e11110f01020c00, 0x000c0c000c0c0000, 0x000c0c000c040800,  // 8 9 : ;
    0x0204081008040200, 0x00001f001f000000, 0x0804020102040800, 0x0e11010204000400,  // < = > ?
    0x0e11010d15150e00, 0x0e11111f11111100, 0x1e11111e11111e00, 0x0e11101010110e00,  // @ A B C
    0x1c12111111121c00, 0x1f10101e10101f00, 0x1f10101e10101000, 0x0e11101711110f00,  // D E F G
    0x1111111f11111100, 0x0e04040404040e00, 0x0702020202120c00, 0x1112141814121100,  // H I J K
    0x1010101010101f00, 0x111b151511111100, 0x1111191513111100, 0x0e11111111110e00,  // L M N O
    0x1e11111e10101000, 0x0e11111115120d00, 0x1e11111e14121100, 0x0f10100e01011e00,  // P Q R S
    0x1f04040404040400, 0x1111111111110e00, 0x11111111110a0400, 0x1111111515150a00,  // T U V W
    0x11110a040a111100, 0x11110a0404040400, 0x1f01020408101f00, 0x0e08080808080e00,  // X Y Z [
    0x0010080402010000, 0x0e02020202020e00, 0x040a110000000000, 0x000000000000001f,  // \ ] ^ _
    0x0804020000000000, 0x00000e010f110f00, 0x1010161911111e00, 0x00000e1010110e00,  // ` a b c
    0x01010d1311110f00, 0x00000e111f100e00, 0x0609081c08080800, 0x00000f11110f010e,  // d e f g
    0x1010161911111100, 0x04000c0404040e00, 0x020006020202120c, 0x1010121418141200,  // h i j k
    0x0c04040404040e00, 0x00001a1515111100, 0x0000161911111100, 0x00000e1111110e00,  // l m n o
    0x00001e11111e1010, 0x00000f11110f0101, 0x0000161910101000, 0x00000e100e011e00,  // p q r s
    0x08081c0808090600, 0x0000111111130d00, 0x00001111110a0400, 0x0000111115150a00,  // t u v w
    0x0000110a040a1100, 0x00001111110f010e, 0x00001f0204081f00, 0x0204040804040200,  // x y z {
    0x0404040404040400, 0x0804040204040800, 0x0000081502000000,  // | } ~
};

uint64_t glyph_bits(char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return kGlyphs[(u < 32 || u > 126) ? '?' - 32 : u - 32];
}

int text_width(std::string_view text, int scale) {
    return text.empty() ? 0 : (int(text.size()) * kAdvance - 1) * scale;
}

int text_height(int scale) { return kGlyphRows * scale; }

// Calls plot(u, v) for each lit pixel, u along the text and v down it, so
// horizontal and rotated text share one rasteriser.
template <class Plot>
void raster_text(std::string_view text, int scale, Plot&& plot) {
    for (size_t i = 0; i < text.size(); ++i) {
        const uint64_t bits = glyph_bits(text[i]);
        for (int row = 0; row < kGlyphRows; ++row) {
            const unsigned line = unsigned(bits >> (8 * (kGlyphRows - 1 - row))) & 0xffu;
            for (int col = 0; col < kGlyphCols; ++col) {
                if (!(line & (0x10u >> col))) continue;
                const int u0 = (int(i) * kAdvance + col) * scale, v0 = row * scale;
                for (int dv = 0; dv < scale; ++dv)
                    for (int du = 0; du < scale; ++du) plot(u0 + du, v0 + dv);
            }
        }
    }
}

// (x, y) is the top-left of the text.
void draw_text(Canvas& c, int x, int y, std::string_view text, Rgb colour, int scale) {
    raster_text(text, scale, [&](int u, int v) { c.set(x + u, y + v, colour); });
}

// Reads bottom to top, as y-axis titles do; (x, y) is the top-left of the rotated box.
void draw_text_up(Canvas& c, int x, int y, std::string_view text, Rgb colour, int scale) {
    const int w = text_width(text, scale);
    raster_text(text, scale, [&](int u, int v) { c.set(x + v, y + w - 1 - u, colour); });
}

// ------------------------------------------------------------------ axes and ticks

struct Tick {
    double value;
    std::string label;
};

struct Axis {
    double lo = 0, hi = 1;  // range in axis units: log2(value) on a log2 axis
    bool log2 = false;
    std::vector<Tick> ticks;

    // 0 at lo, 1 at hi.
    double fraction(double value) const { return ((log2 ? std::log2(value) : value) - lo) / (hi - lo); }

    // Maps a value onto the pixel span [from, to]; to < from for an upward axis.
    int pixel(double value, int from, int to) const { return from + int(std::lround(fraction(value) * (to - from))); }
};

std::string format_fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Sizes read best without trailing zeros: 1M, 1.5M, not 1.00M.
std::string format_trimmed(double v) {
    std::string s = format_fixed(v, 2);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string format_bytes(double v) {
    constexpr std::array<const char*, 6> kUnits = {"", "K", "M", "G", "T", "P"};
    size_t unit = 0;
    while (std::fabs(v) >= 1024 && unit + 1 < kUnits.size()) {
        v /= 1024;
        ++unit;
    }
    return format_trimmed(v) + kUnits[unit];
}

// Powers of two past a million print as 2^N rather than as long digit strings.
std::string format_power_of_two(int exponent) {
    if (exponent < 0 || exponent >= 20) return "2^" + std::to_string(exponent);
    return std::to_string(1L << exponent);
}

struct NiceRange {
    double lo, hi, step;
    int decimals;  // enough to print every multiple of step exactly
};

// A 1, 2, 2.5 or 5 x 10^k step giving about `target` intervals over [lo, hi].
NiceRange nice_range(double lo, double hi, int target) {
    const double raw = (hi - lo) / target;
    int k = int(std::floor(std::log10(raw)));
    const double norm = raw / std::pow(10.0, k);
    double mult = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10;
    if (mult == 10) {
        mult = 1;
        ++k;
    }
    const double step = mult * std::pow(10.0, k);
    // The epsilons keep values already on a multiple of step from gaining an extra interval.
    return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, step,
            std::max(0, -k) + (mult == 2.5 && k <= 0 ? 1 : 0)};
}

std::vector<Tick> linear_ticks(const NiceRange& r, bool bytes) {
    std::vector<Tick> ticks;
    const int n = int(std::lround((r.hi - r.lo) / r.step));
    for (int i = 0; i <= n; ++i) {
        double v = r.lo + i * r.step;
        if (std::fabs(v) < r.step * 1e-9) v = 0;  // no "-0.0"
        ticks.push_back({v, bytes ? format_bytes(v) : format_fixed(v, r.decimals)});
    }
    return ticks;
}

int widest_label(const std::vector<Tick>& ticks, int scale) {
    int widest = 0;
    for (const Tick& t : ticks) widest = std::max(widest, text_width(t.label, scale));
    return widest;
}

// Neighbouring x labels must leave at least this much space between them.
int label_gap(int scale) { return 2 * kAdvance * scale; }

Axis log2_axis(double min, double max, bool bytes, int span_px, int scale) {
    int lo = int(std::floor(std::log2(min) + 1e-9)), hi = int(std::ceil(std::log2(max) - 1e-9));
    if (hi == lo) {
        --lo;
        ++hi;
    }
    auto label = [&](int e) { return bytes ? format_bytes(std::exp2(e)) : format_power_of_two(e); };
    int widest = 0;
    for (int e = lo; e <= hi; ++e) widest = std::max(widest, text_width(label(e), scale));
    // Label every power of two if there is room, else every 2nd, 3rd ... power.
    int step = 1;
    while (step < hi - lo && double(span_px) * step / (hi - lo) < widest + label_gap(scale)) ++step;
    Axis axis{double(lo), double(hi), true, {}};
    for (int e = lo; e <= hi; e += step) axis.ticks.push_back({std::exp2(e), label(e)});
    return axis;
}

Axis linear_axis(double min, double max, bool bytes, int span_px, int scale) {
    if (!(max > min)) {  // a single x value: centre it
        const double pad = min == 0 ? 1 : std::fabs(min) / 2;
        min -= pad;
        max += pad;
    }
    // Ask for fewer ticks until their labels fit side by side.
    for (int target = 10;; --target) {
        const NiceRange r = nice_range(min, max, target);
        std::vector<Tick> ticks = linear_ticks(r, bytes);
        const double spacing = double(span_px) / std::max<size_t>(1, ticks.size() - 1);
        if (target == 1 || spacing >= widest_label(ticks, scale) + label_gap(scale))
            return Axis{r.lo, r.hi, false, std::move(ticks)};
    }
}

// Bandwidth starts at zero so lines compare by height; a little headroom keeps
// the top point off the frame.
Axis y_axis(double min, double max) {
    const double lo = std::min(0.0, min);
    const double hi = max > lo ? lo + (max - lo) * 1.02 : lo + 1;
    const NiceRange r = nice_range(lo, hi, 5);
    return Axis{r.lo, r.hi, false, linear_ticks(r, false)};
}

// ------------------------------------------------------------------ data

struct Extent {
    double xmin, xmax, ymin, ymax;
};

// Magnitudes beyond this would overflow the tick arithmetic; no measurement gets near it.
bool in_range(double v) { return std::isfinite(v) && std::fabs(v) <= 1e300; }

// Connecting points in x order keeps the line a function of x whatever order
// the caller measured in.
Points plottable_points(const PlotSeries& s, bool log2_x) {
    Points out;
    for (const auto& [x, y] : s.points)
        if (in_range(x) && in_range(y) && (!log2_x || x > 0)) out.emplace_back(x, y);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

std::optional<Extent> extent_of(const std::vector<Points>& all) {
    std::optional<Extent> e;
    for (const Points& pts : all)
        for (const auto& [x, y] : pts) {
            if (!e) e = Extent{x, x, y, y};
            e->xmin = std::min(e->xmin, x);
            e->xmax = std::max(e->xmax, x);
            e->ymin = std::min(e->ymin, y);
            e->ymax = std::max(e->ymax, y);
        }
    return e;
}

// ------------------------------------------------------------------ layout

constexpr Rgb kWhite{255, 255, 255}, kInk{30, 30, 30}, kFrame{70, 70, 70}, kGrid{225, 225, 225};

// Tableau-style hues: distinct from each other and from the greys of the chart furniture.
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

struct Rect {
    int x0, y0, x1, y1;  // inclusive

    bool contains(int x, int y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

struct Chart {
    int scale;     // font magnification; the title is one step larger
    int pad;       // the unit of whitespace between elements
    int tick_len;
    Rect plot;     // the axes box
    Axis x, y;
};

// Text and spacing grow with the image so a large chart is not all whitespace.
int font_scale(int width, int height) { return std::clamp(std::min(width / 480, height / 300), 1, 4); }

Chart plan_chart(const PlotSpec& spec, const Extent& e) {
    Chart c;
    c.scale = font_scale(spec.width, spec.height);
    c.pad = 4 * c.scale;
    c.tick_len = 3 * c.scale;
    c.y = y_axis(e.ymin, e.ymax);

    const int s = c.scale, line = text_height(s);
    const int top = c.pad + (spec.title.empty() ? c.pad : text_height(s + 1) + c.pad);
    const int left = c.pad + (spec.y_label.empty() ? 0 : line + c.pad) + widest_label(c.y.ticks, s) +
                     c.pad / 2 + c.tick_len;
    const int bottom = c.tick_len + c.pad / 2 + line + (spec.x_label.empty() ? 0 : c.pad + line) + c.pad;
    // Room for half of a typical last x label ("128K"), which is centred on the right edge.
    const int right = std::max(2 * c.pad, text_width("128K", s) / 2 + c.pad);
    c.plot = {left, top, spec.width - 1 - right, spec.height - 1 - bottom};

    const int span = c.plot.x1 - c.plot.x0;
    c.x = spec.log2_x ? log2_axis(e.xmin, e.xmax, spec.x_is_bytes, span, s)
                      : linear_axis(e.xmin, e.xmax, spec.x_is_bytes, span, s);
    return c;
}

struct PixelPoint {
    int x, y;
};

std::vector<PixelPoint> to_pixels(const Chart& c, const Points& pts) {
    std::vector<PixelPoint> out;
    for (const auto& [x, y] : pts)
        out.push_back({c.x.pixel(x, c.plot.x0, c.plot.x1), c.y.pixel(y, c.plot.y1, c.plot.y0)});
    return out;
}

// ------------------------------------------------------------------ chart elements

void draw_grid_and_ticks(Canvas& canvas, const Chart& c) {
    const int s = c.scale, cap = kCapRows * s;
    for (const Tick& t : c.y.ticks) {
        const int py = c.y.pixel(t.value, c.plot.y1, c.plot.y0);
        draw_line(canvas, c.plot.x0, py, c.plot.x1, py, kGrid, 1);
        draw_line(canvas, c.plot.x0 - c.tick_len, py, c.plot.x0 - 1, py, kFrame, 1);
        const int x = c.plot.x0 - c.tick_len - c.pad / 2 - text_width(t.label, s);
        draw_text(canvas, x, py - cap / 2, t.label, kInk, s);
    }
    for (const Tick& t : c.x.ticks) {
        const int px = c.x.pixel(t.value, c.plot.x0, c.plot.x1);
        draw_line(canvas, px, c.plot.y0, px, c.plot.y1, kGrid, 1);
        draw_line(canvas, px, c.plot.y1 + 1, px, c.plot.y1 + c.tick_len, kFrame, 1);
        const int w = text_width(t.label, s);
        const int x = std::clamp(px - w / 2, 0, canvas.width() - w);  // keep edge labels whole
        draw_text(canvas, x, c.plot.y1 + c.tick_len + c.pad / 2, t.label, kInk, s);
    }
    draw_frame(canvas, c.plot.x0, c.plot.y0, c.plot.x1, c.plot.y1, kFrame);
}

void draw_titles(Canvas& canvas, const Chart& c, const PlotSpec& spec) {
    const int s = c.scale, mid_x = (c.plot.x0 + c.plot.x1) / 2, mid_y = (c.plot.y0 + c.plot.y1) / 2;
    if (!spec.title.empty())
        draw_text(canvas, mid_x - text_width(spec.title, s + 1) / 2, c.pad, spec.title, kInk, s + 1);
    if (!spec.x_label.empty()) {
        const int y = c.plot.y1 + c.tick_len + c.pad / 2 + text_height(s) + c.pad;
        draw_text(canvas, mid_x - text_width(spec.x_label, s) / 2, y, spec.x_label, kInk, s);
    }
    if (!spec.y_label.empty())
        draw_text_up(canvas, c.pad, mid_y - text_width(spec.y_label, s) / 2, spec.y_label, kInk, s);
}

void draw_marker(Canvas& canvas, PixelPoint p, int half, Rgb colour) {
    canvas.fill_rect(p.x - half, p.y - half, p.x + half, p.y + half, colour);
}

void draw_series(Canvas& canvas, const Chart& c, const std::vector<PixelPoint>& path, Rgb colour) {
    const int thickness = std::max(2, c.scale);
    for (size_t i = 1; i < path.size(); ++i)
        draw_line(canvas, path[i - 1].x, path[i - 1].y, path[i].x, path[i].y, colour, thickness);
    for (PixelPoint p : path) draw_marker(canvas, p, c.scale, colour);
}

// How much of the data a legend placed at `box` would hide: line samples a
// couple of pixels apart that fall inside it.
int coverage(const Rect& box, const std::vector<std::vector<PixelPoint>>& paths) {
    int hits = 0;
    for (const auto& path : paths) {
        for (size_t i = 0; i < path.size(); ++i) {
            const PixelPoint a = path[i], b = i + 1 < path.size() ? path[i + 1] : a;
            const int n = std::max(std::abs(b.x - a.x), std::abs(b.y - a.y)) / 2 + 1;
            for (int k = 0; k < n; ++k)
                hits += box.contains(a.x + (b.x - a.x) * k / n, a.y + (b.y - a.y) * k / n);
        }
    }
    return hits;
}

// The inside corner of the axes box that hides the least data; ties go to the
// top left, which bandwidth curves (rising to the right) usually leave empty.
Rect place_legend(const Chart& c, int w, int h, const std::vector<std::vector<PixelPoint>>& paths) {
    const int inset = c.pad;
    const int left = c.plot.x0 + inset, right = c.plot.x1 - inset - w + 1;
    const int top = c.plot.y0 + inset, bottom = c.plot.y1 - inset - h + 1;
    const std::array<Rect, 4> corners = {{{left, top, left + w - 1, top + h - 1},
                                          {right, top, right + w - 1, top + h - 1},
                                          {right, bottom, right + w - 1, bottom + h - 1},
                                          {left, bottom, left + w - 1, bottom + h - 1}}};
    Rect best = corners[0];
    int best_hits = coverage(best, paths);
    for (const Rect& r : corners) {
        const int hits = coverage(r, paths);
        if (hits < best_hits) {
            best = r;
            best_hits = hits;
        }
    }
    return best;
}

void draw_legend(Canvas& canvas, const Chart& c, const PlotSpec& spec,
                 const std::vector<std::vector<PixelPoint>>& paths) {
    if (spec.series.empty()) return;
    const int s = c.scale, row = text_height(s) + 2 * s, swatch = 10 * s;
    int names_w = 0;
    for (const PlotSeries& ps : spec.series) names_w = std::max(names_w, text_width(ps.name, s));
    const int w = c.pad + swatch + c.pad + names_w + c.pad;
    const int h = 2 * c.pad + int(spec.series.size()) * row - 2 * s;
    const Rect box = place_legend(c, w, h, paths);

    canvas.fill_rect(box.x0, box.y0, box.x1, box.y1, kWhite);
    draw_frame(canvas, box.x0, box.y0, box.x1, box.y1, kFrame);
    for (size_t i = 0; i < spec.series.size(); ++i) {
        const Rgb colour = plot_series_colour(i);
        const int y = box.y0 + c.pad + int(i) * row, mid = y + kCapRows * s / 2;
        const int x = box.x0 + c.pad;
        draw_line(canvas, x, mid, x + swatch - 1, mid, colour, std::max(2, s));
        draw_marker(canvas, {x + swatch / 2, mid}, s, colour);
        draw_text(canvas, x + swatch + c.pad, y, spec.series[i].name, kInk, s);
    }
}

Canvas render(const PlotSpec& spec, const std::vector<Points>& data, const Extent& extent) {
    const Chart chart = plan_chart(spec, extent);
    Canvas canvas(spec.width, spec.height, kWhite);
    draw_grid_and_ticks(canvas, chart);
    draw_titles(canvas, chart, spec);

    std::vector<std::vector<PixelPoint>> paths;
    for (const Points& pts : data) paths.push_back(to_pixels(chart, pts));
    for (size_t i = 0; i < paths.size(); ++i) draw_series(canvas, chart, paths[i], plot_series_colour(i));
    draw_legend(canvas, chart, spec, paths);
    return canvas;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
        const std::string why = std::error_code(errno, std::generic_category()).message();
        throw Error("cannot open plot file '" + path + "' for writing: " + why);
    }
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    if (!out) throw Error("cannot write plot file '" + path + "' (disk full?)");
}

}  // namespace

Rgb plot_series_colour(std::size_t index) { return kPalette[index % kPalette.size()]; }

void write_line_plot_png(const std::string& path, const PlotSpec& spec) {
    // Below this the labels crowd out the plot; above it the image and its
    // encoded copies (held in memory at once) would run to hundreds of MiB.
    if (spec.width < 160 || spec.height < 120 || spec.width > 4096 || spec.height > 4096)
        throw Error("plot '" + path + "': size " + std::to_string(spec.width) + "x" +
                    std::to_string(spec.height) + " is outside 160x120..4096x4096");
    std::vector<Points> data;
    for (const PlotSeries& s : spec.series) data.push_back(plottable_points(s, spec.log2_x));
    const std::optional<Extent> extent = extent_of(data);
    if (!extent)
        throw Error("plot '" + path + "': no points to draw "
                    "(points need finite x and y, and x > 0 on a log2 axis)");
    write_file(path, encode_png(render(spec, data, *extent)));
}

}  // namespace weft
