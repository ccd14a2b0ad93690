// Augmentation against plain loops: every crop position with and without a flip, normalization,
// bilinear resize (within OpenCV's 8-bit rounding), the output shape, reproducible draws that
// cover every choice, and every bad option.
#include "datasets/augment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "tests/datasets/naive_augment.h"
#include "tinycore/error.h"

namespace {

using tc::datasets::Augment;
using tc::datasets::augment_image;
using tc::datasets::AugmentDraw;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// An image whose every byte differs, so a wrong pixel or channel cannot go unseen.
cv::Mat test_image(int h, int w, int c) {
  cv::Mat m(h, w, CV_8UC(c));
  for (int y = 0; y < h; y++)
    for (int i = 0; i < w * c; i++)
      m.ptr<uint8_t>(y)[i] = static_cast<uint8_t>(7 + 37 * y + 11 * i);
  return m;
}

std::vector<float> run(const cv::Mat& image, const Augment& a, const AugmentDraw& d) {
  std::vector<int64_t> shape =
      tc::datasets::augmented_shape(a, image.channels(), image.rows, image.cols);
  std::vector<float> out(shape[0] * shape[1] * shape[2], -99.0f);
  augment_image(image, a, d, out.data());
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], tol) << "at " << i;
}

TEST(Augment, PlainIsPixelsOver255InChwOrder) {
  cv::Mat image = test_image(3, 4, 3);
  std::vector<float> out = run(image, {}, {});
  EXPECT_EQ(out.size(), 36u);
  // channel 1 of pixel (row 2, col 3) is plane 1, offset 2 * 4 + 3
  EXPECT_FLOAT_EQ(out[12 + 11], image.ptr<uint8_t>(2)[3 * 3 + 1] / 255.0f);
  expect_near(out, naive::augment(image, {}, {}), 1e-7);
}

TEST(Augment, EveryCropAndFlipMatchesTheNaiveReference) {
  for (int c : {1, 3}) {
    cv::Mat image = test_image(4, 5, c), before = image.clone();
    Augment a{.crop_h = 3, .crop_w = 3, .pad = 2, .hflip = true};
    if (c == 3) a.mean = {0.5f, 0.25f, 0.1f}, a.std = {0.2f, 0.5f, 2.0f};
    EXPECT_EQ(tc::datasets::augmented_shape(a, c, 4, 5), (std::vector<int64_t>{c, 3, 3}));
    for (int top = 0; top <= 4 + 4 - 3; top++)
      for (int left = 0; left <= 5 + 4 - 3; left++)
        for (bool flip : {false, true}) {
          AugmentDraw d{top, left, flip};
          SCOPED_TRACE(testing::Message() << c << " channels, crop at " << top << "," << left
                                          << (flip ? " flipped" : ""));
          expect_near(run(image, a, d), naive::augment(image, a, d), 1e-6);
        }
    EXPECT_EQ(cv::norm(image, before, cv::NORM_INF), 0);  // the input is left as it was
  }
  // a flip without crop or pad mirrors the image itself, and leaves the caller's copy alone
  cv::Mat image = test_image(2, 3, 3), before = image.clone();
  expect_near(run(image, {.hflip = true}, {0, 0, true}),
              naive::augment(image, {.hflip = true}, {0, 0, true}), 1e-7);
  EXPECT_EQ(cv::norm(image, before, cv::NORM_INF), 0);
}

// Bilinear with pixel centres at +0.5 (OpenCV's and PyTorch's align_corners=False), edges
// clamped, in double.
double bilinear(const cv::Mat& m, int c, double sy, double sx) {
  auto at = [&](int y, int x) {
    y = std::clamp(y, 0, m.rows - 1), x = std::clamp(x, 0, m.cols - 1);
    return static_cast<double>(m.ptr<uint8_t>(y)[x * m.channels() + c]);
  };
  sy = std::max(sy, 0.0), sx = std::max(sx, 0.0);
  int y0 = static_cast<int>(std::floor(sy)), x0 = static_cast<int>(std::floor(sx));
  double fy = sy - y0, fx = sx - x0;
  return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
         fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
}

