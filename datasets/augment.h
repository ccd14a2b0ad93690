// Image augmentation in torchvision's order — Resize, RandomCrop with padding,
// RandomHorizontalFlip, ToTensor, Normalize — with OpenCV doing the pixel work. The random
// choices are drawn apart from the pixel work, from a seed, so they are reproducible and a test
// can check an output against the choices that made it.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <vector>

namespace tc::datasets {

struct Augment {
  int resize_h = 0, resize_w = 0;  // first resize to this (bilinear); 0, 0: keep the decoded size
  int crop_h = 0, crop_w = 0;      // then a random crop of this size; 0: the image's own size
  int pad = 0;                     // zeros added on every side before the crop (CIFAR uses 4)
  bool hflip = false;              // mirror left-right with probability 1/2
  std::vector<float> mean = {},
                     std = {};  // per channel, of values scaled to [0, 1]; empty: 0 and 1
};

struct AugmentDraw {
  int top = 0, left = 0;  // of the crop, in the padded image
  bool flip = false;
};

// The output shape (C, H, W) for a c-channel image of h x w as decoded. Throws tc::Error for
// options that do not fit it: a crop larger than the padded image, mean/std of the wrong length,
// a std of zero, a resize to one side only, negative sizes.
std::vector<int64_t> augmented_shape(const Augment& a, int c, int h, int w);

// The random choices for an image of h x w (as decoded): crop offsets uniform over every place
// the crop fits in the padded image, a flip with probability 1/2. The same seed, the same draw.
AugmentDraw draw_augment(const Augment& a, int h, int w, uint64_t seed);

// Applies `a` with the choices `d` to an 8-bit image of 1 or 3 channels (in the channel order
// wanted: OpenCV decodes BGR), writing C*H*W floats, channel-major, to `out`.
void augment_image(const cv::Mat& image, const Augment& a, const AugmentDraw& d, float* out);

// One well-mixed seed from a seed and two counters (say epoch and sample), so the draws of
// neighbouring samples are unrelated.
uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b);

}  // namespace tc::datasets
