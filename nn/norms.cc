#include "nn/norms.h"

#include <algorithm>

#include "tinycore/error.h"

namespace tc::nn {
namespace {
// A per-channel tensor (C,) shaped (1, C, 1, ...) to broadcast over an (N, C, *) input.
Tensor per_channel(const Tensor& p, int ndim) {
  Shape s(ndim, 1);
  s[1] = p.shape()[0];
  return p.reshape(s);
}
}  // namespace

void check_channels(const char* layer, const Tensor& x, int64_t channels) {
  if (x.ndim() < 2 || x.shape()[1] != channels)
    fail("%s: input of shape %s does not have %d channels on axis 1", layer, fmt_shape(x.shape()),
         channels);
}

std::vector<int> trailing_axes(const char* layer, const Tensor& x, const Shape& shape) {
  int n = static_cast<int>(shape.size());
  if (x.ndim() < n || !std::equal(shape.begin(), shape.end(), x.shape().end() - n))
    fail("%s: input of shape %s does not end in %s", layer, fmt_shape(x.shape()), fmt_shape(shape));
  std::vector<int> axes;
  for (int i = -n; i < 0; i++) axes.push_back(i);
  return axes;
}

RMSNorm::RMSNorm(Shape normalized_shape, double eps, bool affine)
    : shape_(std::move(normalized_shape)), eps_(eps) {
  if (affine) {
    weight = state_tensor(shape_, 1);
    register_parameter("weight", &*weight);
  }
}

Tensor RMSNorm::forward(const Tensor& x) {
  std::vector<int> axes = trailing_axes("RMSNorm", x, shape_);
  Tensor y = x * (x.square().mean(axes, true) + eps_).rsqrt();
  return weight ? y * *weight : y;
}

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps, bool affine)
    : groups_(groups), channels_(channels), eps_(eps) {
  if (groups <= 0 || channels % groups != 0)
    fail("GroupNorm: %d channels do not split into %d groups", channels, groups);
  if (affine) {
    weight = state_tensor({channels}, 1);
    bias = state_tensor({channels}, 0);
    register_parameter("weight", &*weight);
    register_parameter("bias", &*bias);
  }
}

Tensor GroupNorm::forward(const Tensor& x) {
  check_channels("GroupNorm", x, channels_);
  Tensor y = x.reshape({x.shape()[0], groups_, -1}).layernorm(-1, eps_).reshape(x.shape());
  return weight ? y * per_channel(*weight, x.ndim()) + per_channel(*bias, x.ndim()) : y;
}

InstanceNorm::InstanceNorm(int64_t features, InstanceNormOpts opts)
    : features_(features), o_(opts) {
  if (opts.affine) {
    weight = state_tensor({features}, 1);
    bias = state_tensor({features}, 0);
    register_parameter("weight", &*weight);
    register_parameter("bias", &*bias);
  }
  if (opts.track_running_stats) {
    running_mean = state_tensor({features}, 0);
    running_var = state_tensor({features}, 1);
    num_batches_tracked = Tensor::zeros({}, dtypes::int64).contiguous().realize();
    register_buffer("running_mean", &*running_mean);
    register_buffer("running_var", &*running_var);
    register_buffer("num_batches_tracked", &*num_batches_tracked);
  }
}

Tensor InstanceNorm::forward(const Tensor& x) {
  if (x.ndim() < 3)
    fail("InstanceNorm: input of shape %s is not (batch, channels, *spatial)",
         fmt_shape(x.shape()));
  check_channels("InstanceNorm", x, features_);
  if (!Tensor::training() && o_.track_running_stats)
    return x.batchnorm(weight, bias, *running_mean, (*running_var + o_.eps).rsqrt());
  std::vector<int> axes;
  for (int i = 2; i < x.ndim(); i++) axes.push_back(i);
  Tensor mean = x.mean(axes, true);                   // (N, C, 1, ...)
  Tensor var = (x - mean).square().mean(axes, true);  // biased, as the normalization uses
  if (o_.track_running_stats && Tensor::training()) {
    double n = static_cast<double>(x.numel() / (x.shape()[0] * x.shape()[1]));
    Shape nc = {x.shape()[0], features_};
    Tensor batch_mean = mean.detach().reshape(nc).mean(0);
    Tensor batch_var = var.detach().reshape(nc).mean(0) * (n / std::max(n - 1, 1.0));
    running_mean->assign(*running_mean * (1 - o_.momentum) + batch_mean * o_.momentum);
    running_var->assign(*running_var * (1 - o_.momentum) + batch_var * o_.momentum);
  }
  Tensor y = (x - mean) * (var + o_.eps).rsqrt();
  return weight ? y * per_channel(*weight, x.ndim()) + per_channel(*bias, x.ndim()) : y;
}

}  // namespace tc::nn
