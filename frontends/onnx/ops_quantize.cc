// The ONNX operators of quantized (8-bit integer) tensors: quantizing, dequantizing, and the
// integer products, computed in float64 (exact for 8-bit products summed) or int32.
#include <string>
#include <vector>

#include "frontends/onnx/layers.h"
#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// A scale or zero point shaped to broadcast against `x`: a scalar as it is, a 1-d one (per-axis
// quantization) along x's `axis`.
Tensor along_axis(const NodeArgs& a, const Tensor& s, const Tensor& x, int64_t axis) {
  if (s.ndim() == 0 || (s.ndim() == 1 && s.numel() == 1)) return s.reshape({});
  int ax = axis_of(axis, x.ndim());
  if (s.ndim() != 1 || ax < 0 || ax >= x.ndim() || s.shape()[0] != x.shape()[ax])
    fail("ONNX node '%s' (%s): a scale or zero point of shape %s does not fit axis %d of %s",
         a.node.name(), a.node.op_type(), fmt_shape(s.shape()), axis, fmt_shape(x.shape()));
  Shape shape(x.ndim(), 1);
  shape[ax] = s.shape()[0];
  return s.reshape(shape);
}

// Input `i`, an 8-bit integer tensor, checked.
const Tensor& quantized(const NodeArgs& a, size_t i) {
  const Tensor& t = a.in(i);
  if (t.dtype() != dtypes::uint8 && t.dtype() != dtypes::int8)
    fail("ONNX node '%s' (%s): input %d must be uint8 or int8, got %s", a.node.name(),
         a.node.op_type(), i, t.dtype().name());
  return t;
}

// `x` rounded half to even, saturated to `dtype`'s range and cast to it.
Tensor saturate(const Tensor& x, DType dtype) {
  return x.round().clamp(dtypes::min(dtype), dtypes::max(dtype)).cast(dtype);
}

// x / scale + zero_point as `dtype` (QuantizeLinear's formula), the zero point absent for 0.
Tensor quantize(const Tensor& x, const Tensor& scale, const std::optional<Tensor>& zero_point,
                DType dtype) {
  // x / scale rounded to the scale's dtype as IEEE division rounds it (Tensor.div multiplies by the
  // reciprocal, whose error moves float32 quotients across .5), then to an integer
  Tensor y = x.cast(dtypes::float64).div(scale.cast(dtypes::float64)).cast(scale.dtype()).round();
  if (zero_point) y = y.add(zero_point->cast(dtypes::float64));
  return saturate(y, dtype);
}

// Input `i` (quantized) less its zero point, input `zp` where given (one value, or one per index
// of x's `axis`), as float64.
Tensor centred(const NodeArgs& a, size_t i, size_t zp, int64_t axis) {
  const Tensor& x = quantized(a, i);
  Tensor y = x.cast(dtypes::float64);
  return a.has(zp) ? y.sub(along_axis(a, quantized(a, zp), x, axis).cast(dtypes::float64)) : y;
}

// An input that must be a single value (a per-tensor scale or zero point).
Tensor scalar_input(const NodeArgs& a, size_t i) {
  const Tensor& t = a.in(i);
  if (t.numel() != 1)
    fail("ONNX node '%s' (%s): input %d must hold one value, got %s", a.node.name(),
         a.node.op_type(), i, fmt_shape(t.shape()));
  return t.reshape({}).cast(dtypes::float64);
}

// A 1-d or scalar zero point or scale of a conv's weight (per output channel) as (M, 1, ...).
Tensor per_channel(const NodeArgs& a, size_t i, const Tensor& weight) {
  return along_axis(a, a.in(i).cast(dtypes::float64), weight, 0);
}

