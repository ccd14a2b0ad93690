// ResNets (He et al. 2015) with torchvision's parameter names (conv1.weight, bn1.*,
// layer1.0.conv1.weight, ..., layer2.0.downsample.0.weight, fc.weight):
//   imagenet  depth 18, 34 (basic blocks) or 50 (bottlenecks; the stride on the 3x3 conv, as
//             torchvision's v1.5): a 7x7/2 stem and a 3x3/2 max-pool, 4 stages of 64..512
//             channels (x4 for bottlenecks)
//   cifar     depth 6n+2 (8, 20, 32, ...): a 3x3 stem, 3 stages of n basic blocks with width,
//             2 width, 4 width channels, no max-pool
// A shortcut whose shape changes is a 1x1 conv + batchnorm ("downsample"), as torchvision's.
// Both end with a global average pool and fc (classes).
#pragma once

#include <memory>
#include <optional>

#include "nn/layers.h"

namespace tc::nn {

struct ResNetOpts {
  int64_t depth = 18;
  bool cifar = false;
  int64_t in_channels = 3;
  int64_t classes = 1000;
  int64_t width = 16;  // cifar: channels of the first stage (imagenet: always 64)
};

// conv3x3 - bn - relu - conv3x3 - bn, plus the shortcut, then relu.
class BasicBlock : public Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlock(int64_t in, int64_t planes, int64_t stride);
  Tensor forward(const Tensor& x) override;
  Conv2d conv1;
  BatchNorm bn1;
  Conv2d conv2;
  BatchNorm bn2;
  std::unique_ptr<Sequential> downsample;  // 0: conv1x1, 1: batchnorm; none for the identity
};

// conv1x1 - bn - relu - conv3x3 (stride) - bn - relu - conv1x1 (4x planes) - bn, plus the
// shortcut, then relu.
class Bottleneck : public Module {
 public:
  static constexpr int64_t kExpansion = 4;
  Bottleneck(int64_t in, int64_t planes, int64_t stride);
  Tensor forward(const Tensor& x) override;
  Conv2d conv1;
  BatchNorm bn1;
  Conv2d conv2;
  BatchNorm bn2;
  Conv2d conv3;
  BatchNorm bn3;
  std::unique_ptr<Sequential> downsample;
};

class ResNet : public Module {
 public:
  // Throws tc::Error for a depth the style has no layout for.
  explicit ResNet(ResNetOpts opts);
  Tensor forward(const Tensor& x) override;

 private:
  ResNetOpts o_;
  std::unique_ptr<Conv2d> conv1;
  std::unique_ptr<BatchNorm> bn1;
  std::vector<std::unique_ptr<Sequential>> layers_;
  std::unique_ptr<Linear> fc;
};

}  // namespace tc::nn
