#include "frontends/onnx/ops.h"

#include <algorithm>
#include <functional>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "frontends/onnx/layers.h"
#include "frontends/onnx/proto.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

using Op = std::function<std::vector<Tensor>(const NodeArgs&)>;

// An axis attribute or input in [-rank, rank) as tinycore reads it.
int axis_of(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

Tensor unary(const NodeArgs& a, Tensor (Tensor::*f)() const) { return (a.in(0).*f)(); }

// Variadic Sum, Max, Min, Mean: the inputs combined pairwise, broadcasting.
Tensor fold(const NodeArgs& a, Tensor (Tensor::*f)(const Tensor&) const) {
  Tensor out = a.in(0);
  for (size_t i = 1; i < a.inputs.size(); i++) out = (out.*f)(a.in(i));
  return out;
}

// The axes of a reduce or (un)squeeze: an input from opset 13 (18 for most reduces), else an
// attribute; empty where neither is given.
std::vector<int64_t> axes_of(const NodeArgs& a, size_t input) {
  return a.has(input) ? a.host_ints(input) : a.attr_ints("axes");
}

Tensor reduce_of(const NodeArgs& a, const Tensor& x, Tensor (Tensor::*f)(Axes, bool) const) {
  std::vector<int64_t> axes = axes_of(a, 1);
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

// Div of integers truncates (C's /), of floats divides.
Tensor divide(const Tensor& x, const Tensor& y) {
  return dtypes::is_float(x.dtype()) ? x.div(y) : x.idiv(y);
}

// Pow keeps the base's dtype; an integer base is raised in float64 (exact below 2^53) and rounded.
Tensor power(const Tensor& x, const Tensor& y) {
  if (dtypes::is_float(x.dtype())) return x.pow(y.cast(x.dtype()));
  return x.cast(dtypes::float64).pow(y.cast(dtypes::float64)).round().cast(x.dtype());
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

// The spatial axes of an NC... tensor (a global pool's).
Axes spatial(const Tensor& x) {
  std::vector<int> axes;
  for (int i = 2; i < x.ndim(); i++) axes.push_back(i);
  return Axes(axes);
}

const absl::flat_hash_map<std::string, Op>& table() {
  static const auto* t = new absl::flat_hash_map<std::string, Op>{
      // elementwise
      {"Identity", [](const NodeArgs& a) { return std::vector{a.in(0)}; }},
      {"Neg", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::neg)}; }},
      {"Abs", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::abs)}; }},
      {"Exp", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::exp)}; }},
      {"Log", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::log)}; }},
      {"Sqrt", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::sqrt)}; }},
      {"Sin", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::sin)}; }},
      {"Cos", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::cos)}; }},
      {"Tanh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::tanh)}; }},
      {"Relu", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::relu)}; }},
      {"Sigmoid", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::sigmoid)}; }},
      {"Reciprocal", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::reciprocal)}; }},
      {"Floor", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::floor)}; }},
      {"Ceil", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::ceil)}; }},
      {"Erf", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::erf)}; }},
      {"Sign", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::sign)}; }},
      {"Not", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::logical_not)}; }},
      {"Tan", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::tan)}; }},
      {"Asin", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::asin)}; }},
      {"Acos", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::acos)}; }},
      {"Atan", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::atan)}; }},
      {"Sinh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::sinh)}; }},
      {"Cosh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::cosh)}; }},
      {"Asinh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::asinh)}; }},
      {"Acosh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::acosh)}; }},
      {"Atanh", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::atanh)}; }},
      {"Round", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::round)}; }},
      {"IsNaN", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::isnan)}; }},
      {"Softsign", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::softsign)}; }},
      {"Mish", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::mish)}; }},
      {"HardSwish", [](const NodeArgs& a) { return std::vector{unary(a, &Tensor::hardswish)}; }},
      {"Softplus", [](const NodeArgs& a) { return std::vector{a.in(0).softplus()}; }},
      {"IsInf",
       [](const NodeArgs& a) {
         return std::vector{a.in(0).isinf(a.attr_int("detect_positive", 1) != 0,
                                           a.attr_int("detect_negative", 1) != 0)};
       }},
      {"HardSigmoid",
       [](const NodeArgs& a) {
         return std::vector{a.in(0).hardsigmoid(a.attr_float("alpha", 0.2f), a.attr_float("beta", 0.5f))};
       }},
      {"Selu",
       [](const NodeArgs& a) {
         return std::vector{a.in(0).selu(a.attr_float("alpha", 1.67326319217681884765625f),
                                         a.attr_float("gamma", 1.05070102214813232421875f))};
       }},
      {"Celu",
       [](const NodeArgs& a) { return std::vector{a.in(0).celu(a.attr_float("alpha", 1.0f))}; }},
      {"And", [](const NodeArgs& a) { return std::vector{a.in(0).bitwise_and(a.in(1))}; }},
      {"Or", [](const NodeArgs& a) { return std::vector{a.in(0).bitwise_or(a.in(1))}; }},
      {"Xor", [](const NodeArgs& a) { return std::vector{a.in(0).bitwise_xor(a.in(1))}; }},
      {"Mod",
       [](const NodeArgs& a) {
         return std::vector{a.attr_int("fmod", 0) ? a.in(0).fmod(a.in(1)) : a.in(0).mod(a.in(1))};
       }},
      {"Shape",
       [](const NodeArgs& a) {
         const Shape& s = a.in(0).shape();
         int rank = static_cast<int>(s.size());
         int start = std::clamp(axis_of(a.attr_int("start", 0), rank), 0, rank);
         int end = std::clamp(axis_of(a.attr_int("end", rank), rank), start, rank);
         std::vector<int64_t> v(s.begin() + start, s.begin() + end);
         return std::vector{
             Tensor::from_blob(v.data(), {static_cast<int64_t>(v.size())}, dtypes::int64)};
       }},
      {"Size",
       [](const NodeArgs& a) {
         return std::vector{Tensor::full({}, static_cast<long>(a.in(0).numel()), dtypes::int64)};
       }},
      {"LeakyRelu",
       [](const NodeArgs& a) {
         return std::vector{a.in(0).leaky_relu(a.attr_float("alpha", 0.01f))};
       }},
      {"Elu",
       [](const NodeArgs& a) { return std::vector{a.in(0).elu(a.attr_float("alpha", 1.0f))}; }},
      {"Add", [](const NodeArgs& a) { return std::vector{a.in(0).add(a.in(1))}; }},
      {"Sub", [](const NodeArgs& a) { return std::vector{a.in(0).sub(a.in(1))}; }},
      {"Mul", [](const NodeArgs& a) { return std::vector{a.in(0).mul(a.in(1))}; }},
      {"Div", [](const NodeArgs& a) { return std::vector{divide(a.in(0), a.in(1))}; }},
      {"Pow", [](const NodeArgs& a) { return std::vector{power(a.in(0), a.in(1))}; }},
      {"Equal", [](const NodeArgs& a) { return std::vector{a.in(0).eq(a.in(1))}; }},
      {"Less", [](const NodeArgs& a) { return std::vector{a.in(0).lt(a.in(1))}; }},
      {"Greater", [](const NodeArgs& a) { return std::vector{a.in(0).gt(a.in(1))}; }},
      {"LessOrEqual", [](const NodeArgs& a) { return std::vector{a.in(0).le(a.in(1))}; }},
      {"GreaterOrEqual", [](const NodeArgs& a) { return std::vector{a.in(0).ge(a.in(1))}; }},
      {"Where", [](const NodeArgs& a) { return std::vector{a.in(0).where(a.in(1), a.in(2))}; }},
      {"Sum", [](const NodeArgs& a) { return std::vector{fold(a, &Tensor::add)}; }},
      {"Max", [](const NodeArgs& a) { return std::vector{fold(a, &Tensor::maximum)}; }},
      {"Min", [](const NodeArgs& a) { return std::vector{fold(a, &Tensor::minimum)}; }},
      {"Mean",
       [](const NodeArgs& a) {
         return std::vector{fold(a, &Tensor::add).div(static_cast<double>(a.inputs.size()))};
       }},
      {"Cast",
       [](const NodeArgs& a) {
         return std::vector{a.in(0).cast(dtype_of_onnx(static_cast<int>(a.attr_int("to", 0))))};
       }},
      {"Constant",
       [](const NodeArgs& a) {
         if (const auto* t = a.attr("value")) return std::vector{to_tensor(t->t())};
         if (const auto* f = a.attr("value_float")) return std::vector{Tensor::full({}, f->f())};
         if (const auto* i = a.attr("value_int"))
           return std::vector{Tensor::full({}, static_cast<long>(i->i()), dtypes::int64)};
         if (const auto* fs = a.attr("value_floats"))
           return std::vector{Tensor(std::vector<float>(fs->floats().begin(), fs->floats().end()))};
         if (const auto* is = a.attr("value_ints")) {
           std::vector<int64_t> v(is->ints().begin(), is->ints().end());
           return std::vector{Tensor::from_blob(v.data(), {static_cast<int64_t>(v.size())},
                                                dtypes::int64)};
         }
         fail("ONNX node '%s' (Constant): no value attribute tinycore reads", a.node.name());
       }},
      // movement
      {"Reshape",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> s = a.host_ints(1);
         bool allowzero = a.attr_int("allowzero", 0) != 0;
         for (size_t i = 0; i < s.size(); i++)  // 0 copies the input's dimension
           if (s[i] == 0 && !allowzero && static_cast<int>(i) < x.ndim()) s[i] = x.shape()[i];
         return std::vector{x.reshape(Shape(s.begin(), s.end()))};
       }},
      {"Transpose",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> perm = a.attr_ints("perm");
         if (!perm.empty()) a.sized(perm, x.ndim(), "perm");
         std::vector<int> order;
         for (int i = 0; i < x.ndim(); i++)
           order.push_back(perm.empty() ? x.ndim() - 1 - i : static_cast<int>(perm[i]));
         return std::vector{x.permute(order)};
       }},
      {"Flatten",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 1), x.ndim());
         int64_t outer = 1;
         for (int i = 0; i < axis; i++) outer *= x.shape()[i];
         return std::vector{x.reshape({outer, -1})};
       }},
      {"Unsqueeze",
       [](const NodeArgs& a) {
         Tensor x = a.in(0);
         std::vector<int64_t> axes = axes_of(a, 1);
         int rank = x.ndim() + static_cast<int>(axes.size());
         std::vector<int> dims;
         for (int64_t ax : axes) dims.push_back(axis_of(ax, rank));
         std::sort(dims.begin(), dims.end());
         for (int d : dims) x = x.unsqueeze(d);
         return std::vector{x};
       }},
      {"Squeeze",
       [](const NodeArgs& a) {
         Tensor x = a.in(0);
         std::vector<int64_t> axes = axes_of(a, 1);
         if (axes.empty()) return std::vector{x.squeeze()};
         std::vector<int> dims;
         for (int64_t ax : axes) dims.push_back(axis_of(ax, x.ndim()));
         std::sort(dims.rbegin(), dims.rend());
         for (int d : dims) x = x.squeeze(d);
         return std::vector{x};
       }},
      {"Concat",
       [](const NodeArgs& a) {
         std::vector<Tensor> xs;
         for (size_t i = 0; i < a.inputs.size(); i++) xs.push_back(a.in(i));
         return std::vector{Tensor::cat(xs, axis_of(a.attr_int("axis", 0), xs[0].ndim()))};
       }},
      // reduce
      {"ReduceSum", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::sum)}; }},
      {"ReduceMean", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::mean)}; }},
      {"ReduceMax", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::max)}; }},
      {"ReduceMin", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::min)}; }},
      {"Softmax", [](const NodeArgs& a) { return std::vector{softmax_like(a, &Tensor::softmax)}; }},
      {"LogSoftmax",
       [](const NodeArgs& a) { return std::vector{softmax_like(a, &Tensor::log_softmax)}; }},
      {"ArgMax", [](const NodeArgs& a) { return std::vector{arg_extreme(a, &Tensor::argmax)}; }},
      {"ArgMin", [](const NodeArgs& a) { return std::vector{arg_extreme(a, &Tensor::argmin)}; }},
      {"GlobalAveragePool",
       [](const NodeArgs& a) { return std::vector{a.in(0).mean(spatial(a.in(0)), true)}; }},
      {"GlobalMaxPool",
       [](const NodeArgs& a) { return std::vector{a.in(0).max(spatial(a.in(0)), true)}; }},
      {"Clip",
       [](const NodeArgs& a) {
         Tensor x = a.in(0);
         std::optional<Tensor> lo, hi;
         if (a.opset >= 11) {
           if (a.has(1)) lo = a.in(1).cast(x.dtype());
           if (a.has(2)) hi = a.in(2).cast(x.dtype());
         } else {
           if (const auto* m = a.attr("min")) lo = Tensor::full({}, m->f()).cast(x.dtype());
           if (const auto* m = a.attr("max")) hi = Tensor::full({}, m->f()).cast(x.dtype());
         }
         if (lo) x = x.maximum(*lo);
         if (hi) x = x.minimum(*hi);
         return std::vector{x};
       }},
      {"ConstantOfShape",
       [](const NodeArgs& a) {
         std::vector<int64_t> s = a.host_ints(0);
         Tensor value = Tensor::full({}, 0.0f);
         if (const auto* v = a.attr("value")) value = to_tensor(v->t()).reshape({});
         return std::vector{value.reshape(Shape(s.size(), 1)).expand(Shape(s.begin(), s.end()))
                                .contiguous()};
       }},
      {"Expand",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> want = a.host_ints(1);
         Shape out(std::max(want.size(), x.shape().size()), 1);  // numpy's broadcast of the two
         for (size_t i = 0; i < out.size(); i++) {
           int64_t wi = i < out.size() - want.size() ? 1 : want[i - (out.size() - want.size())];
           int64_t xi = i < out.size() - x.shape().size() ? 1
                                                          : x.shape()[i - (out.size() - x.shape().size())];
           out[i] = xi == 1 ? wi : xi;
         }
         return std::vector{x.expand(out)};
       }},
      {"Range",
       [](const NodeArgs& a) {
         auto scalar = [&](size_t i) { return a.host_scalar(i); };
         return std::vector{Tensor::arange(scalar(0), scalar(1), scalar(2), a.in(0).dtype())};
       }},
      {"GatherElements",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         return std::vector{x.gather(axis, idx)};
       }},
      {"BatchNormalization",
       [](const NodeArgs& a) {
         if (a.attr_int("training_mode", 0)) fail("ONNX node '%s' (BatchNormalization): training_mode is not supported", a.node.name());
         const Tensor& x = a.in(0);
         Shape c(x.ndim(), 1);
         c[1] = x.shape()[1];
         Tensor inv = a.in(4).reshape(c).add(static_cast<double>(a.attr_float("epsilon", 1e-5f))).sqrt().reciprocal();
         return std::vector{x.sub(a.in(3).reshape(c)).mul(inv).mul(a.in(1).reshape(c)).add(a.in(2).reshape(c))};
       }},
      {"Gather",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         std::vector<IndexItem> items(axis, IndexItem(Slice()));
         items.emplace_back(idx);
         return std::vector{x.getitem(items)};
       }},
      {"Slice",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         bool inputs = a.opset >= 10;
         std::vector<int64_t> starts = inputs ? a.host_ints(1) : a.attr_ints("starts");
         std::vector<int64_t> ends = inputs ? a.host_ints(2) : a.attr_ints("ends");
         std::vector<int64_t> axes = inputs ? (a.has(3) ? a.host_ints(3) : std::vector<int64_t>{})
                                            : a.attr_ints("axes");
         std::vector<int64_t> steps = inputs && a.has(4) ? a.host_ints(4) : std::vector<int64_t>{};
         a.sized(ends, starts.size(), "ends");
         if (!axes.empty()) a.sized(axes, starts.size(), "axes");
         if (!steps.empty()) a.sized(steps, starts.size(), "steps");
         std::vector<IndexItem> items(x.ndim(), IndexItem(Slice()));
         for (size_t i = 0; i < starts.size(); i++) {
           int axis = axes.empty() ? static_cast<int>(i) : axis_of(axes[i], x.ndim());
           items[axis] = Slice(starts[i], ends[i], steps.empty() ? 1 : steps[i]);
         }
         return std::vector{x.getitem(items)};
       }},
      {"Tile",
       [](const NodeArgs& a) { return std::vector{a.in(0).repeat(a.host_ints(1))}; }},
      {"Trilu",
       [](const NodeArgs& a) {
         int64_t k = a.has(1) ? static_cast<int64_t>(a.host_scalar(1)) : 0;
         return std::vector{a.attr_int("upper", 1) ? a.in(0).triu(k) : a.in(0).tril(k)};
       }},
      {"PRelu",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         Tensor slope = a.in(1);
         // before opset 7, a slope of one value per channel applies along axis 1
         if (a.opset < 7 && slope.ndim() == 1 && x.ndim() > 2 && slope.shape()[0] == x.shape()[1]) {
           Shape c(x.ndim() - 1, 1);
           c[0] = slope.shape()[0];
           slope = slope.reshape(c);
         }
         return std::vector{x.lt(0).where(x.mul(slope), x)};
       }},
      {"ThresholdedRelu",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         return std::vector{x.gt(static_cast<double>(a.attr_float("alpha", 1.0f))).where(x, 0.0)};
       }},
      {"ReduceProd", [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::prod)}; }},
      {"ReduceLogSumExp",
       [](const NodeArgs& a) { return std::vector{reduce(a, &Tensor::logsumexp)}; }},
      {"Conv", [](const NodeArgs& a) { return std::vector{conv(a)}; }},
      {"MaxPool",
       [](const NodeArgs& a) {
         if (a.node.output_size() > 1 && !a.node.output(1).empty())
           fail("ONNX node '%s' (MaxPool): the Indices output is not supported", a.node.name());
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
      {"CumSum",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(static_cast<int64_t>(a.host_scalar(1)), x.ndim());
         Tensor y = a.attr_int("reverse", 0) ? x.flip({axis}) : x;
         Tensor c = y.cumsum(axis);
         if (a.attr_int("exclusive", 0)) c = c.sub(y);
         return std::vector{a.attr_int("reverse", 0) ? c.flip({axis}) : c};
       }},
      {"LayerNormalization",  // Y, and the Mean and InvStdDev it normalized with
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int> axes;
         for (int i = axis_of(a.attr_int("axis", -1), x.ndim()); i < x.ndim(); i++) axes.push_back(i);
         Tensor mean = x.mean(Axes(axes), true), d = x.sub(mean);
         Tensor inv = d.mul(d).mean(Axes(axes), true)
                          .add(static_cast<double>(a.attr_float("epsilon", 1e-5f)))
                          .sqrt()
                          .reciprocal();
         Tensor y = d.mul(inv).mul(a.in(1));
         return std::vector{a.has(2) ? y.add(a.in(2)) : y, mean, inv};
       }},
      {"Split",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         std::vector<int64_t> sizes = a.opset >= 13 ? (a.has(1) ? a.host_ints(1) : std::vector<int64_t>{})
                                                    : a.attr_ints("split");
         int64_t parts = a.node.output_size(), n = x.shape()[axis];
         if (sizes.empty())  // equal parts, the last smaller where they do not divide
           for (int64_t i = 0, each = (n + parts - 1) / parts; i < parts; i++)
             sizes.push_back(std::min(each, n - i * each));
         std::vector<Tensor> out;
         int64_t at = 0;
         for (int64_t size : sizes) {
           std::vector<IndexItem> items(axis, IndexItem(Slice()));
           items.emplace_back(Slice(at, at + size));
           out.push_back(x.getitem(items)), at += size;
         }
         return out;
       }},
      {"Pad",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::string mode = a.attr("mode") ? a.attr("mode")->s() : "constant";
         std::vector<int64_t> pads = a.opset >= 11 ? a.host_ints(1) : a.attr_ints("pads");
         a.sized(pads, 2 * x.ndim(), "pads");
         std::vector<std::pair<int64_t, int64_t>> pairs(x.ndim(), {0, 0});
         for (int i = 0; i < x.ndim(); i++) pairs[i] = {pads[i], pads[x.ndim() + i]};
         if (mode != "constant") return std::vector{x.pad(pairs, mode == "edge" ? "replicate" : mode)};
         double value = a.opset >= 11 ? (a.has(2) ? a.host_scalar(2) : 0.0)
                                      : a.attr_float("value", 0.0f);
         ConstValue v = dtypes::is_float(x.dtype()) ? ConstValue(value) : ConstValue(static_cast<long>(value));
         return std::vector{x.pad(pairs, v)};
       }},
      {"ReduceL1",
       [](const NodeArgs& a) { return std::vector{reduce_of(a, a.in(0).abs(), &Tensor::sum)}; }},
      {"ReduceL2",
       [](const NodeArgs& a) {
         return std::vector{reduce_of(a, a.in(0).mul(a.in(0)), &Tensor::sum).sqrt().cast(a.in(0).dtype())};
       }},
      {"ReduceSumSquare",
       [](const NodeArgs& a) { return std::vector{reduce_of(a, a.in(0).mul(a.in(0)), &Tensor::sum)}; }},
      {"ReduceLogSum",
       [](const NodeArgs& a) { return std::vector{reduce_of(a, a.in(0), &Tensor::sum).log()}; }},
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
      {"TopK",  // values and int64 indices of the k largest (smallest) along axis, sorted
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         auto [values, indices] =
             x.topk(static_cast<int64_t>(a.host_scalar(1)), axis_of(a.attr_int("axis", -1), x.ndim()),
                    a.attr_int("largest", 1) != 0);
         return std::vector{values, indices.cast(dtypes::int64)};
       }},
      {"ScatterElements",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         std::string r = a.attr("reduction") ? a.attr("reduction")->s() : "none";
         if (r == "none") return std::vector{x.scatter(axis, idx, a.in(2))};
         return std::vector{x.scatter_reduce(axis, idx, a.in(2), r == "add" ? "sum" : "prod")};
       }},
      {"Hardmax",  // 1 at the first maximum along axis, 0 elsewhere
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", a.opset >= 13 ? -1 : 1), x.ndim());
         Tensor flat = a.opset >= 13 ? x : x.flatten(axis).reshape({-1, x.flatten(axis).shape().back()});
         int ax = a.opset >= 13 ? axis : 1;
         Shape classes(flat.ndim(), 1);
         classes[ax] = flat.shape()[ax];
         Tensor hot = Tensor::arange(0, static_cast<double>(flat.shape()[ax]), 1, dtypes::int64)
                          .reshape(classes)
                          .eq(flat.argmax(ax, true).cast(dtypes::int64))
                          .cast(x.dtype());
         return std::vector{hot.reshape(x.shape())};
       }},
      {"DepthToSpace",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int64_t b = a.attr_int("blocksize", 1), n = x.shape()[0], c = x.shape()[1],
                 h = x.shape()[2], w = x.shape()[3];
         bool crd = a.attr("mode") && a.attr("mode")->s() == "CRD";
         Tensor t = crd ? x.reshape({n, c / (b * b), b, b, h, w}).permute({0, 1, 4, 2, 5, 3})
                        : x.reshape({n, b, b, c / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2});
         return std::vector{t.reshape({n, c / (b * b), h * b, w * b})};
       }},
      {"SpaceToDepth",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int64_t b = a.attr_int("blocksize", 1), n = x.shape()[0], c = x.shape()[1],
                 h = x.shape()[2], w = x.shape()[3];
         return std::vector{x.reshape({n, c, h / b, b, w / b, b})
                                .permute({0, 3, 5, 1, 2, 4})
                                .reshape({n, c * b * b, h / b, w / b})};
       }},
      {"EyeLike",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         DType dt = a.attr("dtype") ? dtype_of_onnx(static_cast<int>(a.attr_int("dtype", 1)))
                                    : x.dtype();
         int64_t k = a.attr_int("k", 0), rows = x.shape()[0], cols = x.shape()[1];
         Tensor r = Tensor::arange(0, static_cast<double>(rows), 1, dtypes::int64).reshape({rows, 1});
         Tensor c = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int64).reshape({1, cols});
         return std::vector{c.sub(r).eq(static_cast<long>(k)).cast(dt)};
       }},
      {"OneHot",  // indices (negative from the end), depth, (off, on) values; the new axis
       [](const NodeArgs& a) {
         Tensor idx = a.in(0).cast(dtypes::int64);
         int64_t depth = static_cast<int64_t>(a.host_scalar(1));
         idx = idx.lt(0).where(idx.add(static_cast<long>(depth)), idx);
         int rank = idx.ndim() + 1, axis = axis_of(a.attr_int("axis", -1), rank);
         Shape classes(rank, 1);
         classes[axis] = depth;
         Tensor hot = Tensor::arange(0, static_cast<double>(depth), 1, dtypes::int64)
                          .reshape(classes)
                          .eq(idx.unsqueeze(axis));
         const Tensor& v = a.in(2);
         return std::vector{hot.where(v.getitem({1L}), v.getitem({0L}))};
       }},
      {"Shrink",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         double l = a.attr_float("lambd", 0.5f), b = a.attr_float("bias", 0.0f);
         Tensor y = x.lt(-l).where(x.add(b), x.gt(l).where(x.sub(b), Tensor::full({}, 0, x.dtype())));
         return std::vector{y.cast(x.dtype())};
       }},
      {"InstanceNormalization",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         Shape c(x.ndim(), 1);
         c[1] = x.shape()[1];
         Axes axes = spatial(x);
         Tensor mean = x.mean(axes, true), d = x.sub(mean);
         Tensor inv = d.mul(d).mean(axes, true)
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
      {"CastLike", [](const NodeArgs& a) { return std::vector{a.in(0).cast(a.in(1).dtype())}; }},
      {"BitShift",
       [](const NodeArgs& a) {
         bool left = a.attr("direction") && a.attr("direction")->s() == "LEFT";
         return std::vector{left ? a.in(0).lshift(a.in(1)) : a.in(0).rshift(a.in(1))};
       }},
      {"ConvTranspose", [](const NodeArgs& a) { return std::vector{conv_transpose(a)}; }},
      // products
      {"MatMul", [](const NodeArgs& a) { return std::vector{a.in(0).matmul(a.in(1))}; }},
      {"Gemm",
       [](const NodeArgs& a) {
         Tensor x = a.attr_int("transA", 0) ? a.in(0).transpose() : a.in(0);
         Tensor w = a.attr_int("transB", 0) ? a.in(1).transpose() : a.in(1);
         Tensor y = x.matmul(w).mul(static_cast<double>(a.attr_float("alpha", 1.0f)));
         if (a.has(2)) y = y.add(a.in(2).mul(static_cast<double>(a.attr_float("beta", 1.0f))));
         return std::vector{y};
       }},
  };
  return *t;
}

}  // namespace