// QLinearMatMul's and QLinearConv's requantization of the integer product `acc`:
// acc * x_scale * w_scale / y_scale + y_zero_point, saturated to y_zero_point's dtype.
Tensor requantize(const NodeArgs& a, const Tensor& acc, const Tensor& xw_scale) {
  const Tensor& y_zp = quantized(a, 7);
  return quantize(acc.mul(xw_scale), scalar_input(a, 6), y_zp.cast(dtypes::float64), y_zp.dtype());
}

}  // namespace

void add_quantize_ops(OpTable& t) {
  t.insert({
      {"QuantizeLinear",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int64_t axis = a.attr_int("axis", 1);
         std::optional<Tensor> zp;
         DType dtype = dtypes::uint8;
         if (a.has(2)) zp = along_axis(a, quantized(a, 2), x, axis), dtype = a.in(2).dtype();
         return std::vector{quantize(x, along_axis(a, a.in(1), x, axis), zp, dtype)};
       }},
      {"DequantizeLinear",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         if (!dtypes::is_int(x.dtype()))
           fail("ONNX node '%s' (DequantizeLinear): the input must be an integer tensor, got %s",
                a.node.name(), x.dtype().name());
         int64_t axis = a.attr_int("axis", 1);
         const Tensor& scale = a.in(1);
         Tensor y = x.cast(dtypes::float64);
         if (a.has(2)) y = y.sub(along_axis(a, a.in(2), x, axis).cast(dtypes::float64));
         return std::vector{
             y.mul(along_axis(a, scale, x, axis).cast(dtypes::float64)).cast(scale.dtype())};
       }},
      {"DynamicQuantizeLinear",  // uint8, the range [min(x, 0), max(x, 0)] mapped onto [0, 255]
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         if (!dtypes::is_float(x.dtype()))
           fail("ONNX node '%s' (DynamicQuantizeLinear): the input must be float, got %s",
                a.node.name(), x.dtype().name());
         Tensor lo = x.min().minimum(0.0), hi = x.max().maximum(0.0);
         Tensor scale = hi.sub(lo).div(255.0);
         Tensor zp = saturate(lo.neg().div(scale), dtypes::uint8);
         return std::vector{quantize(x, scale, zp, dtypes::uint8), scale, zp};
       }},
      {"MatMulInteger",
       [](const NodeArgs& a) {
         // a's zero point per row, b's per column
         Tensor x = centred(a, 0, 2, -2), w = centred(a, 1, 3, -1);
         return std::vector{x.matmul(w).cast(dtypes::int32)};
       }},
      {"ConvInteger",
       [](const NodeArgs& a) {
         Tensor x = quantized(a, 0).cast(dtypes::float64);
         if (a.has(2)) x = x.sub(scalar_input(a, 2));
         Tensor w = quantized(a, 1).cast(dtypes::float64);
         if (a.has(3)) w = w.sub(per_channel(a, 3, w));
         return std::vector{conv(a, x, w, std::nullopt).cast(dtypes::int32)};
       }},
      {"QLinearMatMul",
       [](const NodeArgs& a) {
         Tensor acc = centred(a, 0, 2, -2).matmul(centred(a, 3, 5, -1));
         return std::vector{requantize(a, acc, scalar_input(a, 1).mul(scalar_input(a, 4)))};
       }},
      {"QLinearConv",
       [](const NodeArgs& a) {
         Tensor x = quantized(a, 0).cast(dtypes::float64).sub(scalar_input(a, 2));
         Tensor w = quantized(a, 3).cast(dtypes::float64);
         w = w.sub(per_channel(a, 5, w));
         std::optional<Tensor> bias;
         if (a.has(8)) bias = a.in(8).cast(dtypes::float64);
         Tensor acc = conv(a, x, w, bias);
         // the weight's scale per output channel: axis 1 of the output
         Tensor w_scale = along_axis(a, a.in(4).cast(dtypes::float64), acc, 1);
         return std::vector{requantize(a, acc, scalar_input(a, 1).mul(w_scale))};
       }},
  });
}

}  // namespace tc::onnx
