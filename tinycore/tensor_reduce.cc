// Reductions, scans, activations and more elementwise math, all composed from the Tensor ops of
// tensor.cc (no new UOps, no hand-written kernels). Formulas follow the seeds' tinygrad Tensor.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tinycore/tensor.h"

namespace tc {
namespace {

Tensor filled_like(const Tensor& t, ConstValue v) { return Tensor::full(t.shape(), v, t.dtype()); }

// The order-reversing map of min/argmin: -x for floats, ~x for integers, not for bool.
Tensor inverse(const Tensor& t) {
  if (dtypes::is_float(t.dtype())) return t.neg();
  if (dtypes::is_bool(t.dtype())) return t.logical_not();
  return t.bitwise_xor(Tensor::full({}, ConstValue(-1), t.dtype()));
}

// The smallest value of `d` (the identity of max), as a constant.
ConstValue lowest(DType d) {
  if (dtypes::is_bool(d)) return ConstValue(false);
  if (dtypes::is_float(d)) return ConstValue(-std::numeric_limits<double>::infinity());
  if (dtypes::is_unsigned(d)) return ConstValue(0);
  return ConstValue(static_cast<long long>(dtypes::min(d)));
}

// For x of shape (..., n): (..., n, n) whose [..., i, j] is x[..., j - i] for i <= j and `fill`
// otherwise. Reducing over axis -2 gives the inclusive scan. Pure movement: x padded with n
// fills, repeated n times and read back with a row stride of 2n - 1 (tinygrad's pool trick).
Tensor scan_windows(const Tensor& x, ConstValue fill) {
  Shape s = x.shape();
  int64_t n = s.back();
  int nd = x.ndim();
  std::vector<std::pair<int64_t, int64_t>> pad(nd, {0, 0});
  pad.back() = {0, n};
  Shape lead(s.begin(), s.end() - 1);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape out = lead;
    out.insert(out.end(), tail);
    return out;
  };
  Tensor t = x.pad(pad, fill).reshape(with({1, 2 * n})).expand(with({n, 2 * n}));
  t = t.reshape(with({2 * n * n}));
  std::vector<std::pair<int64_t, int64_t>> keep(nd, {0, 0});
  for (int i = 0; i < nd - 1; i++) keep[i] = {0, s[i]};
  keep.back() = {0, n * (2 * n - 1)};
  t = t.shrink(keep).reshape(with({n, 2 * n - 1}));
  std::vector<std::pair<int64_t, int64_t>> square(nd + 1, {0, 0});
  for (int i = 0; i < nd - 1; i++) square[i] = {0, s[i]};
  square[nd - 1] = {0, n};
  square[nd] = {0, n};
  return t.shrink(square);
}

bool is_integral(ConstValue v) { return v.kind != ConstValue::Kind::Float; }

}  // namespace

Tensor Tensor::min(Axes axis, bool keepdim) const {
  reduce_axes("min", axis);  // errors name min
  // inverse(max(inverse(x))): the inverse is order-reversing and cannot overflow
  return inverse(inverse(*this).max(axis, keepdim));
}

// ---------------------------------------------------------------- reductions

Tensor Tensor::mean(Axes axis, bool keepdim) const {
  std::vector<int64_t> axes = reduce_axes("mean", axis);
  int64_t n = 1;
  for (int64_t a : axes) n *= shape()[a];
  DType out = dtypes::is_float(dtype()) ? dtype() : dtypes::float32;
  Tensor total = cast(sum_acc_dtype(dtype())).sum(axis, keepdim);
  return total.div(ConstValue(static_cast<long long>(n))).cast(out);
}

Tensor Tensor::var(Axes axis, bool keepdim, double correction) const {
  std::vector<int64_t> axes = reduce_axes("var", axis);
  int64_t n = 1;
  for (int64_t a : axes) n *= shape()[a];
  Tensor squares = sub(mean(axis, true)).square();
  return squares.sum(axis, keepdim)
      .div(ConstValue(std::max(0.0, static_cast<double>(n) - correction)));
}

