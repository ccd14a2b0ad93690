// PNG charts for results people would rather look at than read: benchmark ratios as bars,
// training curves as lines. Text uses stb_easy_font's built-in bitmap font; PNGs are written by
// stb_image_write. Both functions throw std::runtime_error naming the file when it cannot be
// written, and do nothing surprising with empty or non-finite data (those points are skipped).
#pragma once

#include <string>
#include <vector>

namespace plot {

struct Bar {
  std::string label;
  double value;
};

// Horizontal bars, one per entry, scaled to the largest value, with a dashed marker at
// `reference` (e.g. 1.0 = parity with the anchor) when it is > 0.
void bar_chart(const std::string& path, const std::string& title, const std::vector<Bar>& bars,
               double reference = 1.0);

struct Series {
  std::string name;
  std::vector<double> x, y;
};

// One line per series over shared axes, with ticks, axis labels and a legend.
void line_chart(const std::string& path, const std::string& title, const std::string& xlabel,
                const std::string& ylabel, const std::vector<Series>& series);

}  // namespace plot
