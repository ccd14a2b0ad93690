// Tensor.pow. The value is tinygrad's: exp2(e * log2|b|) with the sign or NaN of a negative base
// (codegen's xpow), or repeated multiplication for an integer constant exponent (its symbolic
// simplify_pow), which is exact where the products are. The gradient is tinygrad's POW rule,
// attached as a rule of its own: derived through exp2/log2 it would be 0 * inf = NaN at a zero
// base, an infinite one and x ** 0, where torch (and tinygrad) give numbers.
#include <cmath>
#include <limits>
#include <optional>

#include "tinycore/gradient.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The value of a constant tensor (a CONST, maybe reshaped and expanded); nullopt otherwise.
std::optional<double> constant_value(const Tensor& t) {
  const UOp* u = t.uop().get();
  while (u->op == Ops::RESHAPE || u->op == Ops::EXPAND) u = u->src[0].get();
  if (u->op != Ops::CONST) return std::nullopt;
  return u->const_value();
}

// An exponent done by repeated multiplication (a few dozen multiplies at most).
std::optional<int64_t> small_integer(std::optional<double> c) {
  if (!c || *c != std::trunc(*c) || std::abs(*c) > (1 << 24)) return std::nullopt;
  return static_cast<int64_t>(*c);
}

// b ** n for n >= 0 by repeated squaring; `one` is the dtype's 1 (true for bool).
Tensor power_by_squaring(const Tensor& b, int64_t n, ConstValue one) {
  std::optional<Tensor> result;
  for (Tensor sq = b; n > 0; n >>= 1) {
    if (n & 1) result = result ? result->mul(sq) : sq;
    if (n > 1) sq = sq.mul(sq);
  }
  return result ? *result : Tensor::full(b.shape(), one, b.dtype());
}

// b ** n of a float b for any integer n: 1 / b to the power -n below 0 (1 for n = 0, even at a
// NaN or infinite base).
Tensor integer_power(const Tensor& b, int64_t n) {
  return power_by_squaring(n < 0 ? b.reciprocal() : b, n < 0 ? -n : n, ConstValue(1.0));
}

// exp2(e * log2|b|), then for b < 0: NaN for a non-integer e (but -inf ** e is |b| ** e, as C's
// pow), the sign for an odd one; and x ** 0 = 1 for every x.
Tensor general_power(const Tensor& b, const Tensor& e) {
  Tensor ret = b.abs().log2().mul(e).exp2();
  Tensor non_int = e.ne(e.trunc());
  Tensor half = e.mul(ConstValue(0.5));
  Tensor odd = half.ne(half.trunc());  // exact: e / 2 of an integer e is representable
  Tensor neg_base = non_int.where(b.ne(ConstValue(-kInf)).where(ConstValue(std::nan("")), ret),
                                  odd.where(ret.neg(), ret));
  return e.eq(ConstValue(0)).where(ConstValue(1.0), b.lt(ConstValue(0)).where(neg_base, ret));
}

// tinygrad's POW gradient (torch's too): d/db = e * b ** (e - 1), 0 where e == 0; d/de =
// b ** e * ln b, and at b == 0: -inf for e < 0, else 0. The sources are the value, b and e.
std::vector<UOpRef> pow_gradients(const UOpRef& ret, const UOpRef& grad) {
  Tensor value(ret), g(grad), b(ret->src[1]), e(ret->src[2]);
  std::optional<double> c = constant_value(e);
  Tensor lower = c ? b.pow(ConstValue(*c - 1)) : b.pow(e.sub(ConstValue(1.0)));
  Tensor db = e.eq(ConstValue(0)).where(ConstValue(0.0), e.mul(lower));
  std::vector<UOpRef> out = {g.mul(db).uop(), nullptr};
  if (!c) {  // a constant exponent is never a target
    Tensor at_zero = e.lt(ConstValue(0)).where(ConstValue(-kInf), ConstValue(0.0));
    Tensor de = b.eq(ConstValue(0)).where(at_zero.cast(b.dtype()), value.mul(b.log()));
    out[1] = g.mul(de).uop();
  }
  return out;
}

int64_t pow_gradient_rule() {
  static const int64_t rule = register_gradient_rule(pow_gradients);
  return rule;
}

bool is_integral(ConstValue v) { return v.kind != ConstValue::Kind::Float; }

}  // namespace

Tensor Tensor::pow(const Tensor& exponent) const {
  Shape s = broadcast_shape("pow", {shape(), exponent.shape()});
  DType d = least_upper_dtype({dtype(), exponent.dtype()});
  if (!dtypes::is_float(d))
    fail(
        "Tensor.pow: base needs to be float (or the exponent a non-negative int constant), got "
        "%s ** %s",
        dtype().name(), exponent.dtype().name());
  Tensor b = cast(d).broadcast_to(s), e = exponent.cast(d).broadcast_to(s);
  std::optional<int64_t> n = small_integer(constant_value(e));
  Tensor value = n ? integer_power(b.detach(), *n) : general_power(b.detach(), e.detach());
  return Tensor(with_gradient_rule(value.uop(), {b.uop(), e.uop()}, pow_gradient_rule()));
}

Tensor Tensor::pow(ConstValue exponent, bool reverse) const {
  if (reverse) return scalar_like(exponent).pow(*this);
  if (!dtypes::is_float(dtype()) && is_integral(exponent)) {
    if (exponent.ivalue < 0)
      fail("Tensor.pow: a negative integer exponent %d needs a float base, got %s", exponent.ivalue,
           dtype().name());
    // exact integer power (wraps like the dtype's multiplication)
    return power_by_squaring(*this, exponent.ivalue,
                             dtypes::is_bool(dtype()) ? ConstValue(true) : ConstValue(1));
  }
  return pow(scalar_like(exponent));
}

}  // namespace tc
