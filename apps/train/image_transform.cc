#include "apps/train/image_transform.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tinycore/error.h"

namespace tc::train {
namespace {

constexpr int64_t kMaxSide = 1 << 14;

datasets::Augment augment_of(const config::DataConfig& d, int channels, bool training) {
  datasets::Augment a;
  a.resize_h = a.resize_w = static_cast<int>(d.size);
  a.crop_h = a.crop_w = static_cast<int>(d.crop);
  if (training) {
    a.pad = static_cast<int>(d.pad);
    a.hflip = d.flip;
  }
  // augment_image computes (x / 255 - mean) / std: raw 0..255 is mean 0 and std 1/255
  a.mean.assign(static_cast<size_t>(channels), d.normalize ? static_cast<float>(d.mean) : 0.0f);
  a.std.assign(static_cast<size_t>(channels), d.normalize ? static_cast<float>(d.std) : 1 / 255.0f);
  return a;
}

}  // namespace

ImageTransform::ImageTransform(const config::DataConfig& d, int channels, int64_t seed)
    : channels_(channels),
      normalize_(d.normalize),
      mean_(d.mean),
      std_(d.std),
      seed_(static_cast<uint64_t>(seed)) {
  for (const auto& [key, v] :
       {std::pair{"data.size", d.size}, {"data.crop", d.crop}, {"data.pad", d.pad}})
    if (v < 0 || v > kMaxSide) fail("%s: %d is not a side in pixels (0 .. %d)", key, v, kMaxSide);
  train_ = augment_of(d, channels, true);
  eval_ = augment_of(d, channels, false);
  eval_identity_ = d.size == 0 && d.crop == 0;
  train_identity_ = eval_identity_ && d.pad == 0 && !d.flip;
}

std::vector<int64_t> ImageTransform::shape(int h, int w) const {
  int sh = eval_.resize_h ? eval_.resize_h : h, sw = eval_.resize_w ? eval_.resize_w : w;
  if (eval_.crop_h > std::min(sh, sw))
    fail(
        "data.crop: %d is larger than the %dx%d images%s: evaluation's center crop must fit "
        "them without data.pad",
        eval_.crop_h, sh, sw, eval_.resize_h ? " (data.size)" : "");
  return datasets::augmented_shape(eval_, channels_, h, w);
}

void ImageTransform::train_planes(const uint8_t* chw, int h, int w, int64_t epoch, int64_t index,
                                  float* out) const {
  if (train_identity_) return scale(chw, int64_t{channels_} * h * w, out);
  train_image(interleaved(chw, h, w), epoch, index, out);
}

void ImageTransform::eval_planes(const uint8_t* chw, int h, int w, float* out) const {
  if (eval_identity_) return scale(chw, int64_t{channels_} * h * w, out);
  eval_image(interleaved(chw, h, w), out);
}

void ImageTransform::train_image(const cv::Mat& image, int64_t epoch, int64_t index,
                                 float* out) const {
  // the draw of ImageFolder::get: the same for a sample wherever and whenever it is fetched
  uint64_t seed =
      datasets::mix_seed(seed_, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index));
  augment(image, train_, datasets::draw_augment(train_, image.rows, image.cols, seed), out);
}

void ImageTransform::eval_image(const cv::Mat& image, float* out) const {
  int sh = eval_.resize_h ? eval_.resize_h : image.rows;
  int sw = eval_.resize_w ? eval_.resize_w : image.cols;
  int ch = eval_.crop_h ? eval_.crop_h : sh, cw = eval_.crop_w ? eval_.crop_w : sw;
  augment(image, eval_, {.top = (sh - ch) / 2, .left = (sw - cw) / 2}, out);
}

void ImageTransform::augment(const cv::Mat& image, const datasets::Augment& a,
                             const datasets::AugmentDraw& d, float* out) const {
  datasets::augment_image(image, a, d, out);
  if (normalize_) return;
  // raw values are whole (OpenCV resizes 8-bit to 8-bit); std 1/255 in float is off by 1e-8
  std::vector<int64_t> s = datasets::augmented_shape(a, channels_, image.rows, image.cols);
  for (int64_t i = 0; i < s[0] * s[1] * s[2]; i++) out[i] = std::nearbyint(out[i]);
}

void ImageTransform::scale(const uint8_t* pixels, int64_t n, float* out) const {
  for (int64_t p = 0; p < n; p++)
    out[p] = normalize_ ? static_cast<float>((pixels[p] / 255.0 - mean_) / std_) : pixels[p];
}

cv::Mat ImageTransform::interleaved(const uint8_t* chw, int h, int w) const {
  // augment_image only reads its input, so the planes are wrapped, not copied
  auto plane = [&](int c) { return cv::Mat(h, w, CV_8UC1, const_cast<uint8_t*>(chw + c * h * w)); };
  if (channels_ == 1) return plane(0);
  std::vector<cv::Mat> planes;
  for (int c = 0; c < channels_; c++) planes.push_back(plane(c));
  cv::Mat hwc;
  cv::merge(planes, hwc);
  return hwc;
}

}  // namespace tc::train
