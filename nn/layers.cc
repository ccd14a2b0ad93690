#include "nn/layers.h"

#include <cmath>

#include "nn/norms.h"
#include "tinycore/error.h"

namespace tc::nn {
namespace {
// uniform in [-bound, bound)
Tensor uniform_pm(Shape shape, double bound) {
  return Tensor::uniform(std::move(shape), {.low = -bound, .high = bound, .dtype = std::nullopt});
}
}  // namespace

Linear::Linear(int64_t in, int64_t out, bool with_bias)
    : weight(Tensor::kaiming_uniform({out, in}, std::sqrt(5.0)).contiguous().realize()) {
  register_parameter("weight", &weight);
  if (with_bias) {
    bias = uniform_pm({out}, 1 / std::sqrt(static_cast<double>(in))).contiguous().realize();
    register_parameter("bias", &*bias);
  }
}

Tensor Linear::forward(const Tensor& x) { return x.linear(weight.T(), bias); }

namespace {
// Conv2d's weight shape (out, in / groups, *kernel), or ConvTranspose2d's (in, out / groups,
// *kernel), checking the channels split into the groups.
Shape conv_weight_shape(const char* layer, int64_t in, int64_t out, const IntTuple& kernel_size,
                        int64_t groups, bool transposed) {
  if (groups <= 0 || in % groups != 0 || out % groups != 0)
    fail("%s: %d in and %d out channels do not split into %d groups", layer, in, out, groups);
  std::vector<int64_t> k = kernel_size.v;
  if (kernel_size.is_int) k = {k[0], k[0]};
  int64_t lead = transposed ? in : out, per_group = (transposed ? out : in) / groups;
  Shape shape = {lead, per_group};
  shape.insert(shape.end(), k.begin(), k.end());
  return shape;
}
Tensor conv_weight(const Shape& shape) {
  return Tensor::kaiming_uniform(shape, std::sqrt(5.0)).contiguous().realize();
}
// uniform in +-1/sqrt(fan_in), fan_in = prod(weight.shape[1:]) as PyTorch and tinygrad compute it
Tensor conv_bias(const Tensor& weight, int64_t out) {
  int64_t fan_in = 1;
  for (size_t i = 1; i < weight.shape().size(); i++) fan_in *= weight.shape()[i];
  return uniform_pm({out}, 1 / std::sqrt(static_cast<double>(fan_in))).contiguous().realize();
}
}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, IntTuple kernel_size, Conv2dOpts opts)
    : weight(conv_weight(conv_weight_shape("Conv2d", in, out, kernel_size, opts.groups, false))),
      o_(opts) {
  register_parameter("weight", &weight);
  if (opts.bias) {
    bias = conv_bias(weight, out);
    register_parameter("bias", &*bias);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  check_channels("Conv2d", x, weight.shape()[1] * o_.groups);
  return x.conv2d(weight, bias,
                  {.groups = o_.groups,
                   .stride = o_.stride,
                   .dilation = o_.dilation,
                   .padding = o_.padding,
                   .dtype = std::nullopt});
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, IntTuple kernel_size,
                                 ConvTranspose2dOpts opts)
    : weight(conv_weight(
          conv_weight_shape("ConvTranspose2d", in, out, kernel_size, opts.groups, true))),
      o_(opts) {
  register_parameter("weight", &weight);
  if (opts.bias) {
    bias = conv_bias(weight, out);
    register_parameter("bias", &*bias);
  }
}

Tensor ConvTranspose2d::forward(const Tensor& x) {
  check_channels("ConvTranspose2d", x, weight.shape()[0]);
  return x.conv_transpose2d(weight, bias,
                            {.groups = o_.groups,
                             .stride = o_.stride,
                             .dilation = o_.dilation,
                             .padding = o_.padding,
                             .output_padding = o_.output_padding});
}

BatchNorm::BatchNorm(int64_t features, BatchNormOpts opts)
    : running_mean(state_tensor({features}, 0)),
      running_var(state_tensor({features}, 1)),
      num_batches_tracked(Tensor::zeros({}, dtypes::int64).contiguous().realize()),
      o_(opts) {
  if (opts.affine) {
    weight = state_tensor({features}, 1);
    bias = state_tensor({features}, 0);
    register_parameter("weight", &*weight);
    register_parameter("bias", &*bias);
  }
  register_buffer("running_mean", &running_mean);
  register_buffer("running_var", &running_var);
  register_buffer("num_batches_tracked", &num_batches_tracked);
}

namespace {
BatchNorm::Sync& synced() {
  static BatchNorm::Sync sync;
  return sync;
}
}  // namespace

void BatchNorm::sync_statistics(Sync sync) { synced() = std::move(sync); }

Tensor BatchNorm::forward(const Tensor& x) {
  check_channels("BatchNorm", x, running_mean.shape()[0]);
  if (!Tensor::training() && o_.track_running_stats)
    return x.batchnorm(weight, bias, running_mean, (running_var + o_.eps).rsqrt());
  const Sync& sync = synced();
  auto over_replicas = [&](const Tensor& t) { return sync.mean ? sync.mean(t) : t; };
  // x as (pieces, batch / pieces, C, ...): statistics per piece of a batch split over devices
  const int64_t c = x.shape()[1], devices = static_cast<int64_t>(x.devices().size());
  // (statistics over ranks: the whole batch's, as one process with it all would)
  const bool split = !sync.shards && !sync.mean && devices > 1 && x.shape()[0] % devices == 0 &&
                     x.shard_axis() == std::optional<int>(0);
  const int64_t pieces = split ? devices : 1;
  Tensor xs = x.unflatten(0, {pieces, -1});
  std::vector<int> axes = {1};
  for (int i = 3; i < xs.ndim(); i++) axes.push_back(i);
  Tensor kept = over_replicas(xs.mean(axes, true)), mean = kept.reshape({pieces, c});
  Tensor var = over_replicas((xs - kept).square().mean(axes));  // biased, as normalizing uses
  if (o_.track_running_stats) {
    double n = static_cast<double>(xs.numel() / pieces / c * (sync.mean ? sync.replicas : 1));
    // the pieces' mean statistics, gathered where the running ones are (one device, unless they
    // were sharded too)
    auto stat = [&](const Tensor& t) {
      Tensor m = pieces > 1 ? t.detach().mean(0) : t.detach().reshape({c});
      return running_mean.devices().size() == 1 ? m.to(running_mean.device()) : m;
    };
    running_mean.assign(running_mean * (1 - o_.momentum) + stat(mean) * o_.momentum);
    running_var.assign(running_var * (1 - o_.momentum) +
                       stat(var) * (o_.momentum * n / std::max(n - 1, 1.0)));
    num_batches_tracked.assign(num_batches_tracked + 1);
  }
  auto per_piece = [&](const std::optional<Tensor>& p) {
    return p ? std::optional<Tensor>(p->reshape({1, c}).expand({pieces, c})) : std::nullopt;
  };
  return xs.batchnorm(per_piece(weight), per_piece(bias), mean, (var + o_.eps).rsqrt(), {0, 2})
      .reshape(x.shape());
}

LayerNorm::LayerNorm(Shape normalized_shape, double eps, bool affine)
    : shape_(std::move(normalized_shape)), eps_(eps) {
  if (affine) {
    weight = state_tensor(shape_, 1);
    bias = state_tensor(shape_, 0);
    register_parameter("weight", &*weight);
    register_parameter("bias", &*bias);
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  Tensor y = x.layernorm(trailing_axes("LayerNorm", x, shape_), eps_);
  return weight ? y * *weight + *bias : y;
}

Embedding::Embedding(int64_t vocab, int64_t dim)
    : weight(Tensor::glorot_uniform({vocab, dim}).contiguous().realize()), vocab_(vocab) {
  register_parameter("weight", &weight);
}

Tensor Embedding::forward(const Tensor& idx) {
  if (!dtypes::is_int(idx.dtype()))
    fail("Embedding: indices must be integers, got %s", idx.dtype().name());
  return idx.one_hot(vocab_).cast(weight.dtype()).matmul(weight);
}

}  // namespace tc::nn
