// The PNG charts (apps/common/plot.h): a bar chart leaves room for its longest label, read back
// as an image. Digits like 8 take more of the font's quads than its average allowance; a label of
// them used to be cut short, and the chart with it no wider than one with half of it.
#include "apps/common/plot.h"

#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>
#include <string>

#include "tests/train/tiny_run.h"

namespace {

int chart_width(const std::string& label) {
  std::string path = tinyrun::fresh_dir("plot") + "/bars.png";
  plot::bar_chart(path, "t", {{label, 1.0}, {"x", 0.5}});
  cv::Mat png = cv::imread(path);
  EXPECT_FALSE(png.empty()) << path;
  return png.cols;
}

TEST(Plot, BarChartLabelsAreDrawnWhole) {
  // every 8 advances the label by the same width: the chart grows linearly with the label
  int w7 = chart_width(std::string(7, '8')), w14 = chart_width(std::string(14, '8')),
      w28 = chart_width(std::string(28, '8'));
  EXPECT_GT(w14, w7);
  EXPECT_EQ(w28 - w14, 2 * (w14 - w7));
}

}  // namespace