TEST(Augment, ResizeIsBilinear) {
  for (auto [h, w, rh, rw] : {std::array<int, 4>{3, 4, 5, 7}, {7, 9, 4, 5}, {6, 6, 6, 6}}) {
    cv::Mat image = test_image(h, w, 3), before = image.clone();
    Augment a{.resize_h = rh, .resize_w = rw};
    std::vector<float> out = run(image, a, {});
    EXPECT_EQ(cv::norm(image, before, cv::NORM_INF), 0);
    ASSERT_EQ(out.size(), static_cast<size_t>(3 * rh * rw));
    for (int c = 0; c < 3; c++)
      for (int y = 0; y < rh; y++)
        for (int x = 0; x < rw; x++) {
          double want = bilinear(image, c, (y + 0.5) * h / rh - 0.5, (x + 0.5) * w / rw - 0.5);
          // OpenCV interpolates 8-bit images in fixed point and rounds to 8 bits
          ASSERT_NEAR(out[(c * rh + y) * rw + x] * 255, want, 1.0)
              << h << "x" << w << " -> " << rh << "x" << rw << " at " << c << "," << y << "," << x;
        }
  }
  // resize, then pad and crop the resized image
  cv::Mat image = test_image(5, 5, 1);
  Augment a{.resize_h = 10, .resize_w = 10, .crop_h = 8, .crop_w = 8, .pad = 1};
  EXPECT_EQ(tc::datasets::augmented_shape(a, 1, 5, 5), (std::vector<int64_t>{1, 8, 8}));
  std::vector<float> resized = run(image, {.resize_h = 10, .resize_w = 10}, {});
  std::vector<float> out = run(image, a, {3, 0, false});
  for (int y = 0; y < 8; y++)
    for (int x = 0; x < 8; x++)
      EXPECT_EQ(out[y * 8 + x], x == 0 ? 0.0f : resized[(y + 2) * 10 + x - 1]) << y << "," << x;
}

TEST(Augment, DrawsAreSeededAndCoverEveryChoice) {
  Augment a{.crop_h = 3, .crop_w = 3, .pad = 2, .hflip = true};
  std::set<int> tops, lefts, flips;
  for (uint64_t seed = 0; seed < 400; seed++) {
    AugmentDraw d = tc::datasets::draw_augment(a, 4, 5, seed);
    AugmentDraw again = tc::datasets::draw_augment(a, 4, 5, seed);
    EXPECT_EQ(d.top, again.top);
    EXPECT_EQ(d.left, again.left);
    EXPECT_EQ(d.flip, again.flip);
    tops.insert(d.top), lefts.insert(d.left), flips.insert(d.flip);
  }
  EXPECT_EQ(tops, (std::set<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(lefts, (std::set<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(flips, (std::set<int>{0, 1}));
  for (uint64_t seed = 0; seed < 50; seed++) {
    AugmentDraw d = tc::datasets::draw_augment({}, 4, 5, seed);  // nothing random to choose
    EXPECT_EQ(d.top + d.left + d.flip, 0);
  }
  // neighbouring samples and epochs get unrelated seeds
  std::set<uint64_t> seeds;
  for (uint64_t e = 0; e < 10; e++)
    for (uint64_t i = 0; i < 10; i++) seeds.insert(tc::datasets::mix_seed(3, e, i));
  EXPECT_EQ(seeds.size(), 100u);
  EXPECT_NE(tc::datasets::mix_seed(3, 0, 1), tc::datasets::mix_seed(3, 1, 0));
}

TEST(Augment, BadOptionsAreErrors) {
  auto error_of = [](const Augment& a, int c) -> std::string {
    try {
      tc::datasets::augmented_shape(a, c, 4, 5);
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_THAT(error_of({.crop_h = 9, .crop_w = 3, .pad = 2}, 3),
              HasSubstr("a 9x3 crop does not fit a 4x5 image padded by 2"));
  EXPECT_THAT(error_of({.resize_h = 2, .resize_w = 2, .crop_h = 3, .crop_w = 3}, 3),
              HasSubstr("a 3x3 crop does not fit a 2x2 image"));
  EXPECT_THAT(error_of({.mean = {0.5f}}, 3),
              HasSubstr("mean has 1 values for an image of 3 channels"));
  EXPECT_THAT(error_of({.std = {1, 0, 1}}, 3), HasSubstr("std must be positive, got 0"));
  EXPECT_THAT(error_of({.resize_h = 4}, 3), HasSubstr("resize needs both sides, got 4x0"));
  EXPECT_THAT(error_of({.crop_w = 4}, 3), HasSubstr("crop needs both sides, got 0x4"));
  EXPECT_THAT(error_of({.pad = -1}, 3), HasSubstr("sizes must be >= 0"));
  std::vector<float> out(100);
  EXPECT_THAT([&] { augment_image(cv::Mat(4, 5, CV_16UC3), {}, {}, out.data()); },
              ThrowsMessage<tc::Error>(HasSubstr("needs an 8-bit image of 1 or 3 channels")));
  EXPECT_THAT(
      [&] {
        augment_image(test_image(4, 5, 1), {.pad = 1}, {3, 0, false}, out.data());
      },
      ThrowsMessage<tc::Error>(HasSubstr("a 4x5 crop at (3, 0) is outside the 6x7 padded image")));
}

}  // namespace
