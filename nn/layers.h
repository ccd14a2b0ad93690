// The common layers, with PyTorch's parameter names and tinygrad's initialisations:
// Linear, Conv2d (and Conv1d), ConvTranspose2d, BatchNorm, LayerNorm, Embedding, Dropout.
// (More normalizations in nn/norms.h, recurrent cells in nn/recurrent.h, attention in
// nn/transformer.h.)
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "nn/module.h"

namespace tc::nn {

// y = x W^T + b, W (out, in) kaiming_uniform(a = sqrt 5), b uniform in +-1/sqrt(in).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  std::optional<Tensor> bias;
};

struct Conv2dOpts {
  IntTuple stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};
// N-d convolution over the last kernel_size.size() dimensions (Conv2d for a 2-entry kernel);
// weight (out, in / groups, *kernel).
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, IntTuple kernel_size, Conv2dOpts opts = {});
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  Conv2dOpts o_;
};
// Conv1d is Conv2d with a one-entry kernel.
inline std::unique_ptr<Conv2d> Conv1d(int64_t in, int64_t out, int64_t k, Conv2dOpts opts = {}) {
  return std::make_unique<Conv2d>(in, out, IntTuple{std::vector<int64_t>{k}}, opts);
}

struct ConvTranspose2dOpts {
  IntTuple stride = 1, padding = 0, output_padding = 0, dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};
// The transposed convolution (the gradient of Conv2d with respect to its input) over the last
// kernel_size.size() dimensions; weight (in, out / groups, *kernel) as PyTorch, initialised as
// Conv2d's with that shape (kaiming_uniform, bias uniform in +-1/sqrt(out / groups *
// prod(kernel))).
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, IntTuple kernel_size,
                  ConvTranspose2dOpts opts = {});
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  ConvTranspose2dOpts o_;
};

struct BatchNormOpts {
  double eps = 1e-5, momentum = 0.1;
  bool affine = true, track_running_stats = true;
};
// Normalizes over every axis but 1 (channels). Training (Tensor::training()): batch statistics,
// and the running ones updated by assign (realize them with the step: Module::buffers()).
class BatchNorm : public Module {
 public:
  BatchNorm(int64_t features, BatchNormOpts opts = {});
  Tensor forward(const Tensor& x) override;
  // Data-parallel training: every BatchNorm's batch statistics averaged over `replicas`, each
  // holding an equal share of the batch, by `mean` (an all-reduce; its gradient flows back), so
  // each replica normalizes as one process with the whole batch would (PyTorch's SyncBatchNorm).
  // An empty `mean` (the default) keeps each replica's own statistics. In one process, a batch
  // split over devices (shard along axis 0, evenly; else, or with `mean`, the whole batch's) is
  // normalized per piece, by each device's own statistics (tinygrad's UnsyncedBatchNorm, whose
  // running statistics are per device: here the pieces' mean), or with `shards` by the whole
  // batch's (an all-reduce over the devices, as a one-device step).
  struct Sync {
    std::function<Tensor(const Tensor&)> mean;
    int replicas = 1;
    bool shards = false;
  };
  static void sync_statistics(Sync sync);
  std::optional<Tensor> weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;

 private:
  BatchNormOpts o_;
};

// Normalizes over the last normalized_shape.size() axes, then weight * x + bias.
class LayerNorm : public Module {
 public:
  LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::optional<Tensor> weight, bias;

 private:
  Shape shape_;
  double eps_;
};

// Rows of weight (vocab, dim, glorot_uniform) picked by integer indices of any shape.
class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor forward(const Tensor& idx) override;
  Tensor weight;

 private:
  int64_t vocab_;
};

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5) : p_(p) {}
  Tensor forward(const Tensor& x) override { return x.dropout(p_); }

 private:
  double p_;
};

}  // namespace tc::nn
