// Elementwise math composed of existing Tensor ops as in tinygrad's tensor.py: trigonometric,
// hyperbolic and their inverse functions, erf, sign and rounding, isinf/isnan/isclose, clamp, lerp,
// copysign, bitwise not, shifts, rounding division, fmod, log10 and logaddexp.
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "tinycore/tensor.h"

namespace tc {
namespace {

// sum c_i x^(n-i), coefficients from the highest degree down (tinygrad's polyN).
Tensor poly_n(const Tensor& x, std::initializer_list<double> coeffs) {
  const double* c = coeffs.begin();
  Tensor acc = x.mul(ConstValue(c[0])).add(ConstValue(c[1]));
  for (size_t i = 2; i < coeffs.size(); i++) acc = acc.mul(x).add(ConstValue(c[i]));
  return acc;
}

Tensor to_float(const Tensor& x) {
  return dtypes::is_float(x.dtype()) ? x : x.cast(dtypes::default_float);
}

Tensor filled_like(const Tensor& t, ConstValue v) { return Tensor::full(t.shape(), v, t.dtype()); }

}  // namespace

Tensor Tensor::asin() const {
  // A&S 4.4.46: asin|x| = pi/2 - sqrt(1 - |x|) * poly(|x|); NaN outside [-1, 1] from the sqrt
  Tensor x = to_float(*this), a = x.abs();
  Tensor p = poly_n(a, {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046,
                        0.0889789874, -0.2145988016, 1.5707963050});
  Tensor r = a.sub(ConstValue(1.0), true).sqrt().mul(p).sub(ConstValue(M_PI / 2), true);
  return x.sign().mul(r);
}

Tensor Tensor::acos() const { return asin().sub(ConstValue(M_PI / 2), true); }

Tensor Tensor::atan() const {
  // tinygrad's asin(x / sqrt(1 + x^2)), on 1/x beyond |x| = 1 (atan x = +-pi/2 - atan(1/x)), so
  // x^2 cannot overflow and atan(+-inf) = +-pi/2
  Tensor x = to_float(*this);
  Tensor big = x.abs().gt(ConstValue(1.0));
  Tensor t = big.where(x.reciprocal(), x);
  Tensor r = t.div(t.square().add(ConstValue(1.0)).sqrt()).asin();
  return big.where(x.sign().mul(ConstValue(M_PI / 2)).sub(r), r);
}

Tensor Tensor::asinh() const {
  // sign(x) log(|x| + sqrt(x^2 + 1)): the odd form keeps negative x accurate; log(2|x|) where x^2
  // would overflow
  Tensor x = to_float(*this), a = x.abs();
  Tensor r = a.add(a.square().add(ConstValue(1.0)).sqrt()).log();
  Tensor huge = a.log().add(ConstValue(M_LN2));
  return x.sign().mul(a.gt(ConstValue(1e15)).where(huge, r));
}

Tensor Tensor::acosh() const {
  // log(x + sqrt(x^2 - 1)), NaN below 1; log(2x) where x^2 would overflow
  Tensor x = to_float(*this);
  Tensor r = x.add(x.square().sub(ConstValue(1.0)).sqrt()).log();
  return x.gt(ConstValue(1e15)).where(x.log().add(ConstValue(M_LN2)), r);
}

Tensor Tensor::atanh() const {
  // log((1 + x) / (1 - x)) / 2: +-inf at +-1, NaN outside [-1, 1]
  Tensor x = to_float(*this);
  return x.add(ConstValue(1.0)).div(x.sub(ConstValue(1.0), true)).log().div(ConstValue(2.0));
}

Tensor Tensor::erf() const {
  // A&S 7.1.26: sign(x) (1 - t poly(t) exp(-x^2)), t = 1 / (1 + 0.3275911 |x|)
  Tensor x = to_float(*this);
  Tensor t = x.abs().mul(ConstValue(0.3275911)).add(ConstValue(1.0)).reciprocal();
  Tensor p = poly_n(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  return x.sign().mul(t.mul(p).mul(x.square().neg().exp()).sub(ConstValue(1.0), true));
}

Tensor Tensor::bitwise_not() const {
  if (dtypes::is_bool(dtype())) return logical_not();
  if (!dtypes::is_int(dtype())) fail("Tensor.bitwise_not: %s is not supported", dtype().name());
  return bitwise_xor(scalar_like(ConstValue(-1)));
}

namespace {

// The dtype both operands of a shift take (as a binary op's); it must be an integer.
DType shift_dtype(const char* name, const Tensor& x, const Tensor& n) {
  broadcast_shape(name, {x.shape(), n.shape()});
  DType d = least_upper_dtype({x.dtype(), n.dtype()});
  if (!dtypes::is_int(d))
    fail("Tensor.%s: needs integer tensors, got %s and %s", name, x.dtype().name(),
         n.dtype().name());
  return d;
}

int64_t bit_width(DType d) { return 8 * d.itemsize(); }

}  // namespace

// LLVM's shl/shr are undefined from the bit width on: counts out of [0, bits) are masked into
// range for the primitive, and their lanes replaced by PyTorch's result.
Tensor Tensor::lshift(const Tensor& n) const {
  DType d = shift_dtype("lshift", *this, n);
  long long bits = bit_width(d);
  Tensor c = n.cast(d);
  Tensor shifted = cast(d).binop("lshift", Ops::SHL, c.bitwise_and(full({}, bits - 1, d)));
  Tensor in_range = c.lt(ConstValue(bits));
  if (!dtypes::is_unsigned(d)) in_range = in_range.bitwise_and(c.ge(ConstValue(0)));
  return in_range.where(shifted, ConstValue(0));
}

Tensor Tensor::rshift(const Tensor& n) const {
  DType d = shift_dtype("rshift", *this, n);
  long long bits = bit_width(d);
  Tensor x = cast(d), c = n.cast(d);
  Tensor shifted = x.binop("rshift", Ops::SHR, c.bitwise_and(full({}, bits - 1, d)));
  if (dtypes::is_unsigned(d)) return c.lt(ConstValue(bits)).where(shifted, ConstValue(0));
  Tensor sign_fill = x.binop("rshift", Ops::SHR, full({}, bits - 1, d));
  return c.ge(ConstValue(0)).bitwise_and(c.lt(ConstValue(bits))).where(shifted, sign_fill);
}

// A constant count n takes the dtype of the Python int it stands for (scalar_like's rule).
Tensor Tensor::lshift(int64_t n) const {
  DType d = shift_dtype("lshift", *this, scalar_like(ConstValue(0)));
  Tensor x = cast(d);
  if (n < 0 || n >= bit_width(d)) return x.mul(ConstValue(0));
  return x.binop("lshift", Ops::SHL, full({}, static_cast<long long>(n), d));
}

Tensor Tensor::rshift(int64_t n) const {
  DType d = shift_dtype("rshift", *this, scalar_like(ConstValue(0)));
  Tensor x = cast(d);
  int64_t bits = bit_width(d);
  if (n >= 0 && n < bits)
    return x.binop("rshift", Ops::SHR, full({}, static_cast<long long>(n), d));
  if (dtypes::is_unsigned(d)) return x.mul(ConstValue(0));
  return x.binop("rshift", Ops::SHR, full({}, static_cast<long long>(bits - 1), d));  // sign fill
}

Tensor Tensor::fmod(const Tensor& x) const {
  broadcast_shape("fmod", {shape(), x.shape()});
  DType d = least_upper_dtype({dtype(), x.dtype()});
  if (dtypes::is_bool(d)) fail("Tensor.fmod: not defined for bool tensors");
  if (dtypes::is_int(d)) return binop("fmod", Ops::MOD, x);  // MOD truncates, as C's %
  Tensor a = cast(d), b = x.cast(d);
  return a.sub(a.div(b, "trunc").mul(b));
}

Tensor Tensor::fmod(ConstValue x) const { return fmod(scalar_like(x)); }

Tensor Tensor::log10() const { return to_float(*this).log2().mul(ConstValue(std::log10(2.0))); }

Tensor Tensor::logaddexp(const Tensor& other) const {
  broadcast_shape("logaddexp", {shape(), other.shape()});
  DType d = least_upper_float(least_upper_dtype({dtype(), other.dtype()}));
  Tensor a = cast(d), b = other.cast(d);
  // log(exp(a - m) + exp(b - m)) + m with m = max(a, b) held constant for the gradient (which
  // does not depend on it); an infinite m is replaced by 0 so that -inf with -inf stays -inf
  Tensor m = a.maximum(b).detach();
  m = m.isfinite().where(m, ConstValue(0.0));
  return a.sub(m).exp().add(b.sub(m).exp()).log().add(m);
}

Tensor Tensor::logaddexp(ConstValue other) const { return logaddexp(scalar_like(other)); }

Tensor Tensor::div(const Tensor& x, const char* rounding_mode, bool reverse) const {
  if (!rounding_mode) return reverse ? x.div(*this) : div(x);
  std::string mode(rounding_mode);
  if (mode != "trunc" && mode != "floor")
    fail("Tensor.div: rounding_mode=\"%s\" is not supported (\"trunc\", \"floor\" or none)", mode);
  const Tensor& num = reverse ? x : *this;
  const Tensor& den = reverse ? *this : x;
  if (dtypes::is_int(least_upper_dtype({num.dtype(), den.dtype()}))) {
    // exact in integers: a - a % b (Python's %) is a multiple of b
    return mode == "trunc" ? num.idiv(den) : num.sub(num.mod(den)).idiv(den);
  }
  // as tinygrad and torch: the float quotient rounded, in the promoted float dtype
  Tensor d = num.div(den);
  return mode == "trunc" ? d.trunc() : d.floor();
}

Tensor Tensor::div(ConstValue x, const char* rounding_mode, bool reverse) const {
  return div(scalar_like(x), rounding_mode, reverse);
}

// ---------------------------------------------------------------- tan, sign, rounding, bounds

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

}  // namespace tc
