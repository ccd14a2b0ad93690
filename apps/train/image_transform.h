// How the data.* image keys turn an 8-bit image into a sample for the model, in torchvision's
// order: resized to data.size, padded by data.pad and cropped at random to data.crop, flipped
// at random (data.flip) for training; resized and cropped in the center for evaluation (never
// padded or flipped); then scaled as data.normalize, data.mean and data.std say. Training's
// random choices come from (train.seed, epoch, sample), as ImageFolder::get draws them, so a
// run and its --resume see the same pixels.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <vector>

#include "apps/common/config.h"
#include "datasets/augment.h"

namespace tc::train {

class ImageTransform {
 public:
  // For images of `channels` channels (1 or 3); throws tc::Error naming a data.* key that is
  // out of range.
  ImageTransform(const config::DataConfig& data, int channels, int64_t seed);

  // The (C, H, W) sample an h x w image becomes; throws tc::Error naming data.crop when the
  // crop is larger than the (resized) image.
  std::vector<int64_t> shape(int h, int w) const;

  // Training sample `index` of `epoch` and an evaluation sample from a decoded image (8-bit,
  // HWC in the channel order wanted), written as CHW floats.
  void train_image(const cv::Mat& image, int64_t epoch, int64_t index, float* out) const;
  void eval_image(const cv::Mat& image, float* out) const;
  // The same from an image held as 8-bit CHW planes of h x w (as Fashion-MNIST and CIFAR store
  // them). Without resize, crop, pad or flip the pixels are only scaled: no OpenCV per sample.
  void train_planes(const uint8_t* chw, int h, int w, int64_t epoch, int64_t index,
                    float* out) const;
  void eval_planes(const uint8_t* chw, int h, int w, float* out) const;

 private:
  void scale(const uint8_t* pixels, int64_t n, float* out) const;
  void augment(const cv::Mat& image, const datasets::Augment& a, const datasets::AugmentDraw& d,
               float* out) const;
  cv::Mat interleaved(const uint8_t* chw, int h, int w) const;

  int channels_;
  bool normalize_;
  double mean_, std_;
  uint64_t seed_;
  datasets::Augment train_, eval_;
  bool train_identity_, eval_identity_;  // nothing but scaling to do
};

}  // namespace tc::train
