// The independent reference for datasets/augment: pad, crop, flip and normalize written as plain
// loops in double over an 8-bit HWC image, with none of OpenCV's operations.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <vector>

#include "datasets/augment.h"

namespace naive {

// CHW doubles of `image` (no resize) padded with zeros, cropped at the draw, maybe mirrored,
// then (v / 255 - mean) / std.
inline std::vector<double> augment(const cv::Mat& image, const tc::datasets::Augment& a,
                                   const tc::datasets::AugmentDraw& d) {
  const int c = image.channels(), pad = a.pad;
  const int ch = a.crop_h ? a.crop_h : image.rows, cw = a.crop_w ? a.crop_w : image.cols;
  std::vector<double> out(static_cast<size_t>(c * ch * cw));
  for (int k = 0; k < c; k++)
    for (int y = 0; y < ch; y++)
      for (int x = 0; x < cw; x++) {
        int px = d.flip ? cw - 1 - x : x;                  // which column of the crop lands here
        int sy = d.top + y - pad, sx = d.left + px - pad;  // in the image, before padding
        double v = 0;
        if (sy >= 0 && sy < image.rows && sx >= 0 && sx < image.cols)
          v = image.ptr<uint8_t>(sy)[sx * c + k];
        double mean = a.mean.empty() ? 0 : a.mean[k], std = a.std.empty() ? 1 : a.std[k];
        out[(static_cast<size_t>(k) * ch + y) * cw + x] = (v / 255 - mean) / std;
      }
  return out;
}

}  // namespace naive
