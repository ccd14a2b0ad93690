// The elementwise ONNX operators: math, activations, comparisons, casts.
#include "frontends/onnx/op_table.h"
#include "frontends/onnx/proto.h"

namespace tc::onnx {
namespace {

Tensor unary(const NodeArgs& a, Tensor (Tensor::*f)() const) { return (a.in(0).*f)(); }

// Variadic Sum, Max, Min, Mean: the inputs combined pairwise, broadcasting.
Tensor fold(const NodeArgs& a, Tensor (Tensor::*f)(const Tensor&) const) {
  Tensor out = a.in(0);
  for (size_t i = 1; i < a.inputs.size(); i++) out = (out.*f)(a.in(i));
  return out;
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

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t.insert({
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
         return std::vector{
             a.in(0).hardsigmoid(a.attr_float("alpha", 0.2f), a.attr_float("beta", 0.5f))};
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
      {"Shrink",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         double l = a.attr_float("lambd", 0.5f), b = a.attr_float("bias", 0.0f);
         Tensor y =
             x.lt(-l).where(x.add(b), x.gt(l).where(x.sub(b), Tensor::full({}, 0, x.dtype())));
         return std::vector{y.cast(x.dtype())};
       }},
      {"CastLike", [](const NodeArgs& a) { return std::vector{a.in(0).cast(a.in(1).dtype())}; }},
      {"BitShift",
       [](const NodeArgs& a) {
         bool left = a.attr("direction") && a.attr("direction")->s() == "LEFT";
         return std::vector{left ? a.in(0).lshift(a.in(1)) : a.in(0).rshift(a.in(1))};
       }},
  });
}

}  // namespace tc::onnx