Tensor Tensor::std(Axes axis, bool keepdim, double correction) const {
  reduce_axes("std", axis);
  return var(axis, keepdim, correction).sqrt();
}

std::pair<Tensor, Tensor> Tensor::var_mean(Axes axis, bool keepdim, double correction) const {
  reduce_axes("var_mean", axis);
  return {var(axis, keepdim, correction), mean(axis, keepdim)};
}

std::pair<Tensor, Tensor> Tensor::std_mean(Axes axis, bool keepdim, double correction) const {
  reduce_axes("std_mean", axis);
  return {std(axis, keepdim, correction), mean(axis, keepdim)};
}

Tensor Tensor::any(Axes axis, bool keepdim) const {
  reduce_axes("any", axis);
  return cast(dtypes::bool_).max(axis, keepdim);
}

Tensor Tensor::all(Axes axis, bool keepdim) const {
  reduce_axes("all", axis);
  return logical_not().any(axis, keepdim).logical_not();
}

Tensor Tensor::softmax(int axis, std::optional<DType> dtype) const {
  normalize_axis("softmax", axis);
  Tensor m = sub(max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int axis, std::optional<DType> dtype) const {
  normalize_axis("log_softmax", axis);
  Tensor m = sub(max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  return m.sub(m.exp().sum(axis, true).log());
}

Tensor Tensor::logsumexp(Axes axis, bool keepdim) const {
  reduce_axes("logsumexp", axis);
  Tensor m = max(axis, true);
  Tensor s = sub(m).exp().sum(axis, keepdim);
  return s.log().add(keepdim ? m : m.reshape(s.shape()));
}

Tensor Tensor::argmax(std::optional<int> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0);
  int a = normalize_axis("argmax", *axis);
  int64_t n = shape()[a];
  if (n == 0)
    fail("Tensor.argmax: cannot take the argmax of an empty axis %d of shape %s", *axis,
         fmt_shape(shape()));
  // n - (n - i) of the first i holding the max: the biggest "countdown" among the maxima
  Tensor is_max = eq(max(a, true));
  Shape col(static_cast<size_t>(ndim() - a), 1);
  col[0] = n;
  Tensor countdown = arange(n, 0, -1, dtypes::int32).reshape(col);
  Tensor idx = is_max.mul(countdown).max(a, keepdim);
  return idx.sub(ConstValue(static_cast<long long>(n)), true).cast(dtypes::int32);
}

Tensor Tensor::argmin(std::optional<int> axis, bool keepdim) const {
  if (axis) normalize_axis("argmin", *axis);
  return inverse(*this).argmax(axis, keepdim);
}

Tensor Tensor::cumsum(int axis) const {
  int a = normalize_axis("cumsum", axis);
  if (numel() == 0) return cast(sum_acc_dtype(dtype()));
  Tensor x = transpose(a, -1);
  return scan_windows(x, 0).sum(-2).transpose(a, -1);
}

Tensor Tensor::cummax(int axis) const {
  int a = normalize_axis("cummax", axis);
  if (numel() == 0) return *this;
  Tensor x = transpose(a, -1);
  return scan_windows(x, lowest(dtype())).max(-2).transpose(a, -1);
}

// ---------------------------------------------------------------- elementwise

Tensor Tensor::tan() const { return sin().div(cos()); }
Tensor Tensor::tanh() const {
  return mul(ConstValue(2.0), true).sigmoid().mul(ConstValue(2.0), true).sub(ConstValue(1.0));
}
Tensor Tensor::sinh() const { return exp().sub(neg().exp()).div(ConstValue(2)); }
Tensor Tensor::cosh() const { return exp().add(neg().exp()).div(ConstValue(2)); }

Tensor Tensor::sign() const {
  Tensor s = lt(ConstValue(0)).where(filled_like(*this, -1), filled_like(*this, 1));
  s = ne(ConstValue(0)).where(s, filled_like(*this, 0));
  // NaN stays NaN (tinygrad adds x * 0, which also turns +-inf into NaN; torch gives +-1)
  return dtypes::is_float(dtype()) ? isnan().where(*this, s) : s;
}

Tensor Tensor::ceil() const {
  Tensor b = trunc();
  return gt(b).where(b.add(ConstValue(1)), b);
}
Tensor Tensor::floor() const {
  Tensor b = trunc();
  return lt(b).where(b.sub(ConstValue(1)), b);
}
Tensor Tensor::round() const {
  if (!dtypes::is_float(dtype())) return *this;
  // tinygrad's formula with trunc in place of the int32 cast (exact also beyond 2^31)
  Tensor half = trunc().div(ConstValue(2.0));
  Tensor even = half.trunc().eq(half);
  return gt(ConstValue(0))
      .eq(even)
      .where(sub(ConstValue(0.5)).ceil(), add(ConstValue(0.5)).floor());
}

Tensor Tensor::isinf(bool detect_positive, bool detect_negative) const {
  const double inf = std::numeric_limits<double>::infinity();
  return eq(ConstValue(inf))
      .mul(ConstValue(detect_positive))
      .add(eq(ConstValue(-inf)).mul(ConstValue(detect_negative)));
}
Tensor Tensor::isnan() const { return ne(*this); }
Tensor Tensor::isfinite() const { return isinf().bitwise_or(isnan()).logical_not(); }

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  broadcast_shape("isclose", {shape(), other.shape()});
  Tensor bound = other.abs().mul(ConstValue(rtol), true).add(ConstValue(atol), true);
  Tensor finite_close = isfinite().mul(other.isfinite()).mul(sub(other).abs().le(bound));
  Tensor infinite_close = isinf().add(other.isinf()).mul(eq(other));
  Tensor close = finite_close.add(infinite_close);
  if (equal_nan) close = close.add(isnan().mul(other.isnan()));
  return close;
}

