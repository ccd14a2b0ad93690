// The ONNX layers: convolutions, pools, normalizations, losses, products, dropout.
#include "frontends/onnx/layers.h"
#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// The spatial axes of an NC... tensor (a global pool's).
Axes spatial(const Tensor& x) {
  std::vector<int> axes;
  for (int i = 2; i < x.ndim(); i++) axes.push_back(i);
  return Axes(axes);
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t.insert({
      {"GlobalAveragePool",
       [](const NodeArgs& a) { return std::vector{a.in(0).mean(spatial(a.in(0)), true)}; }},
      {"GlobalMaxPool",
       [](const NodeArgs& a) { return std::vector{a.in(0).max(spatial(a.in(0)), true)}; }},
      {"BatchNormalization",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         Shape c(x.ndim(), 1);
         c[1] = x.shape()[1];
         if (a.attr_int("training_mode", 0)) {
           // Y from the batch's mean and (population) variance; the running statistics moved
           // toward them by 1 - momentum
           std::vector<int> axes = {0};
           for (int i = 2; i < x.ndim(); i++) axes.push_back(i);
           Tensor mean = x.mean(Axes(axes)), d = x.sub(mean.reshape(c));
           Tensor var = d.mul(d).mean(Axes(axes));
           double m = a.attr_float("momentum", 0.9f);
           Tensor y = d.mul(var.add(static_cast<double>(a.attr_float("epsilon", 1e-5f)))
                                .sqrt()
                                .reciprocal()
                                .reshape(c))
                          .mul(a.in(1).reshape(c))
                          .add(a.in(2).reshape(c));
           return std::vector{y, a.in(3).mul(m).add(mean.mul(1 - m)).cast(a.in(3).dtype()),
                              a.in(4).mul(m).add(var.mul(1 - m)).cast(a.in(4).dtype())};
         }
         Tensor inv = a.in(4)
                          .reshape(c)
                          .add(static_cast<double>(a.attr_float("epsilon", 1e-5f)))
                          .sqrt()
                          .reciprocal();
         return std::vector{
             x.sub(a.in(3).reshape(c)).mul(inv).mul(a.in(1).reshape(c)).add(a.in(2).reshape(c))};
       }},
      {"Conv", [](const NodeArgs& a) { return std::vector{conv(a)}; }},
      {"MaxPool",
       [](const NodeArgs& a) {
         if (a.node.output_size() > 1 && !a.node.output(1).empty()) {
           auto [y, indices] = max_pool_with_indices(a);
           return std::vector{y, indices};
         }
         return std::vector{pool(a, true)};
       }},
      {"AveragePool", [](const NodeArgs& a) { return std::vector{pool(a, false)}; }},
      {"Einsum",
       [](const NodeArgs& a) {
         std::vector<Tensor> xs;
         for (size_t i = 0; i < a.inputs.size(); i++) xs.push_back(a.in(i));
         return std::vector{Tensor::einsum(a.attr_string("equation"), xs)};
       }},
      {"Dropout",  // inference: the identity, and a mask keeping everything
       [](const NodeArgs& a) {
         // training mode draws a random mask (its values are the runtime's), but for a ratio of 0
         bool training = a.has(2) && a.host_scalar(2) != 0;
         double ratio = a.has(1) ? a.host_scalar(1) : 0.5;
         if (training && ratio != 0)
           fail("ONNX node '%s' (Dropout): training mode is not supported", a.node.name());
         return std::vector{a.in(0), Tensor::full_like(a.in(0), true, dtypes::bool_)};
       }},
      {"LayerNormalization",  // Y, and the Mean and InvStdDev it normalized with
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int> axes;
         for (int i = axis_of(a.attr_int("axis", -1), x.ndim()); i < x.ndim(); i++)
           axes.push_back(i);
         Tensor mean = x.mean(Axes(axes), true), d = x.sub(mean);
         Tensor inv = d.mul(d)
                          .mean(Axes(axes), true)
                          .add(static_cast<double>(a.attr_float("epsilon", 1e-5f)))
                          .sqrt()
                          .reciprocal();
         Tensor y = d.mul(inv).mul(a.in(1));
         return std::vector{a.has(2) ? y.add(a.in(2)) : y, mean, inv};
       }},
      {"NegativeLogLikelihoodLoss",
       [](const NodeArgs& a) {
         std::optional<Tensor> w;
         if (a.has(2)) w = a.in(2);
         return std::vector{nll_loss(a, a.in(0), a.in(1), w)};
       }},
      {"SoftmaxCrossEntropyLoss",  // the loss, and the log-probabilities it read
       [](const NodeArgs& a) {
         Tensor logp = a.in(0).log_softmax(1);
         std::optional<Tensor> w;
         if (a.has(2)) w = a.in(2);
         return std::vector{nll_loss(a, logp, a.in(1), w), logp};
       }},
      {"InstanceNormalization",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         Shape c(x.ndim(), 1);
         c[1] = x.shape()[1];
         Axes axes = spatial(x);
         Tensor mean = x.mean(axes, true), d = x.sub(mean);
         Tensor inv = d.mul(d)
                          .mean(axes, true)
                          .add(static_cast<double>(a.attr_float("epsilon", 1e-5f)))
                          .sqrt()
                          .reciprocal();
         return std::vector{d.mul(inv).mul(a.in(1).reshape(c)).add(a.in(2).reshape(c))};
       }},
      {"MeanVarianceNormalization",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> given = a.attr_ints("axes");
         std::vector<int> axes = {0, 2, 3};
         if (!given.empty()) {
           axes.clear();
           for (int64_t ax : given) axes.push_back(axis_of(ax, x.ndim()));
         }
         Tensor mean = x.mean(Axes(axes), true), d = x.sub(mean);
         return std::vector{d.div(d.mul(d).mean(Axes(axes), true).add(1e-9).sqrt())};
       }},
      {"ConvTranspose", [](const NodeArgs& a) { return std::vector{conv_transpose(a)}; }},
      {"MatMul", [](const NodeArgs& a) { return std::vector{a.in(0).matmul(a.in(1))}; }},
      {"Gemm",
       [](const NodeArgs& a) {
         Tensor x = a.attr_int("transA", 0) ? a.in(0).transpose() : a.in(0);
         Tensor w = a.attr_int("transB", 0) ? a.in(1).transpose() : a.in(1);
         Tensor y = x.matmul(w).mul(static_cast<double>(a.attr_float("alpha", 1.0f)));
         if (a.has(2)) y = y.add(a.in(2).mul(static_cast<double>(a.attr_float("beta", 1.0f))));
         return std::vector{y};
       }},
  });
}

}  // namespace tc::onnx
