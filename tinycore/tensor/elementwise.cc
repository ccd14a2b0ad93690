// Elementwise primitives: casts, the unary ops that are one UOp each, and the binary and ternary
// ops with tinygrad's broadcasting and dtype promotion, which every other elementwise op builds on.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tinycore/tensor.h"

namespace tc {

Tensor Tensor::apply(Ops op, DType dtype, std::vector<Tensor> src) const {
  std::vector<UOpRef> s = {uop()};
  for (const Tensor& t : src) s.push_back(t.uop());
  return Tensor(UOp::make(op, dtype, std::move(s)));
}

Tensor Tensor::as_float() const { return cast(least_upper_float(dtype())); }

Tensor Tensor::cast(DType dtype) const {
  if (dtype == this->dtype()) return *this;
  return apply(Ops::CAST, dtype);
}

Tensor Tensor::neg() const {
  if (dtypes::is_bool(dtype())) return logical_not();
  return apply(Ops::NEG, dtype());
}
Tensor Tensor::logical_not() const { return cast(dtypes::bool_).ne(Tensor::full({}, true)); }
Tensor Tensor::reciprocal() const {
  Tensor f = as_float();
  return f.apply(Ops::RECIP, f.dtype());
}
Tensor Tensor::sqrt() const {
  Tensor f = as_float();
  return f.apply(Ops::SQRT, f.dtype());
}
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::exp2() const {
  Tensor f = as_float();
  return f.apply(Ops::EXP2, f.dtype());
}
Tensor Tensor::log2() const {
  Tensor f = as_float();
  return f.apply(Ops::LOG2, f.dtype());
}
// exp and cos transform the argument before exp2/sin (x log2 e, pi/2 - x): rounded in the
// argument's dtype that error grows with |x| (61 ulp for exp near 88 in float32), so narrower
// floats transform in float64 and round once at the end (<= 1 ulp, tests/codegen).
namespace {
Tensor via_float64(const Tensor& f, const std::function<Tensor(const Tensor&)>& fn) {
  if (f.dtype().itemsize() >= 8) return fn(f);
  return fn(f.cast(dtypes::float64)).cast(f.dtype());
}
}  // namespace
Tensor Tensor::exp() const {
  Tensor f = as_float();
  return f.apply(Ops::EXP, f.dtype());
}
Tensor Tensor::log() const { return log2().mul(ConstValue(M_LN2)); }
Tensor Tensor::sin() const {
  Tensor f = as_float();
  return f.apply(Ops::SIN, f.dtype());
}
Tensor Tensor::cos() const {
  return via_float64(as_float(),
                     [](const Tensor& x) { return x.sub(ConstValue(M_PI / 2), true).sin(); });
}
Tensor Tensor::trunc() const {
  if (!dtypes::is_float(dtype())) return *this;
  return apply(Ops::TRUNC, dtype());
}
Tensor Tensor::abs() const {
  if (dtypes::is_unsigned(dtype()) || dtypes::is_bool(dtype())) return *this;
  // +-0 gives the constant 0, so the gradient is sign(x) (0 at 0, as torch); NaN stays NaN
  return lt(ConstValue(0)).where(neg(), eq(ConstValue(0)).where(ConstValue(0), *this));
}
Tensor Tensor::square() const { return mul(*this); }

Shape broadcast_shape(const char* op, const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (size_t i = 0; i < nd; i++) {
    for (const Shape& s : shapes) {
      if (i + s.size() < nd) continue;
      int64_t d = s[i + s.size() - nd];
      if (d == 1) continue;
      if (out[i] != 1 && out[i] != d) {
        std::vector<std::string> names;
        for (const Shape& x : shapes) names.push_back(fmt_shape(x));
        fail("Tensor.%s: cannot broadcast shapes %s together", op, absl::StrJoin(names, " and "));
      }
      out[i] = d;
    }
  }
  return out;
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  if (this->shape() == shape) return *this;
  Shape padded(shape.size() - this->shape().size(), 1);
  padded.insert(padded.end(), this->shape().begin(), this->shape().end());
  return reshape(padded).expand(shape);
}

Tensor Tensor::scalar_like(ConstValue x) const {
  DType d =
      dtypes::is_float(dtype()) || (dtypes::is_int(dtype()) && x.kind == ConstValue::Kind::Int)
          ? dtype()
          : x.dtype();
  return full({}, x, d);
}

Tensor Tensor::binop(const char* name, Ops op, const Tensor& x) const {
  DType d = least_upper_dtype({dtype(), x.dtype()});
  Shape s = broadcast_shape(name, {shape(), x.shape()});
  Tensor a = cast(d).broadcast_to(s), b = x.cast(d).broadcast_to(s);
  DType out = group::is_comparison(op) ? dtypes::bool_ : d;
  if (dtypes::is_bool(d) && op == Ops::ADD) op = Ops::OR;  // bool + bool is logical or
  if (dtypes::is_bool(d) && op == Ops::MUL) op = Ops::AND;
  return a.apply(op, out, {b});
}

Tensor Tensor::add(const Tensor& x) const { return binop("add", Ops::ADD, x); }
Tensor Tensor::sub(const Tensor& x) const {
  broadcast_shape("sub", {shape(), x.shape()});
  return add(x.neg());
}
Tensor Tensor::mul(const Tensor& x) const { return binop("mul", Ops::MUL, x); }
Tensor Tensor::div(const Tensor& x) const {
  broadcast_shape("div", {shape(), x.shape()});
  DType d = least_upper_dtype({dtype(), x.dtype()});  // int32 / half is half, as in tinygrad
  return cast(d).as_float().mul(x.cast(d).as_float().reciprocal());
}
Tensor Tensor::idiv(const Tensor& x) const {
  if (!dtypes::is_int(least_upper_dtype({dtype(), x.dtype()})))
    fail("Tensor.idiv: integer division needs integer dtypes, got %s and %s", dtype().name(),
         x.dtype().name());
  return binop("idiv", Ops::IDIV, x);
}
Tensor Tensor::mod(const Tensor& x) const {
  broadcast_shape("mod", {shape(), x.shape()});
  DType d = least_upper_dtype({dtype(), x.dtype()});
  if (dtypes::is_bool(d)) fail("Tensor.mod: not defined for bool tensors");
  if (dtypes::is_float(d)) {  // a - floor(a / b) * b
    Tensor a = cast(d), b = x.cast(d), q = a.div(b), t = q.trunc();
    Tensor floor = t.sub(t.gt(q).cast(t.dtype()));
    return a.sub(floor.mul(b));
  }
  Tensor r = binop("mod", Ops::MOD, x), b = x.cast(d);
  Tensor fix = r.ne(ConstValue(0)).bitwise_and(r.lt(ConstValue(0)).ne(b.lt(ConstValue(0))));
  return fix.where(r.add(b), r);
}
Tensor Tensor::maximum(const Tensor& x) const { return binop("maximum", Ops::MAX, x); }
Tensor Tensor::minimum(const Tensor& x) const {
  broadcast_shape("minimum", {shape(), x.shape()});
  DType d = least_upper_dtype({dtype(), x.dtype()});
  // -max(-a, -b) keeps MAX's NaN propagation; negate in the promoted dtype (not a bool's `not`)
  if (dtypes::is_float(d)) return cast(d).neg().maximum(x.cast(d).neg()).neg();
  return lt(x).where(*this, x).cast(d);
}
Tensor Tensor::lt(const Tensor& x) const { return binop("lt", Ops::CMPLT, x); }
Tensor Tensor::gt(const Tensor& x) const { return x.binop("gt", Ops::CMPLT, *this); }
Tensor Tensor::le(const Tensor& x) const {
  broadcast_shape("le", {shape(), x.shape()});
  return gt(x).logical_not();
}
Tensor Tensor::ge(const Tensor& x) const {
  broadcast_shape("ge", {shape(), x.shape()});
  return lt(x).logical_not();
}
Tensor Tensor::eq(const Tensor& x) const { return binop("eq", Ops::CMPEQ, x); }
Tensor Tensor::ne(const Tensor& x) const { return binop("ne", Ops::CMPNE, x); }
// Bitwise ops are for integers and bools only.
static void check_bitwise(const char* name, DType a, DType b) {
  for (DType d : {a, b})
    if (dtypes::is_float(d))
      fail("Tensor.%s: %s is not supported (integers and bool only)", name, d.name());
}
Tensor Tensor::bitwise_and(const Tensor& x) const {
  check_bitwise("bitwise_and", dtype(), x.dtype());
  return binop("bitwise_and", Ops::AND, x);
}
Tensor Tensor::bitwise_or(const Tensor& x) const {
  check_bitwise("bitwise_or", dtype(), x.dtype());
  return binop("bitwise_or", Ops::OR, x);
}
Tensor Tensor::bitwise_xor(const Tensor& x) const {
  check_bitwise("bitwise_xor", dtype(), x.dtype());
  return binop("bitwise_xor", Ops::XOR, x);
}

Tensor Tensor::add(ConstValue x, bool reverse) const {
  return reverse ? scalar_like(x).add(*this) : add(scalar_like(x));
}
Tensor Tensor::sub(ConstValue x, bool reverse) const {
  return reverse ? scalar_like(x).sub(*this) : sub(scalar_like(x));
}
Tensor Tensor::mul(ConstValue x, bool reverse) const {
  return reverse ? scalar_like(x).mul(*this) : mul(scalar_like(x));
}
Tensor Tensor::div(ConstValue x, bool reverse) const {
  return reverse ? scalar_like(x).div(*this) : div(scalar_like(x));
}
Tensor Tensor::maximum(ConstValue x) const { return maximum(scalar_like(x)); }
Tensor Tensor::minimum(ConstValue x) const { return minimum(scalar_like(x)); }
Tensor Tensor::lt(ConstValue x) const { return lt(scalar_like(x)); }
Tensor Tensor::gt(ConstValue x) const { return gt(scalar_like(x)); }
Tensor Tensor::le(ConstValue x) const { return le(scalar_like(x)); }
Tensor Tensor::ge(ConstValue x) const { return ge(scalar_like(x)); }
Tensor Tensor::eq(ConstValue x) const { return eq(scalar_like(x)); }
Tensor Tensor::ne(ConstValue x) const { return ne(scalar_like(x)); }

Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  DType d = least_upper_dtype({x.dtype(), y.dtype()});
  Shape s = broadcast_shape("where", {shape(), x.shape(), y.shape()});
  Tensor c = cast(dtypes::bool_).broadcast_to(s);
  return c.apply(Ops::WHERE, d, {x.cast(d).broadcast_to(s), y.cast(d).broadcast_to(s)});
}
Tensor Tensor::dot4(const Tensor& x, const Tensor& acc) const {
  for (const Tensor* t : {this, &x, &acc})
    if (t->dtype() != dtypes::int32)
      fail("Tensor.dot4: its operands are int32 words of 4 bytes, not %s", t->dtype().name());
  Shape s = broadcast_shape("dot4", {shape(), x.shape(), acc.shape()});
  return broadcast_to(s).apply(Ops::DOT4, dtypes::int32, {x.broadcast_to(s), acc.broadcast_to(s)});
}
Tensor Tensor::where(ConstValue x, const Tensor& y) const { return where(y.scalar_like(x), y); }
Tensor Tensor::where(const Tensor& x, ConstValue y) const { return where(x, x.scalar_like(y)); }
Tensor Tensor::where(ConstValue x, ConstValue y) const {
  Tensor a = full({}, x);
  return where(a, a.scalar_like(y));
}

}  // namespace tc
