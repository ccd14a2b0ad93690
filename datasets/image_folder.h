// A folder of images, one sub-folder per class (root/<class>/**/*.{jpg,jpeg,png}), as
// torchvision's ImageFolder: classes sorted by name are labels 0, 1, ...; images are decoded by
// OpenCV and augmented (datasets/augment.h) into C x H x W floats for a DataLoader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/augment.h"
#include "datasets/loader.h"

namespace tc::datasets {

struct ImageFolderOpts {
  Augment augment = {};    // without resize or crop every image must have the first one's size
  bool grayscale = false;  // decode to one channel; else three, in RGB order
  uint64_t seed = 0;       // of the augmentation's random choices
};

class ImageFolder {
 public:
  // Lists the images (decoding the first when the output size depends on it). Throws tc::Error
  // when root is missing or holds no class folders, or a class folder holds no images.
  explicit ImageFolder(const std::string& root, ImageFolderOpts opts = {});

  int64_t size() const { return static_cast<int64_t>(files_.size()); }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::string& path(int64_t i) const;
  int32_t label(int64_t i) const;
  const std::vector<int64_t>& sample_shape() const { return shape_; }  // (C, H, W)
  int64_t sample_numel() const { return shape_[0] * shape_[1] * shape_[2]; }

  // Image i as decoded (8-bit, RGB or gray); throws naming the file if it cannot be read.
  cv::Mat decode(int64_t i) const;
  // Image i augmented with the choices drawn for (seed, epoch, i), and its label. Thread-safe.
  void get(int64_t i, int64_t epoch, float* x, int32_t* y) const;
  // get() for a DataLoader (which must not outlive this set).
  DataLoader::EpochFetch fetch() const;

 private:
  ImageFolderOpts o_;
  std::vector<std::string> classes_, files_;
  std::vector<int32_t> labels_;
  int first_h_ = 0, first_w_ = 0;  // the size every image must have when nothing resizes it
  std::vector<int64_t> shape_;
};

}  // namespace tc::datasets
