#include "apps/common/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "stb/stb_easy_font.h"
#include "stb/stb_image_write.h"

namespace plot {
namespace {

struct Color {
  uint8_t r, g, b;
};
constexpr Color kWhite{255, 255, 255}, kBlack{20, 20, 20}, kGrey{200, 200, 200}, kDark{90, 90, 90};
// A colour-blind-friendly palette (Okabe-Ito).
constexpr Color kPalette[] = {{0, 114, 178},  {230, 159, 0}, {0, 158, 115}, {204, 121, 167},
                              {86, 180, 233}, {213, 94, 0},  {240, 228, 66}};

class Canvas {
 public:
  Canvas(int w, int h) : w_(w), h_(h), rgb_(static_cast<size_t>(w) * h * 3, 255) {}
  int width() const { return w_; }
  int height() const { return h_; }

  void rect(int x0, int y0, int x1, int y1, Color c) {
    x0 = std::clamp(x0, 0, w_), x1 = std::clamp(x1, 0, w_);
    y0 = std::clamp(y0, 0, h_), y1 = std::clamp(y1, 0, h_);
    for (int y = y0; y < y1; y++)
      for (int x = x0; x < x1; x++) {
        uint8_t* p = &rgb_[(static_cast<size_t>(y) * w_ + x) * 3];
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  }
  // A `thick`-pixel line; every `dash`-th run of pixels is left out when dash > 0.
  void line(double x0, double y0, double x1, double y1, Color c, int thick = 2, int dash = 0) {
    int steps = static_cast<int>(std::max(std::abs(x1 - x0), std::abs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; i++) {
      if (dash > 0 && (i / dash) % 2) continue;
      double t = static_cast<double>(i) / steps;
      int x = static_cast<int>(std::lround(x0 + t * (x1 - x0)));
      int y = static_cast<int>(std::lround(y0 + t * (y1 - y0)));
      rect(x - thick / 2, y - thick / 2, x - thick / 2 + thick, y - thick / 2 + thick, c);
    }
  }
  // Text with its top-left corner at (x, y), `scale` pixels per font pixel.
  void text(int x, int y, const std::string& s, Color c, int scale = 2) {
    std::vector<float> v = glyph_quads(s);
    for (size_t q = 0; q + 16 <= v.size(); q += 16) {
      const float* a = &v[q];  // 4 vertices of (x, y, z, rgba) = 4 floats each
      const float* b = a + 8;  // the opposite corner
      rect(x + static_cast<int>(a[0] * scale), y + static_cast<int>(a[1] * scale),
           x + static_cast<int>(b[0] * scale), y + static_cast<int>(b[1] * scale), c);
    }
  }
  // The width the text takes when drawn (the font's own width estimate runs short).
  static int text_width(const std::string& s, int scale = 2) {
    std::vector<float> v = glyph_quads(s);
    float right = 0;
    for (size_t q = 0; q + 16 <= v.size(); q += 16) right = std::max(right, v[q + 8]);
    return static_cast<int>(right * scale) + scale;
  }
  // The font's quads for `s` at scale 1, 16 floats each. stb_easy_font stops when its buffer
  // fills: its "~270 bytes a character" is an average, and digits like 8 and 0 take more, so
  // each character gets room for 16 quads.
  static std::vector<float> glyph_quads(const std::string& s) {
    std::vector<float> v(s.size() * 16 * 16 + 16);
    std::string copy = s;
    unsigned char rgba[4] = {0, 0, 0, 255};
    int quads = stb_easy_font_print(0, 0, copy.data(), rgba, v.data(),
                                    static_cast<int>(v.size() * sizeof(float)));
    v.resize(static_cast<size_t>(quads) * 16);
    return v;
  }
  void save(const std::string& path) const {
    if (!stbi_write_png(path.c_str(), w_, h_, 3, rgb_.data(), w_ * 3))
      throw std::runtime_error("plot: cannot write PNG file '" + path + "'");
  }

 private:
  int w_, h_;
  std::vector<uint8_t> rgb_;
};

std::string fmt(double v) {
  char b[32];
  double a = std::abs(v);
  std::snprintf(b, sizeof b,
                a != 0 && (a < 1e-3 || a >= 1e5) ? "%.2g"
                : a < 10                         ? "%.3g"
                                                 : "%.4g",
                v);
  return b;
}

// Round tick spacing (1, 2 or 5 times a power of ten) giving about `n` ticks over [lo, hi].
double tick_step(double lo, double hi, int n) {
  double raw = (hi - lo) / n, p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

void bar_chart(const std::string& path, const std::string& title, const std::vector<Bar>& bars,
               double reference) {
  int label_w = 0;
  double vmax = reference > 0 ? reference : 0;
  for (const Bar& b : bars) {
    label_w = std::max(label_w, Canvas::text_width(b.label));
    if (std::isfinite(b.value)) vmax = std::max(vmax, b.value);
  }
  if (vmax <= 0) vmax = 1;
  // One outlier must not flatten the rest: the axis ends at 4x the reference, longer bars are cut
  // (their value is still printed).
  if (reference > 0) vmax = std::min(vmax, 4 * reference);
  const int bar_h = 22, gap = 8, top = 50, left = label_w + 24, plot_w = 560;
  Canvas c(left + plot_w + 90, top + static_cast<int>(bars.size()) * (bar_h + gap) + 30);
  c.text(12, 12, title, kBlack, 3);
  auto xpos = [&](double v) { return left + v / vmax * plot_w; };
  for (size_t i = 0; i < bars.size(); i++) {
    int y = top + static_cast<int>(i) * (bar_h + gap);
    c.text(12, y + 4, bars[i].label, kBlack);
    double v = bars[i].value;
    if (!std::isfinite(v)) {
      c.text(left + 4, y + 4, "n/a", kDark);
      continue;
    }
    int x1 = static_cast<int>(xpos(std::clamp(v, 0.0, vmax)));
    Color col = reference > 0 && v < reference ? kPalette[1] : kPalette[0];
    c.rect(left, y, x1, y + bar_h, col);
    c.text(x1 + 6, y + 4, v > vmax ? ">> " + fmt(v) : fmt(v), kBlack);
  }
  c.line(left, top - 6, left, c.height() - 24, kDark, 2);
  if (reference > 0) {
    double x = xpos(reference);
    c.line(x, top - 6, x, c.height() - 24, kBlack, 2, 6);
    c.text(static_cast<int>(x) - 10, c.height() - 20, fmt(reference), kBlack);
  }
  c.save(path);
}

void line_chart(const std::string& path, const std::string& title, const std::string& xlabel,
                const std::string& ylabel, const std::vector<Series>& series) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Series& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); i++) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
      y0 = std::min(y0, s.y[i]), y1 = std::max(y1, s.y[i]);
    }
  if (!(x0 <= x1)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // nothing finite to draw
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) y0 -= 0.5, y1 += 0.5;
  double pad = (y1 - y0) * 0.05;
  y0 -= pad, y1 += pad;
  const int left = 90, right = 30, top = 50, bottom = 60, w = 800, h = 480;
  Canvas c(w, h);
  c.text(12, 12, title, kBlack, 3);
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * (w - left - right); };
  auto py = [&](double y) { return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom); };
  for (double step = tick_step(y0, y1, 6), t = std::ceil(y0 / step) * step; t <= y1; t += step) {
    c.line(left, py(t), w - right, py(t), kGrey, 1);
    c.text(left - 8 - Canvas::text_width(fmt(t)), static_cast<int>(py(t)) - 6, fmt(t), kDark);
  }
  for (double step = tick_step(x0, x1, 8), t = std::ceil(x0 / step) * step; t <= x1; t += step) {
    c.line(px(t), h - bottom, px(t), h - bottom + 5, kDark, 1);
    c.text(static_cast<int>(px(t)) - Canvas::text_width(fmt(t)) / 2, h - bottom + 10, fmt(t),
           kDark);
  }
  c.line(left, top, left, h - bottom, kDark, 2);
  c.line(left, h - bottom, w - right, h - bottom, kDark, 2);
  c.text((w - Canvas::text_width(xlabel)) / 2, h - 24, xlabel, kBlack);
  c.text(8, top - 20, ylabel, kBlack);
  for (size_t k = 0; k < series.size(); k++) {
    const Series& s = series[k];
    Color col = kPalette[k % std::size(kPalette)];
    bool have = false;
    double lx = 0, ly = 0;
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); i++) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
        have = false;
        continue;
      }
      double nx = px(s.x[i]), ny = py(s.y[i]);
      if (have) c.line(lx, ly, nx, ny, col, 2);
      lx = nx, ly = ny, have = true;
    }
    int ly_legend = top + 8 + static_cast<int>(k) * 20;
    c.rect(w - right - 180, ly_legend + 4, w - right - 160, ly_legend + 10, col);
    c.text(w - right - 154, ly_legend, s.name, kBlack);
  }
  c.save(path);
}

}  // namespace plot
