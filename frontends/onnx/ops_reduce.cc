// The ONNX reductions, and the operators that reduce along an axis (softmax, argmax, top-k).
#include "frontends/onnx/op_table.h"

namespace tc::onnx {
namespace {

Tensor reduce_of(const NodeArgs& a, const Tensor& x, Tensor (Tensor::*f)(Axes, bool) const) {
  std::vector<int64_t> axes = a.axes(1);
  bool keep = a.attr_int("keepdims", 1) != 0;
  if (axes.empty() && a.attr_int("noop_with_empty_axes", 0)) return x;
  std::vector<int> dims;
  for (int64_t ax : axes) dims.push_back(axis_of(ax, x.ndim()));
  if (dims.empty())
    for (int i = 0; i < x.ndim(); i++) dims.push_back(i);
  return (x.*f)(Axes(dims), keep);
}
Tensor reduce(const NodeArgs& a, Tensor (Tensor::*f)(Axes, bool) const) {
  return reduce_of(a, a.in(0), f);
}

// ArgMax / ArgMin along `axis`, int64: the first index of the extreme, or with select_last_index
// the last (the first of the flipped axis, counted from the end).
Tensor arg_extreme(const NodeArgs& a, Tensor (Tensor::*f)(std::optional<int>, bool) const) {
  const Tensor& x = a.in(0);
  int axis = axis_of(a.attr_int("axis", 0), x.ndim());
  bool keep = a.attr_int("keepdims", 1) != 0;
  if (!a.attr_int("select_last_index", 0)) return (x.*f)(axis, keep).cast(dtypes::int64);
  Tensor first = (x.flip({axis}).*f)(axis, keep).cast(dtypes::int64);
  return first.sub(static_cast<long>(x.shape()[axis] - 1), /*reverse=*/true);
}

// Softmax or LogSoftmax along the node's axis; before opset 13, over the input flattened to 2-d
// at the axis (default 1).
Tensor softmax_like(const NodeArgs& a, Tensor (Tensor::*f)(int, std::optional<DType>) const) {
  const Tensor& x = a.in(0);
  int axis = axis_of(a.attr_int("axis", a.opset >= 13 ? -1 : 1), x.ndim());
  if (a.opset >= 13) return (x.*f)(axis, std::nullopt);
  Tensor flat = x.flatten(axis);
  return (flat.reshape({-1, flat.shape().back()}).*f)(1, std::nullopt).reshape(x.shape());
}

}  // namespace

void add_reduce_ops(OpTable& t) {
  t.insert({
      {"ReduceSum", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::sum)}; }},
      {"ReduceMean", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::mean)}; }},
      {"ReduceMax", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::max)}; }},
      {"ReduceMin", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::min)}; }},
      {"Softmax", [](const NodeArgs& a) { return std::vector{softmax_like(a, &Tensor::softmax)}; }},
      {"LogSoftmax",
       [](const NodeArgs& a) { return std::vector{softmax_like(a, &Tensor::log_softmax)}; }},
      {"ArgMax", [](const NodeArgs& a) { return std::vector{arg_extreme(a, &Tensor::argmax)}; }},
      {"ArgMin", [](const NodeArgs& a) { return std::vector{arg_extreme(a, &Tensor::argmin)}; }},
      {"ReduceProd", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::prod)}; }},
      {"ReduceLogSumExp",
       [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::logsumexp)}; }},
      {"CumSum",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(static_cast<int64_t>(a.host_scalar(1)), x.ndim());
         Tensor y = a.attr_int("reverse", 0) ? x.flip({axis}) : x;
         Tensor c = y.cumsum(axis);
         if (a.attr_int("exclusive", 0)) c = c.sub(y);
         return std::vector{a.attr_int("reverse", 0) ? c.flip({axis}) : c};
       }},
      {"ReduceL1",
       [](const NodeArgs& a) { return std::vector{reduce_of(a, a.in(0).abs(), &Tensor::sum)}; }},
      {"ReduceL2",
       [](const NodeArgs& a) {
         return std::vector{
             reduce_of(a, a.in(0).mul(a.in(0)), &Tensor::sum).sqrt().cast(a.in(0).dtype())};
       }},
      {"ReduceSumSquare",
       [](const NodeArgs& a) {
         return std::vector{reduce_of(a, a.in(0).mul(a.in(0)), &Tensor::sum)};
       }},
      {"ReduceLogSum",
       [](const NodeArgs& a) { return std::vector{reduce_of(a, a.in(0), &Tensor::sum).log()}; }},
      {"TopK",  // values and int64 indices of the k largest (smallest) along axis, sorted
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         auto [values, indices] =
             x.topk(static_cast<int64_t>(a.host_scalar(1)),
                    axis_of(a.attr_int("axis", -1), x.ndim()), a.attr_int("largest", 1) != 0);
         return std::vector{values, indices.cast(dtypes::int64)};
       }},
      {"Hardmax",  // 1 at the first maximum along axis, 0 elsewhere
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", a.opset >= 13 ? -1 : 1), x.ndim());
         Tensor flat =
             a.opset >= 13 ? x : x.flatten(axis).reshape({-1, x.flatten(axis).shape().back()});
         int ax = a.opset >= 13 ? axis : 1;
         Shape classes(flat.ndim(), 1);
         classes[ax] = flat.shape()[ax];
         Tensor hot = Tensor::arange(0, static_cast<double>(flat.shape()[ax]), 1, dtypes::int64)
                          .reshape(classes)
                          .eq(flat.argmax(ax, true).cast(dtypes::int64))
                          .cast(x.dtype());
         return std::vector{hot.reshape(x.shape())};
       }},
  });
}

}  // namespace tc::onnx