const Tensor& NodeArgs::in(size_t i) const {
  if (!has(i)) fail("ONNX node '%s' (%s): input %d is missing", node.name(), node.op_type(), i);
  return *inputs[i];
}

const ::onnx::AttributeProto* NodeArgs::attr(const std::string& name) const {
  for (const auto& at : node.attribute())
    if (at.name() == name) return &at;
  return nullptr;
}
int64_t NodeArgs::attr_int(const std::string& name, int64_t fallback) const {
  const auto* at = attr(name);
  return at ? at->i() : fallback;
}
float NodeArgs::attr_float(const std::string& name, float fallback) const {
  const auto* at = attr(name);
  return at ? at->f() : fallback;
}
std::vector<int64_t> NodeArgs::attr_ints(const std::string& name) const {
  const auto* at = attr(name);
  return at ? std::vector<int64_t>(at->ints().begin(), at->ints().end()) : std::vector<int64_t>{};
}
std::vector<int64_t> NodeArgs::host_ints(size_t i) const {
  const Tensor& t = in(i);
  if (dtypes::is_float(t.dtype()) || t.ndim() > 1)
    fail("ONNX node '%s' (%s): input %d must be a 1-d integer tensor, got %s %s", node.name(),
         node.op_type(), i, t.dtype().name(), fmt_shape(t.shape()));
  return t.cast(dtypes::int64).data<int64_t>();
}

double NodeArgs::host_scalar(size_t i) const {
  const Tensor& t = in(i);
  if (t.numel() != 1)
    fail("ONNX node '%s' (%s): input %d must hold one value, got %s", node.name(), node.op_type(),
         i, fmt_shape(t.shape()));
  return t.cast(dtypes::float64).data<double>()[0];
}
const std::vector<int64_t>& NodeArgs::sized(const std::vector<int64_t>& v, size_t n,
                                            const char* what) const {
  if (v.size() != n)
    fail("ONNX node '%s' (%s): %s holds %d values, want %d", node.name(), node.op_type(), what,
         v.size(), n);
  return v;
}
std::string NodeArgs::attr_string(const std::string& name) const {
  const auto* at = attr(name);
  if (!at)
    fail("ONNX node '%s' (%s): attribute '%s' is missing", node.name(), node.op_type(), name);
  return at->s();
}

bool supports(const std::string& op_type) { return table().contains(op_type); }

std::vector<Tensor> run_node(const NodeArgs& args) {
  auto it = table().find(args.node.op_type());
  TC_CHECK(it != table().end(), "ONNX op ", args.node.op_type(), " is not supported");
  return it->second(args);
}

}  // namespace tc::onnx
