// The layers of nn/ (layers.h, norms.h, recurrent.h, transformer.h) as Python classes with
// tinygrad's constructor arguments and attribute names. Calling a layer runs its C++ forward;
// its tensors are properties that hand out the layer's own handles, so reading one and assigning
// into it (t.assign(...)) changes the layer, and assigning the attribute replaces the tensor, as
// assigning a tinygrad layer's attribute does.
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nn/layers.h"
#include "nn/norms.h"
#include "nn/recurrent.h"
#include "nn/transformer.h"
#include "python/bind_nn.h"

namespace tc::python {
namespace {

using nn::Module;

// A tensor every instance has. Assigning a trainable one marks the new tensor requires_grad, as
// the layer's constructor marks its own (so the optimizers train it).
template <typename M>
void tensor_slot(py::class_<M, Module>& cls, const char* name, Tensor M::*slot, bool trainable) {
  cls.def_property(
      name, [slot](const M& m) { return m.*slot; },
      [slot, trainable](M& m, const Tensor& t) {
        m.*slot = t;
        if (trainable) (m.*slot).requires_grad_();
      });
}

// A tensor the constructor's options decide on (bias=False, affine=False ...): None when absent.
// The layer's forward and state dict are fixed at construction, so an assignment replaces the
// tensor but cannot add or remove it.
template <typename M>
void optional_slot(py::class_<M, Module>& cls, const char* layer, const char* name,
                   std::optional<Tensor> M::*slot, bool trainable) {
  std::string what = std::string(layer) + "." + name;
  cls.def_property(
      name, [slot](const M& m) { return m.*slot; },
      [slot, trainable, what](M& m, const std::optional<Tensor>& t) {
        if (!(m.*slot) && t)
          throw py::value_error(what + ": this layer was built without it (bias=False or " +
                                "affine=False); build it with one to assign one");
        if ((m.*slot) && !t)
          throw py::value_error(
              what + " cannot be removed (set to None); build the layer without " + "it instead");
        if (!t) return;
        *(m.*slot) = *t;
        if (trainable) (m.*slot)->requires_grad_();
      });
}

template <typename M>
py::class_<M, Module> layer(py::module_& nn, const char* name, const char* doc) {
  py::class_<M, Module> cls(nn, name, doc, py::dynamic_attr());
  cls.def(
      "__call__", [](M& m, const Tensor& x) { return m.forward(x); }, py::arg("x"));
  return cls;
}

// A Linear, Conv or norm's weight and bias (both trainable, either may be absent).
template <typename M, typename W>
void weight_and_bias(py::class_<M, Module>& cls, const char* layer, W M::*weight,
                     std::optional<Tensor> M::*bias) {
  if constexpr (std::is_same_v<W, Tensor>)
    tensor_slot(cls, "weight", weight, true);
  else
    optional_slot(cls, layer, "weight", weight, true);
  optional_slot(cls, layer, "bias", bias, true);
}

// tinygrad's padding="same" for a stride-1 convolution: the flat (left, right, top, bottom, ...)
// padding that keeps the spatial size, the odd pixel after (as PyTorch).
IntTuple conv_padding(const py::object& padding, const IntTuple& kernel_size,
                      const IntTuple& stride, const IntTuple& dilation) {
  if (!py::isinstance<py::str>(padding)) return padding.cast<IntTuple>();
  std::string s = padding.cast<std::string>();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s != "same")
    throw py::value_error("Conv2d: invalid padding string '" + padding.cast<std::string>() +
                          "', only 'same' is supported");
  for (int64_t v : stride.v)
    if (v != 1)
      throw py::value_error("Conv2d: padding='same' is not supported for strided convolutions");
  std::vector<int64_t> k = kernel_size.v;
  if (kernel_size.is_int) k = {k[0], k[0]};
  std::vector<int64_t> flat;
  for (size_t i = k.size(); i-- > 0;) {
    int64_t d = dilation.is_int ? dilation.v[0] : dilation.v.at(i);
    int64_t total = d * (k[i] - 1);
    flat.push_back(total / 2);
    flat.push_back(total - total / 2);
  }
  return IntTuple(flat);
}

void bind_linear_and_convs(py::module_& nn) {
  auto linear = layer<nn::Linear>(nn, "Linear", "y = x @ weight.T + bias; weight (out, in)");
  linear.def(py::init([](int64_t in, int64_t out, bool bias) {
               return std::make_unique<nn::Linear>(in, out, bias);
             }),
             py::arg("in_features"), py::arg("out_features"), py::arg("bias") = true);
  weight_and_bias(linear, "Linear", &nn::Linear::weight, &nn::Linear::bias);

  auto conv = layer<nn::Conv2d>(
      nn, "Conv2d",
      "Convolution over the last len(kernel_size) dimensions (an int kernel_size is square, 2-D); "
      "weight (out, in / groups, *kernel)");
  conv.def(py::init([](int64_t in, int64_t out, IntTuple k, IntTuple stride, py::object padding,
                       IntTuple dilation, int64_t groups, bool bias) {
             IntTuple pad = conv_padding(padding, k, stride, dilation);
             return std::make_unique<nn::Conv2d>(in, out, k,
                                                 nn::Conv2dOpts{.stride = stride,
                                                                .padding = pad,
                                                                .dilation = dilation,
                                                                .groups = groups,
                                                                .bias = bias});
           }),
           py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"),
           py::arg("stride") = 1, py::arg("padding") = 0, py::arg("dilation") = 1,
           py::arg("groups") = 1, py::arg("bias") = true);
  weight_and_bias(conv, "Conv2d", &nn::Conv2d::weight, &nn::Conv2d::bias);

  auto convt = layer<nn::ConvTranspose2d>(
      nn, "ConvTranspose2d",
      "Transposed convolution over the last len(kernel_size) dimensions; weight (in, out / "
      "groups, *kernel)");
  convt.def(py::init([](int64_t in, int64_t out, IntTuple k, IntTuple stride, IntTuple padding,
                        IntTuple output_padding, IntTuple dilation, int64_t groups, bool bias) {
              return std::make_unique<nn::ConvTranspose2d>(
                  in, out, k,
                  nn::ConvTranspose2dOpts{.stride = stride,
                                          .padding = padding,
                                          .output_padding = output_padding,
                                          .dilation = dilation,
                                          .groups = groups,
                                          .bias = bias});
            }),
            py::arg("in_channels"), py::arg("out_channels"), py::arg("kernel_size"),
            py::arg("stride") = 1, py::arg("padding") = 0, py::arg("output_padding") = 0,
            py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("bias") = true);
  weight_and_bias(convt, "ConvTranspose2d", &nn::ConvTranspose2d::weight,
                  &nn::ConvTranspose2d::bias);
}

void bind_norms(py::module_& nn) {
  auto bn = layer<nn::BatchNorm>(
      nn, "BatchNorm",
      "Normalizes over every axis but 1; in training (Tensor.train()) with batch statistics, "
      "updating the running ones (realized by the optimizer's step)");
  bn.def(
      py::init([](int64_t sz, double eps, bool affine, bool track_running_stats, double momentum) {
        return std::make_unique<nn::BatchNorm>(
            sz, nn::BatchNormOpts{.eps = eps,
                                  .momentum = momentum,
                                  .affine = affine,
                                  .track_running_stats = track_running_stats});
      }),
      py::arg("sz"), py::arg("eps") = 1e-5, py::arg("affine") = true,
      py::arg("track_running_stats") = true, py::arg("momentum") = 0.1);
  weight_and_bias(bn, "BatchNorm", &nn::BatchNorm::weight, &nn::BatchNorm::bias);
  tensor_slot(bn, "running_mean", &nn::BatchNorm::running_mean, false);
  tensor_slot(bn, "running_var", &nn::BatchNorm::running_var, false);
  tensor_slot(bn, "num_batches_tracked", &nn::BatchNorm::num_batches_tracked, false);

  auto ln =
      layer<nn::LayerNorm>(nn, "LayerNorm", "Normalizes over the last len(normalized_shape) axes");
  ln.def(py::init([](IntTuple shape, double eps, bool affine) {
           return std::make_unique<nn::LayerNorm>(shape.v, eps, affine);
         }),
         py::arg("normalized_shape"), py::arg("eps") = 1e-5, py::arg("elementwise_affine") = true);
  weight_and_bias(ln, "LayerNorm", &nn::LayerNorm::weight, &nn::LayerNorm::bias);

  auto rms = layer<nn::RMSNorm>(nn, "RMSNorm", "x / sqrt(mean(x^2) + eps) over the last axes");
  rms.def(py::init([](IntTuple dim, double eps, bool affine) {
            return std::make_unique<nn::RMSNorm>(dim.v, eps, affine);
          }),
          py::arg("dim"), py::arg("eps") = 1e-6, py::arg("elementwise_affine") = true);
  optional_slot(rms, "RMSNorm", "weight", &nn::RMSNorm::weight, true);

  auto gn = layer<nn::GroupNorm>(nn, "GroupNorm", "Normalizes groups of channels of (N, C, *)");
  gn.def(py::init([](int64_t groups, int64_t channels, double eps, bool affine) {
           return std::make_unique<nn::GroupNorm>(groups, channels, eps, affine);
         }),
         py::arg("num_groups"), py::arg("num_channels"), py::arg("eps") = 1e-5,
         py::arg("affine") = true);
  weight_and_bias(gn, "GroupNorm", &nn::GroupNorm::weight, &nn::GroupNorm::bias);

  // tinygrad's InstanceNorm is affine by default (PyTorch's is not); the running statistics
  // are PyTorch's option.
  auto in = layer<nn::InstanceNorm>(nn, "InstanceNorm",
                                    "Normalizes each (sample, channel) of (N, C, *) over space");
  in.def(py::init([](int64_t features, double eps, bool affine, bool track_running_stats,
                     double momentum) {
           return std::make_unique<nn::InstanceNorm>(
               features, nn::InstanceNormOpts{.eps = eps,
                                              .momentum = momentum,
                                              .affine = affine,
                                              .track_running_stats = track_running_stats});
         }),
         py::arg("num_features"), py::arg("eps") = 1e-5, py::arg("affine") = true,
         py::arg("track_running_stats") = false, py::arg("momentum") = 0.1);
  weight_and_bias(in, "InstanceNorm", &nn::InstanceNorm::weight, &nn::InstanceNorm::bias);
  optional_slot(in, "InstanceNorm", "running_mean", &nn::InstanceNorm::running_mean, false);
  optional_slot(in, "InstanceNorm", "running_var", &nn::InstanceNorm::running_var, false);
  optional_slot(in, "InstanceNorm", "num_batches_tracked", &nn::InstanceNorm::num_batches_tracked,
                false);
}

void bind_other_layers(py::module_& nn) {
  auto emb = layer<nn::Embedding>(nn, "Embedding", "Rows of weight (vocab, dim) by integer index");
  emb.def(py::init([](int64_t vocab, int64_t dim) {
            return std::make_unique<nn::Embedding>(vocab, dim);
          }),
          py::arg("vocab_size"), py::arg("embed_size"));
  tensor_slot(emb, "weight", &nn::Embedding::weight, true);

  auto drop = layer<nn::Dropout>(nn, "Dropout", "Tensor.dropout(p) while training");
  drop.def(py::init([](double p) { return std::make_unique<nn::Dropout>(p); }), py::arg("p") = 0.5);

  using Cell = nn::LSTMCell;
  py::class_<Cell, Module> lstm(nn, "LSTMCell",
                                "One LSTM step: (x, (h, c) or None) -> (h, c), PyTorch's gates",
                                py::dynamic_attr());
  lstm.def(py::init([](int64_t input, int64_t hidden, bool bias) {
             return std::make_unique<Cell>(input, hidden, bias);
           }),
           py::arg("input_size"), py::arg("hidden_size"), py::arg("bias") = true)
      .def(
          "__call__",
          [](Cell& c, const Tensor& x, const std::optional<Cell::State>& hc) {
            Cell::State s = c.forward(x, hc);
            return py::make_tuple(s.first, s.second);
          },
          py::arg("x"), py::arg("hc") = py::none());
  tensor_slot(lstm, "weight_ih", &Cell::weight_ih, true);
  tensor_slot(lstm, "weight_hh", &Cell::weight_hh, true);
  optional_slot(lstm, "LSTMCell", "bias_ih", &Cell::bias_ih, true);
  optional_slot(lstm, "LSTMCell", "bias_hh", &Cell::bias_hh, true);

  using MHA = nn::MultiHeadAttention;
  py::class_<MHA, Module> mha(nn, "MultiHeadAttention",
                              "PyTorch's nn.MultiheadAttention (batch_first): (B, L, E) -> "
                              "(B, L, E)",
                              py::dynamic_attr());
  mha.def(py::init([](int64_t embed_dim, int64_t num_heads, bool bias, double dropout) {
            return std::make_unique<MHA>(
                embed_dim, num_heads,
                nn::MultiHeadAttentionOpts{.bias = bias, .dropout = dropout, .max_context = 0});
          }),
          py::arg("embed_dim"), py::arg("num_heads"), py::arg("bias") = true,
          py::arg("dropout") = 0.0)
      .def(
          "__call__",
          [](MHA& m, const Tensor& q, std::optional<Tensor> k, std::optional<Tensor> v,
             const std::optional<Tensor>& attn_mask, bool is_causal) {
            return m.forward(q, k.value_or(q), v.value_or(k.value_or(q)), attn_mask, is_causal);
          },
          py::arg("query"), py::arg("key") = py::none(), py::arg("value") = py::none(),
          py::arg("attn_mask") = py::none(), py::arg("is_causal") = false)
      .def_property_readonly(
          "out_proj", [](MHA& m) -> nn::Linear& { return m.out_proj; },
          py::return_value_policy::reference_internal);
  tensor_slot(mha, "in_proj_weight", &MHA::in_proj_weight, true);
  optional_slot(mha, "MultiHeadAttention", "in_proj_bias", &MHA::in_proj_bias, true);
}

}  // namespace

void bind_nn_layers(py::module_& nn) {
  bind_linear_and_convs(nn);
  bind_norms(nn);
  bind_other_layers(nn);
}

}  // namespace tc::python
