// Normalizations beyond nn/layers.h's BatchNorm and LayerNorm, with PyTorch's parameter names:
// RMSNorm, GroupNorm, InstanceNorm.
#pragma once

#include <optional>
#include <vector>

#include "nn/module.h"

namespace tc::nn {

// The axes of x that `normalized_shape` names (its last normalized_shape.size() ones, as
// negative axes), checking that x's shape ends in it; `layer` names the caller in the error.
std::vector<int> trailing_axes(const char* layer, const Tensor& x, const Shape& normalized_shape);
// Checks that x is (N, channels, ...).
void check_channels(const char* layer, const Tensor& x, int64_t channels);

// x / sqrt(mean(x^2) + eps) over the last normalized_shape.size() axes, then * weight (ones).
// eps defaults to tinygrad's 1e-6 (PyTorch's nn.RMSNorm defaults to the dtype's epsilon).
class RMSNorm : public Module {
 public:
  RMSNorm(Shape normalized_shape, double eps = 1e-6, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::optional<Tensor> weight;

 private:
  Shape shape_;
  double eps_;
};

// Input (N, C, *): the C channels split into num_groups groups, each normalized over its channels
// and every spatial position; then per-channel weight (ones) and bias (zeros).
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::optional<Tensor> weight, bias;

 private:
  int64_t groups_, channels_;
  double eps_;
};

struct InstanceNormOpts {
  double eps = 1e-5, momentum = 0.1;
  bool affine = false, track_running_stats = false;  // PyTorch's defaults
};
// PyTorch's InstanceNorm1d/2d/3d: input (N, C, *spatial), each (sample, channel) normalized over
// its spatial positions. With track_running_stats, training updates running_mean / running_var
// (the batch average of the instance statistics) and evaluation normalizes with them; as in
// PyTorch, num_batches_tracked is kept in the state dict but never counted.
class InstanceNorm : public Module {
 public:
  InstanceNorm(int64_t num_features, InstanceNormOpts opts = {});
  Tensor forward(const Tensor& x) override;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var, num_batches_tracked;

 private:
  int64_t features_;
  InstanceNormOpts o_;
};

}  // namespace tc::nn
