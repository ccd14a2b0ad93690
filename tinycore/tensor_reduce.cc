// Reductions, scans, activations and more elementwise math, all composed from the Tensor ops of
// tensor.cc (no new UOps, no hand-written kernels). Formulas follow the seeds' tinygrad Tensor.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

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

// For x and its running extreme `scan`, both (..., n): int32 (..., n) whose [..., i] is the last
// j <= i with x[..., j] equal to scan[..., i] (NaN matching NaN), i.e. where torch's
// cummax / cummin take their indices. The (..., j, i) matches are weighted by j + 1 and the
// largest weight kept: a fused compare, mask and max, O(n^2) per line.
Tensor scan_indices(const Tensor& x, const Tensor& scan) {
  int64_t n = x.shape().back();
  Tensor match = x.unsqueeze(-1).eq(scan.unsqueeze(-2));
  if (dtypes::is_float(x.dtype()))
    match = match.bitwise_or(x.isnan().unsqueeze(-1).bitwise_and(scan.isnan().unsqueeze(-2)));
  Tensor up_to_i = Tensor::ones({n, n}, dtypes::bool_).triu();  // j <= i
  Tensor weight = Tensor::arange(1, static_cast<double>(n + 1), 1, dtypes::int32).reshape({n, 1});
  Tensor best = match.bitwise_and(up_to_i).where(weight, ConstValue(0)).max(-2);
  return best.sub(ConstValue(1)).cast(dtypes::int32);
}

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
  if (ndim() == 0)
    return on_scalar("softmax", axis, [&](const Tensor& v) { return v.softmax(0, dtype); });
  normalize_axis("softmax", axis);
  Tensor m = sub(max(axis, true).detach());
  if (dtype) m = m.cast(*dtype);
  Tensor e = m.exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int axis, std::optional<DType> dtype) const {
  if (ndim() == 0)
    return on_scalar("log_softmax", axis, [&](const Tensor& v) { return v.log_softmax(0, dtype); });
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
  if (ndim() == 0) return on_scalar("cumsum", axis, [](const Tensor& v) { return v.cumsum(0); });
  int a = normalize_axis("cumsum", axis);
  if (numel() == 0) return cast(sum_acc_dtype(dtype()));
  Tensor x = transpose(a, -1);
  return scan_windows(x, 0).sum(-2).transpose(a, -1);
}

Tensor Tensor::cummax(int axis) const {
  if (ndim() == 0) return on_scalar("cummax", axis, [](const Tensor& v) { return v.cummax(0); });
  int a = normalize_axis("cummax", axis);
  if (numel() == 0) return *this;
  Tensor x = transpose(a, -1);
  return scan_windows(x, lowest(dtype())).max(-2).transpose(a, -1);
}

std::pair<Tensor, Tensor> Tensor::cummin(int axis) const {
  if (ndim() == 0) {
    if (axis != 0 && axis != -1)
      fail("Tensor.cummin: axis %d is out of range for a tensor of shape ()", axis);
    auto [values, indices] = reshape({1}).cummin(0);
    return {values.reshape({}), indices.reshape({})};
  }
  int a = normalize_axis("cummin", axis);
  if (numel() == 0) return {*this, zeros(shape(), dtypes::int32)};
  // the running max of the order-reversing inverse, inverted back
  Tensor x = transpose(a, -1), inv = inverse(x);
  Tensor values = inverse(scan_windows(inv, lowest(inv.dtype())).max(-2));
  return {values.transpose(a, -1), scan_indices(x, values).transpose(a, -1)};
}

std::pair<Tensor, Tensor> Tensor::cummax_with_indices(int axis) const {
  Tensor values = cummax(axis);
  if (ndim() == 0) return {values, zeros({}, dtypes::int32)};
  int a = normalize_axis("cummax", axis);
  if (numel() == 0) return {values, zeros(shape(), dtypes::int32)};
  Tensor indices = scan_indices(transpose(a, -1), values.transpose(a, -1).detach());
  return {values, indices.transpose(a, -1)};
}

Tensor Tensor::softmin(int axis, std::optional<DType> dtype) const {
  return neg().softmax(axis, dtype);
}

Tensor Tensor::normalize(double p, int dim, double eps) const {
  normalize_axis("normalize", dim);
  Tensor norm = p == 0 ? ne(ConstValue(0)).sum(dim, true)
                       : abs().pow(ConstValue(p)).sum(dim, true).pow(ConstValue(1.0 / p));
  return div(norm.maximum(ConstValue(eps)));
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
Tensor Tensor::isclose(ConstValue other, double rtol, double atol, bool equal_nan) const {
  return isclose(scalar_like(other), rtol, atol, equal_nan);
}

Tensor Tensor::clamp(std::optional<ConstValue> min, std::optional<ConstValue> max) const {
  if (!min && !max) fail("Tensor.clamp: at least one of min and max must be given");
  // selects, as tinygrad: the gradient is 1 up to and at the bounds (torch's), where maximum and
  // minimum would split it at a tie; a NaN compares false and passes through
  Tensor r = min ? lt(*min).where(*min, *this) : *this;
  return max ? r.gt(*max).where(*max, r) : r;
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
  // -0.0 is negative too: its reciprocal is -inf
  Tensor negative = other.lt(ConstValue(0));
  if (dtypes::is_float(other.dtype()))
    negative = negative.bitwise_or(other.reciprocal().lt(ConstValue(0)));
  return negative.where(a.neg(), a)
      .broadcast_to(broadcast_shape("copysign", {shape(), other.shape()}));
}
Tensor Tensor::copysign(ConstValue other) const { return copysign(scalar_like(other)); }

// ---------------------------------------------------------------- activations

Tensor Tensor::gelu(const std::string& approximate) const {
  if (approximate == "none")  // x * Phi(x)
    return mul(ConstValue(0.5)).mul(div(ConstValue(M_SQRT2)).erf().add(ConstValue(1.0)));
  if (approximate != "tanh")
    fail("Tensor.gelu: approximate=\"%s\" is not supported (\"tanh\" or \"none\")", approximate);
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
  // log(1 + exp(beta x)) / beta as logaddexp(beta x, 0): finite where exp(beta x) overflows
  return mul(ConstValue(beta)).logaddexp(ConstValue(0.0)).mul(ConstValue(1.0 / beta));
}
Tensor Tensor::softsign() const { return div(abs().add(ConstValue(1))); }
Tensor Tensor::mish() const { return mul(softplus().tanh()); }

// A MUL reduction: identity 1, bool multiplies as logical and.
Tensor Tensor::prod(Axes axis, bool keepdim) const {
  return reduce("prod", Ops::MUL, axis, keepdim);
}

}  // namespace tc