Tensor Tensor::clamp(std::optional<ConstValue> min, std::optional<ConstValue> max) const {
  if (!min && !max) fail("Tensor.clamp: at least one of min and max must be given");
  Tensor r = min ? maximum(*min) : *this;
  return max ? r.minimum(*max) : r;
}
Tensor Tensor::clip(std::optional<ConstValue> min, std::optional<ConstValue> max) const {
  if (!min && !max) fail("Tensor.clip: at least one of min and max must be given");
  return clamp(min, max);
}

Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const {
  broadcast_shape("lerp", {shape(), end.shape(), weight.shape()});
  return add(end.sub(*this).mul(weight));
}
Tensor Tensor::lerp(const Tensor& end, ConstValue weight) const {
  broadcast_shape("lerp", {shape(), end.shape()});
  return add(end.sub(*this).mul(weight));
}

Tensor Tensor::copysign(const Tensor& other) const {
  broadcast_shape("copysign", {shape(), other.shape()});
  // tinygrad adds other * 0 for the promotion, which also turns an inf or NaN `other` into NaN;
  // this casts instead (the sign of a NaN `other` is read as positive, as torch for a plain NaN)
  DType d = least_upper_dtype({dtype(), other.dtype()});
  Tensor a = cast(d).abs();
  return other.lt(ConstValue(0))
      .where(a.neg(), a)
      .broadcast_to(broadcast_shape("copysign", {shape(), other.shape()}));
}
Tensor Tensor::copysign(ConstValue other) const { return copysign(scalar_like(other)); }

Tensor Tensor::pow(const Tensor& exponent) const {
  broadcast_shape("pow", {shape(), exponent.shape()});
  DType d = least_upper_dtype({dtype(), exponent.dtype()});
  if (!dtypes::is_float(d))
    fail(
        "Tensor.pow: base needs to be float (or the exponent a non-negative int constant), got "
        "%s ** %s",
        dtype().name(), exponent.dtype().name());
  Tensor b = cast(d), e = exponent.cast(d);
  // b ** e = exp2(e * log2|b|), then the sign/NaN of a negative base and 0 ** 0 = 1
  Tensor ret = b.abs().log2().mul(e).exp2();
  Tensor non_int = e.ne(e.trunc());
  Tensor odd = e.abs().mod(full({}, ConstValue(2.0), d)).eq(ConstValue(1.0));
  Tensor adj =
      non_int.where(full({}, ConstValue(std::nan("")), d),
                    odd.where(full({}, ConstValue(-1.0), d), full({}, ConstValue(1.0), d)));
  Tensor signed_ret = ret.mul(b.lt(ConstValue(0)).where(adj, full({}, ConstValue(1.0), d)));
  Tensor out = b.eq(ConstValue(0)).mul(e.eq(ConstValue(0))).where(ConstValue(1.0), signed_ret);
  // pow(int, float) -> int, as tinygrad
  if (!dtypes::is_float(dtype())) return out.round().cast(dtype());
  return out;
}

