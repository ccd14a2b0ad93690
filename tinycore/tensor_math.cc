// Inverse trigonometric and hyperbolic functions, erf, bitwise not, shifts and rounding division,
// composed of existing Tensor ops as in tinygrad's tensor.py.
#include <cmath>
#include <cstring>
#include <initializer_list>
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
void check_shift(const char* name, DType d, int64_t n) {
  if (!dtypes::is_unsigned(d) || n < 0)
    fail("Tensor.%s: needs an unsigned integer dtype and a shift >= 0, got %s and %d", name,
         d.name(), n);
}
}  // namespace

Tensor Tensor::lshift(int64_t n) const {
  check_shift("lshift", dtype(), n);
  if (n >= 8 * dtype().itemsize()) return mul(ConstValue(0));
  // x * 2**n as tinygrad, done by the shift primitive (the same bits for unsigned integers)
  return binop("lshift", Ops::SHL, scalar_like(ConstValue(static_cast<long long>(n))));
}

Tensor Tensor::rshift(int64_t n) const {
  check_shift("rshift", dtype(), n);
  if (n >= 8 * dtype().itemsize()) return mul(ConstValue(0));
  // x // 2**n as tinygrad, by the shift primitive (a division by 2**63 would also meet the
  // integer bounds of UOp::infer, which read a uint64 constant >= 2**63 as negative)
  return binop("rshift", Ops::SHR, scalar_like(ConstValue(static_cast<long long>(n))));
}

Tensor Tensor::div(const Tensor& x, const char* rounding_mode, bool reverse) const {
  if (!rounding_mode) return reverse ? x.div(*this) : div(x);
  std::string mode(rounding_mode);
  if (mode != "trunc" && mode != "floor")
    fail("Tensor.div: rounding_mode=\"%s\" is not supported (\"trunc\", \"floor\" or none)", mode);
  const Tensor& num = reverse ? x : *this;
  const Tensor& den = reverse ? *this : x;
  if (dtypes::is_int(least_upper_dtype({num.dtype(), den.dtype()}))) {
    // exact in integers: a - a % b (Python's %) is a multiple of b
    Tensor q = mode == "trunc" ? num.idiv(den) : num.sub(num.mod(den)).idiv(den);
    return q.cast(num.dtype());
  }
  // as tinygrad: float division rounded, an integer numerator keeps its dtype
  Tensor d = num.div(den);
  d = mode == "trunc" ? d.trunc() : d.floor();
  return dtypes::is_int(num.dtype()) ? d.cast(num.dtype()) : d;
}

Tensor Tensor::div(ConstValue x, const char* rounding_mode, bool reverse) const {
  return div(scalar_like(x), rounding_mode, reverse);
}

}  // namespace tc
