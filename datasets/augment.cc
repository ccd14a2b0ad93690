#include "datasets/augment.h"

#include <opencv2/imgproc.hpp>
#include <random>

#include "tinycore/error.h"

namespace tc::datasets {
namespace {

// The size the crop is taken from and the size of the crop.
struct Sizes {
  int h, w, crop_h, crop_w;
};
Sizes sizes(const Augment& a, int h, int w) {
  if (a.resize_h) h = a.resize_h, w = a.resize_w;
  return {h, w, a.crop_h ? a.crop_h : h, a.crop_w ? a.crop_w : w};
}

uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b) {
  return splitmix64(seed ^ splitmix64(a ^ splitmix64(b)));
}

std::vector<int64_t> augmented_shape(const Augment& a, int c, int h, int w) {
  if (a.resize_h < 0 || a.resize_w < 0 || a.crop_h < 0 || a.crop_w < 0 || a.pad < 0)
    fail("Augment: sizes must be >= 0 (resize %dx%d, crop %dx%d, pad %d)", a.resize_h, a.resize_w,
         a.crop_h, a.crop_w, a.pad);
  if ((a.resize_h == 0) != (a.resize_w == 0))
    fail("Augment: resize needs both sides, got %dx%d", a.resize_h, a.resize_w);
  if ((a.crop_h == 0) != (a.crop_w == 0))
    fail("Augment: crop needs both sides, got %dx%d", a.crop_h, a.crop_w);
  for (const std::vector<float>* v : {&a.mean, &a.std})
    if (!v->empty() && v->size() != static_cast<size_t>(c))
      fail("Augment: %s has %d values for an image of %d channels", v == &a.mean ? "mean" : "std",
           v->size(), c);
  for (float s : a.std)
    if (!(s > 0)) fail("Augment: std must be positive, got %g", s);
  Sizes s = sizes(a, h, w);
  if (s.crop_h > s.h + 2 * a.pad || s.crop_w > s.w + 2 * a.pad)
    fail("Augment: a %dx%d crop does not fit a %dx%d image padded by %d", s.crop_h, s.crop_w, s.h,
         s.w, a.pad);
  return {c, s.crop_h, s.crop_w};
}

AugmentDraw draw_augment(const Augment& a, int h, int w, uint64_t seed) {
  Sizes s = sizes(a, h, w);
  std::mt19937_64 rng(seed);
  // always three draws, so changing one option leaves the others' choices as they were
  uint64_t top = rng() % static_cast<uint64_t>(s.h + 2 * a.pad - s.crop_h + 1);
  uint64_t left = rng() % static_cast<uint64_t>(s.w + 2 * a.pad - s.crop_w + 1);
  bool flip = (rng() >> 63) != 0;
  return {static_cast<int>(top), static_cast<int>(left), a.hflip && flip};
}

void augment_image(const cv::Mat& image, const Augment& a, const AugmentDraw& d, float* out) {
  if (image.depth() != CV_8U || (image.channels() != 1 && image.channels() != 3))
    fail("augment_image: needs an 8-bit image of 1 or 3 channels, got depth %d with %d channels",
         image.depth(), image.channels());
  augmented_shape(a, image.channels(), image.rows, image.cols);  // the options fit this image
  // each step writes a new array: the caller's image is never changed
  cv::Mat resized, padded;
  if (a.resize_h)
    cv::resize(image, resized, cv::Size(a.resize_w, a.resize_h), 0, 0, cv::INTER_LINEAR);
  Sizes s = sizes(a, image.rows, image.cols);
  cv::copyMakeBorder(a.resize_h ? resized : image, padded, a.pad, a.pad, a.pad, a.pad,
                     cv::BORDER_CONSTANT, cv::Scalar::all(0));
  if (d.top < 0 || d.left < 0 || d.top + s.crop_h > padded.rows || d.left + s.crop_w > padded.cols)
    fail("augment_image: a %dx%d crop at (%d, %d) is outside the %dx%d padded image", s.crop_h,
         s.crop_w, d.top, d.left, padded.rows, padded.cols);
  cv::Mat crop = padded(cv::Rect(d.left, d.top, s.crop_w, s.crop_h)), flipped;
  if (d.flip) {
    cv::flip(crop, flipped, 1);
    crop = flipped;
  }
  std::vector<cv::Mat> channels;
  cv::split(crop, channels);
  for (size_t c = 0; c < channels.size(); c++) {
    // (x / 255 - mean) / std in one pass, straight into this channel's plane of `out`
    double mean = a.mean.empty() ? 0 : a.mean[c], std = a.std.empty() ? 1 : a.std[c];
    cv::Mat plane(s.crop_h, s.crop_w, CV_32F, out + c * s.crop_h * s.crop_w);
    channels[c].convertTo(plane, CV_32F, 1 / (255 * std), -mean / std);
  }
}

}  // namespace tc::datasets
