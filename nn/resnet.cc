#include "nn/resnet.h"

#include <string>
#include <vector>

#include "tinycore/error.h"

namespace tc::nn {
namespace {

Conv2dOpts conv_opts(int64_t stride, int64_t padding) {
  return {.stride = stride, .padding = padding, .bias = false};
}

// The 1x1 conv + batchnorm shortcut when the block changes the shape, else none (identity).
std::unique_ptr<Sequential> make_downsample(int64_t in, int64_t out, int64_t stride) {
  if (stride == 1 && in == out) return nullptr;
  auto d = std::make_unique<Sequential>();
  d->add<Conv2d>(in, out, 1, conv_opts(stride, 0));
  d->add<BatchNorm>(out);
  return d;
}

Tensor shortcut(const std::unique_ptr<Sequential>& downsample, const Tensor& x) {
  return downsample ? downsample->forward(x) : x;
}

// Blocks per stage.
std::vector<int64_t> stage_blocks(const ResNetOpts& o) {
  if (o.cifar) {
    if (o.depth < 8 || (o.depth - 2) % 6 != 0)
      fail("ResNet: a cifar-style depth is 6n+2 (8, 20, 32, 44, 56, 110), got %d", o.depth);
    int64_t n = (o.depth - 2) / 6;
    return {n, n, n};
  }
  switch (o.depth) {
    case 18:
      return {2, 2, 2, 2};
    case 34:
    case 50:
      return {3, 4, 6, 3};
    default:
      fail("ResNet: an imagenet-style depth is 18, 34 or 50, got %d", o.depth);
  }
}

}  // namespace

BasicBlock::BasicBlock(int64_t in, int64_t planes, int64_t stride)
    : conv1(in, planes, 3, conv_opts(stride, 1)),
      bn1(planes),
      conv2(planes, planes, 3, conv_opts(1, 1)),
      bn2(planes),
      downsample(make_downsample(in, planes, stride)) {
  register_module("conv1", &conv1);
  register_module("bn1", &bn1);
  register_module("conv2", &conv2);
  register_module("bn2", &bn2);
  if (downsample) register_module("downsample", downsample.get());
}

Tensor BasicBlock::forward(const Tensor& x) {
  Tensor out = bn1(conv1(x)).relu();
  out = bn2(conv2(out));
  return (out + shortcut(downsample, x)).relu();
}

Bottleneck::Bottleneck(int64_t in, int64_t planes, int64_t stride)
    : conv1(in, planes, 1, conv_opts(1, 0)),
      bn1(planes),
      conv2(planes, planes, 3, conv_opts(stride, 1)),
      bn2(planes),
      conv3(planes, planes * kExpansion, 1, conv_opts(1, 0)),
      bn3(planes * kExpansion),
      downsample(make_downsample(in, planes * kExpansion, stride)) {
  register_module("conv1", &conv1);
  register_module("bn1", &bn1);
  register_module("conv2", &conv2);
  register_module("bn2", &bn2);
  register_module("conv3", &conv3);
  register_module("bn3", &bn3);
  if (downsample) register_module("downsample", downsample.get());
}

Tensor Bottleneck::forward(const Tensor& x) {
  Tensor out = bn1(conv1(x)).relu();
  out = bn2(conv2(out)).relu();
  out = bn3(conv3(out));
  return (out + shortcut(downsample, x)).relu();
}

ResNet::ResNet(ResNetOpts opts) : o_(opts) {
  std::vector<int64_t> blocks = stage_blocks(o_);
  if (o_.in_channels <= 0 || o_.classes <= 0 || o_.width <= 0)
    fail("ResNet: in_channels, classes and width must be positive, got %d, %d, %d", o_.in_channels,
         o_.classes, o_.width);
  const bool bottleneck = !o_.cifar && o_.depth >= 50;
  const int64_t expansion = bottleneck ? Bottleneck::kExpansion : BasicBlock::kExpansion;
  const int64_t stem = o_.cifar ? o_.width : 64;
  conv1 = o_.cifar ? std::make_unique<Conv2d>(o_.in_channels, stem, 3, conv_opts(1, 1))
                   : std::make_unique<Conv2d>(o_.in_channels, stem, 7, conv_opts(2, 3));
  bn1 = std::make_unique<BatchNorm>(stem);
  register_module("conv1", conv1.get());
  register_module("bn1", bn1.get());
  int64_t in = stem;
  for (size_t s = 0; s < blocks.size(); s++) {
    int64_t planes = stem << s;
    auto layer = std::make_unique<Sequential>();
    for (int64_t b = 0; b < blocks[s]; b++) {
      int64_t stride = (s > 0 && b == 0) ? 2 : 1;
      if (bottleneck)
        layer->add<Bottleneck>(in, planes, stride);
      else
        layer->add<BasicBlock>(in, planes, stride);
      in = planes * expansion;
    }
    register_module("layer" + std::to_string(s + 1), layer.get());
    layers_.push_back(std::move(layer));
  }
  fc = std::make_unique<Linear>(in, o_.classes);
  register_module("fc", fc.get());
}

Tensor ResNet::forward(const Tensor& x) {
  Tensor y = (*bn1)((*conv1)(x)).relu();
  if (!o_.cifar) y = y.max_pool2d({.kernel_size = 3, .stride = 2, .padding = 1});
  for (auto& layer : layers_) y = layer->forward(y);
  return (*fc)(y.mean({2, 3}));
}

}  // namespace tc::nn