Tensor Tensor::pow(ConstValue exponent, bool reverse) const {
  if (reverse) return scalar_like(exponent).pow(*this);
  if (!dtypes::is_float(dtype()) && is_integral(exponent)) {
    if (exponent.ivalue < 0)
      fail("Tensor.pow: a negative integer exponent %d needs a float base, got %s", exponent.ivalue,
           dtype().name());
    // exact integer power by repeated squaring (wraps like the dtype's multiplication)
    Tensor result = filled_like(*this, dtypes::is_bool(dtype()) ? ConstValue(true) : ConstValue(1));
    Tensor sq = *this;
    for (int64_t k = exponent.ivalue; k > 0; k >>= 1) {
      if (k & 1) result = result.mul(sq);
      if (k > 1) sq = sq.mul(sq);
    }
    return result;
  }
  return pow(scalar_like(exponent));
}

// ---------------------------------------------------------------- activations

Tensor Tensor::gelu() const {
  Tensor inner =
      add(mul(*this).mul(*this).mul(ConstValue(0.044715))).mul(ConstValue(std::sqrt(2 / M_PI)));
  return mul(ConstValue(0.5)).mul(inner.tanh().add(ConstValue(1.0)));
}
Tensor Tensor::quick_gelu() const { return mul(mul(ConstValue(1.702)).sigmoid()); }
Tensor Tensor::swish() const { return mul(sigmoid()); }
Tensor Tensor::silu() const { return swish(); }
// relu6 and hardsigmoid as clamps: tinygrad's relu(y) - relu(y - c) is the same for finite y
// but NaN at +inf
Tensor Tensor::relu6() const { return relu().minimum(ConstValue(6)); }
Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  return mul(ConstValue(alpha)).add(ConstValue(beta)).relu().minimum(ConstValue(1.0));
}
Tensor Tensor::hardswish() const {
  return mul(add(ConstValue(3)).relu6()).mul(ConstValue(1.0 / 6));
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  return clip(ConstValue(min_val), ConstValue(max_val));
}
Tensor Tensor::elu(double alpha) const {
  return relu().sub(exp().sub(ConstValue(1.0), true).relu().mul(ConstValue(alpha)));
}
Tensor Tensor::celu(double alpha) const {
  Tensor neg_part = div(ConstValue(alpha)).exp().sub(ConstValue(1.0)).mul(ConstValue(alpha));
  return maximum(ConstValue(0)).add(neg_part.minimum(ConstValue(0)));
}
Tensor Tensor::selu(double alpha, double gamma) const {
  Tensor neg_part = exp().sub(ConstValue(1.0)).mul(ConstValue(alpha));
  return ge(ConstValue(0)).detach().where(*this, neg_part).mul(ConstValue(gamma));
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  return lt(ConstValue(0)).where(mul(ConstValue(neg_slope)), *this);
}
Tensor Tensor::softplus(double beta) const {
  return mul(ConstValue(beta)).exp().add(ConstValue(1.0)).log().mul(ConstValue(1.0 / beta));
}
Tensor Tensor::softsign() const { return div(abs().add(ConstValue(1))); }
Tensor Tensor::mish() const { return mul(softplus().tanh()); }

// A MUL reduction: identity 1, bool multiplies as logical and.
Tensor Tensor::prod(Axes axis, bool keepdim) const {
  return reduce("prod", Ops::MUL, axis, keepdim);
}

}  // namespace tc
