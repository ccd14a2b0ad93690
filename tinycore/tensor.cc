#include "tinycore/tensor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/engine/realize.h"
#include "tinycore/gradient.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"

namespace tc {
namespace {

int64_t shape_numel(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::string fmt_pairs(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::vector<std::string> parts;
  for (const auto& [a, b] : p) parts.push_back(absl::StrFormat("(%d, %d)", a, b));
  return "(" + absl::StrJoin(parts, ", ") + ")";
}

Tensor const_tensor(ConstValue v, DType dtype, const Shape& shape) {
  UOpRef c = v.to_uop(dtype);
  if (shape.empty()) return Tensor(c);
  Shape ones(shape.size(), 1);
  return Tensor(UOp::make(Ops::RESHAPE, dtype, {c}, ones)).expand(shape);
}

}  // namespace

UOpRef ConstValue::to_uop(DType dtype) const {
  if (kind != Kind::Float && !dtypes::is_float(dtype)) return UOp::const_int(dtype, ivalue);
  return UOp::const_(dtype, value);
}

DType ConstValue::dtype() const {
  if (kind == Kind::Bool) return dtypes::bool_;
  return kind == Kind::Int ? dtypes::default_int : dtypes::default_float;
}

namespace detail {
Shape checked_data_shape(const char* op, size_t length, const std::optional<Shape>& shape) {
  Shape s = shape ? *shape : Shape{static_cast<int64_t>(length)};
  for (int64_t d : s)
    if (d < 0) fail("%s: shape %s has a negative dimension", op, fmt_shape(s));
  if (shape_numel(s) != static_cast<int64_t>(length))
    fail("%s: %d values do not fill shape %s (%d elements)", op, length, fmt_shape(s),
         shape_numel(s));
  return s;
}
}  // namespace detail

// ---------------------------------------------------------------- creation

Tensor::Tensor(const std::vector<float>& data, std::optional<Shape> shape)
    : Tensor(from_vector(data, std::move(shape))) {}

Tensor Tensor::from_blob(const void* data, Shape shape, DType dtype, const std::string& device) {
  Tensor t = empty(shape, dtype, device);
  UOpRef buf = t.uop()->op == Ops::BUFFER ? t.uop() : t.uop()->src[0];
  buf->buffer->copyin(data, buf->buffer->nbytes());
  return t;
}

Tensor Tensor::empty(Shape shape, DType dtype, const std::string& device) {
  detail::checked_data_shape("Tensor.empty",
                             static_cast<size_t>(std::max<int64_t>(shape_numel(shape), 0)), shape);
  UOpRef buf = schedule::new_buffer(device.empty() ? runtime::default_device() : device, dtype,
                                    shape_numel(shape));
  Tensor t(shape.size() == 1 ? buf : UOp::make(Ops::RESHAPE, dtype, {buf}, shape));
  t.impl_->owns_buffer = true;  // a new buffer no other tensor can reach
  return t;
}

Tensor Tensor::full(Shape shape, ConstValue value, std::optional<DType> dtype) {
  for (int64_t d : shape)
    if (d < 0) fail("Tensor.full: shape %s has a negative dimension", fmt_shape(shape));
  return const_tensor(value, dtype ? *dtype : value.dtype(), shape);
}
Tensor Tensor::zeros(Shape shape, DType dtype) { return full(std::move(shape), 0.0, dtype); }
Tensor Tensor::ones(Shape shape, DType dtype) { return full(std::move(shape), 1.0, dtype); }

Tensor Tensor::arange(double stop) { return arange(0, stop, 1); }

Tensor Tensor::arange(double start, double stop, double step, std::optional<DType> dtype) {
  if (step == 0) fail("Tensor.arange: step must not be 0 (start=%g, stop=%g)", start, stop);
  bool all_int = start == std::trunc(start) && stop == std::trunc(stop) && step == std::trunc(step);
  DType dt = dtype ? *dtype : all_int ? dtypes::default_int : dtypes::default_float;
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  if (n == 0) return full({0}, 0, dt);
  // a running count of ones (cumsum: movement ops and one reduce, no hand-written kernel)
  Tensor idx = ones({n}, dtypes::int32).cumsum(0).sub(ConstValue(1));  // 0 .. n-1
  if (dtypes::is_float(dt)) return idx.cast(dt).mul(ConstValue(step)).add(ConstValue(start));
  auto as_int = [](double v) { return ConstValue(static_cast<long long>(v)); };
  return idx.cast(dt).mul(as_int(step)).add(as_int(start));
}

Tensor Tensor::eye(int64_t n, std::optional<int64_t> m, DType dtype) {
  int64_t cols = m ? *m : n;
  if (n < 0 || cols < 0) fail("Tensor.eye: sizes must be non-negative, got n=%d m=%d", n, cols);
  int64_t k = std::max(n, cols);
  if (k == 0) return zeros({n, cols}, dtype);
  // ones(k, 1) padded to (k, k+1) and read back as (k, k): the ones land on the diagonal
  Tensor e =
      ones({k, 1}, dtype).pad({{0, 0}, {0, k}}).flatten().shrink({{0, k * k}}).reshape({k, k});
  return e.shrink({{0, n}, {0, cols}});
}

int64_t Tensor::numel() const { return shape_numel(shape()); }

std::string Tensor::device() const {
  for (const UOp* u : uop()->toposort())
    if (u->op == Ops::BUFFER) return u->buffer->device().name();
  return runtime::default_device();
}

// ---------------------------------------------------------------- elementwise

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
Tensor Tensor::relu() const { return gt(ConstValue(0)).where(*this, ConstValue(0)); }
Tensor Tensor::abs() const {
  if (dtypes::is_unsigned(dtype()) || dtypes::is_bool(dtype())) return *this;
  // +-0 gives the constant 0, so the gradient is sign(x) (0 at 0, as torch); NaN stays NaN
  return lt(ConstValue(0)).where(neg(), eq(ConstValue(0)).where(ConstValue(0), *this));
}
namespace {
// s * (1 - s) from sigmoid's value s: derived through 1 / (1 + exp(-x)) it is inf * 0 = NaN
// where exp overflows (|x| > 88 in float32)
std::vector<UOpRef> sigmoid_gradient(const UOpRef& ret, const UOpRef& grad) {
  Tensor s(ret);
  return {Tensor(grad).mul(s.mul(s.sub(ConstValue(1), true))).uop()};
}
}  // namespace
Tensor Tensor::sigmoid() const {
  static const int64_t rule = register_gradient_rule(sigmoid_gradient);
  Tensor x = as_float();
  Tensor value = x.detach().neg().exp().add(ConstValue(1)).reciprocal();
  return Tensor(with_gradient_rule(value.uop(), {x.uop()}, rule));
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
Tensor Tensor::where(ConstValue x, const Tensor& y) const { return where(y.scalar_like(x), y); }
Tensor Tensor::where(const Tensor& x, ConstValue y) const { return where(x, x.scalar_like(y)); }
Tensor Tensor::where(ConstValue x, ConstValue y) const {
  Tensor a = full({}, x);
  return where(a, a.scalar_like(y));
}

// ---------------------------------------------------------------- movement

int Tensor::normalize_axis(const char* name, int axis) const {
  int nd = ndim();
  int a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd)
    fail("Tensor.%s: axis %d is out of range for a tensor of shape %s", name, axis,
         fmt_shape(shape()));
  return a;
}

Tensor Tensor::on_scalar(const char* name, int axis,
                         const std::function<Tensor(const Tensor&)>& f) const {
  if (axis != 0 && axis != -1)
    fail("Tensor.%s: axis %d is out of range for a tensor of shape ()", name, axis);
  return f(reshape({1})).reshape({});
}

Tensor Tensor::reshape(Shape new_shape) const {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < new_shape.size(); i++) {
    if (new_shape[i] == -1) {
      if (infer >= 0)
        fail("Tensor.reshape: only one dimension can be -1, got %s", fmt_shape(new_shape));
      infer = static_cast<int>(i);
    } else if (new_shape[i] < 0) {
      fail("Tensor.reshape: invalid dimension %d in %s", new_shape[i], fmt_shape(new_shape));
    } else {
      known *= new_shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      fail("Tensor.reshape: cannot reshape %s to %s", fmt_shape(shape()), fmt_shape(new_shape));
    new_shape[infer] = numel() / known;
  }
  if (shape_numel(new_shape) != numel())
    fail("Tensor.reshape: cannot reshape %s (%d elements) to %s (%d elements)", fmt_shape(shape()),
         numel(), fmt_shape(new_shape), shape_numel(new_shape));
  if (new_shape == shape()) return *this;
  const UOpRef& base =
      uop()->op == Ops::RESHAPE ? uop()->src[0] : uop();  // reshape of reshape is one
  if (base->shape() == new_shape) return view_of(base, Ops::RESHAPE, new_shape);
  return view_of(UOp::make(Ops::RESHAPE, dtype(), {base}, new_shape), Ops::RESHAPE, new_shape);
}

Tensor Tensor::permute(std::vector<int> order) const {
  if (static_cast<int>(order.size()) != ndim())
    fail("Tensor.permute: order has %d axes, the tensor of shape %s has %d", order.size(),
         fmt_shape(shape()), ndim());
  std::vector<int64_t> perm;
  std::vector<bool> seen(ndim(), false);
  for (int a : order) {
    int n = normalize_axis("permute", a);
    if (seen[n])
      fail("Tensor.permute: axis %d appears twice in the order for a tensor of shape %s", a,
           fmt_shape(shape()));
    seen[n] = true;
    perm.push_back(n);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); i++) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  return view_of(UOp::make(Ops::PERMUTE, dtype(), {uop()}, perm), Ops::PERMUTE, perm);
}

Tensor Tensor::expand(Shape new_shape) const {
  if (new_shape.size() < shape().size())
    fail("Tensor.expand: cannot expand %s to fewer dimensions %s", fmt_shape(shape()),
         fmt_shape(new_shape));
  size_t lead = new_shape.size() - shape().size();
  Shape padded(lead, 1);
  padded.insert(padded.end(), shape().begin(), shape().end());
  for (size_t i = 0; i < new_shape.size(); i++) {
    if (new_shape[i] == -1) {
      if (i < lead) fail("Tensor.expand: -1 is not allowed for the new leading dimension %d", i);
      new_shape[i] = padded[i];
    }
    if (padded[i] != new_shape[i] && padded[i] != 1)
      fail("Tensor.expand: cannot expand %s to %s (dimension %d is %d, not 1)", fmt_shape(shape()),
           fmt_shape(new_shape), i, padded[i]);
  }
  Tensor t = padded == shape() ? *this : reshape(padded);
  if (new_shape == padded) return t;
  return t.view_of(UOp::make(Ops::EXPAND, dtype(), {t.uop()}, new_shape), Ops::EXPAND, new_shape);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, ConstValue value) const {
  if (static_cast<int>(padding.size()) != ndim())
    fail("Tensor.pad: padding %s has %d entries for a tensor of shape %s", fmt_pairs(padding),
         padding.size(), fmt_shape(shape()));
  // negative padding removes elements: shrink first, then pad with the rest
  std::vector<std::pair<int64_t, int64_t>> keep, grow;
  std::vector<int64_t> arg;
  bool any_shrink = false, any_pad = false;
  for (int i = 0; i < ndim(); i++) {
    auto [b, e] = padding[i];
    int64_t kb = std::max<int64_t>(0, -b), ke = shape()[i] - std::max<int64_t>(0, -e);
    if (kb > ke)
      fail("Tensor.pad: padding %s removes more than dimension %d (size %d) of shape %s",
           fmt_pairs(padding), i, shape()[i], fmt_shape(shape()));
    keep.push_back({kb, ke});
    any_shrink |= b < 0 || e < 0;
    arg.push_back(std::max<int64_t>(0, b));
    arg.push_back(std::max<int64_t>(0, e));
    any_pad |= b > 0 || e > 0;
  }
  Tensor t = any_shrink ? shrink(keep) : *this;
  if (!any_pad) return t;
  if (t.numel() == 0) {  // only fill: no kernel reads an empty buffer (its loads have no address)
    Shape out = t.shape();
    for (size_t i = 0; i < out.size(); i++) out[i] += arg[2 * i] + arg[2 * i + 1];
    return full(out, value, dtype());
  }
  Tensor padded = t.view_of(UOp::make(Ops::PAD, dtype(), {t.uop()}, arg), Ops::PAD, arg);
  if (value.value == 0) return padded;
  // a non-zero fill: where(inside, x, value), with "inside" as a padded ones mask
  Tensor mask(UOp::make(Ops::PAD, dtypes::bool_, {full(t.shape(), true).uop()}, arg));
  return mask.where(padded, padded.scalar_like(value));
}

Tensor Tensor::shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const {
  if (static_cast<int>(ranges.size()) != ndim())
    fail("Tensor.shrink: %d ranges %s for a tensor of shape %s", ranges.size(), fmt_pairs(ranges),
         fmt_shape(shape()));
  std::vector<int64_t> arg;
  bool identity = true;
  for (int i = 0; i < ndim(); i++) {
    auto [b, e] = ranges[i];
    if (b < 0 || b > e || e > shape()[i])
      fail("Tensor.shrink: range (%d, %d) is out of bounds for dimension %d of shape %s", b, e, i,
           fmt_shape(shape()));
    identity &= b == 0 && e == shape()[i];
    arg.push_back(b);
    arg.push_back(e);
  }
  if (identity) return *this;
  return view_of(UOp::make(Ops::SHRINK, dtype(), {uop()}, arg), Ops::SHRINK, arg);
}

Tensor Tensor::flip(std::vector<int> axes) const {
  std::vector<int64_t> arg;
  for (int a : axes) {
    int n = normalize_axis("flip", a);
    if (std::find(arg.begin(), arg.end(), n) != arg.end())
      fail("Tensor.flip: axis %d appears twice", a);
    if (shape()[n] > 1) arg.push_back(n);
  }
  if (arg.empty()) return *this;
  std::sort(arg.begin(), arg.end());
  return view_of(UOp::make(Ops::FLIP, dtype(), {uop()}, arg), Ops::FLIP, arg);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  std::vector<int> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[normalize_axis("transpose", dim0)], order[normalize_axis("transpose", dim1)]);
  return permute(order);
}

Tensor Tensor::flatten(int start_dim, int end_dim) const {
  if (ndim() == 0) return reshape({1});
  int s = normalize_axis("flatten", start_dim), e = normalize_axis("flatten", end_dim);
  if (s > e) fail("Tensor.flatten: start_dim %d is after end_dim %d", start_dim, end_dim);
  Shape out(shape().begin(), shape().begin() + s);
  out.push_back(shape_numel(Shape(shape().begin() + s, shape().begin() + e + 1)));
  out.insert(out.end(), shape().begin() + e + 1, shape().end());
  return reshape(out);
}

Tensor Tensor::contiguous() const { return apply(Ops::CONTIGUOUS, dtype()); }

// ---------------------------------------------------------------- reductions

std::vector<int64_t> Tensor::reduce_axes(const char* name, const Axes& axis) const {
  std::vector<int64_t> axes;
  if (!axis.axes) {
    for (int i = 0; i < ndim(); i++) axes.push_back(i);
  } else {
    for (int a : *axis.axes) {
      if (ndim() == 0 && (a == 0 || a == -1)) continue;  // a scalar's one "axis", as torch
      int n = normalize_axis(name, a);
      if (std::find(axes.begin(), axes.end(), n) == axes.end()) axes.push_back(n);
    }
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

Tensor Tensor::reduce(const char* name, Ops op, const Axes& axis, bool keepdim) const {
  std::vector<int64_t> axes = reduce_axes(name, axis);
  if (axes.empty()) return *this;
  Shape kept = shape(), out;
  for (int i = 0; i < ndim(); i++) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (reduced) kept[i] = 1;
    if (!reduced) out.push_back(shape()[i]);
  }
  if (numel() == 0 && shape_numel(kept) > 0) {
    // over no element: the identity (as tinygrad), and no kernel reads the empty buffer
    return full(keepdim ? kept : out, reduce_identity_value(op, dtype()), dtype());
  }
  std::vector<int64_t> arg = {static_cast<int64_t>(op)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  Tensor r(UOp::make(Ops::REDUCE_AXIS, dtype(), {uop()}, arg));
  return keepdim ? r : r.reshape(out);
}

Tensor Tensor::sum(Axes axis, bool keepdim) const {
  Tensor r = cast(sum_acc_dtype(dtype())).reduce("sum", Ops::ADD, axis, keepdim);
  bool small = dtype() == dtypes::float16 || dtype() == dtypes::bfloat16;
  return small ? r.cast(dtype()) : r;
}
Tensor Tensor::max(Axes axis, bool keepdim) const { return reduce("max", Ops::MAX, axis, keepdim); }

// ---------------------------------------------------------------- autograd

namespace {
thread_local bool no_grad_active = false;
}  // namespace

NoGrad::NoGrad() : prev_(no_grad_active) { no_grad_active = true; }
NoGrad::~NoGrad() { no_grad_active = prev_; }
bool Tensor::no_grad() { return no_grad_active; }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  // Equal constants are one interned node (zeros(n) made twice is one graph): a constant that
  // becomes a parameter gets a buffer of its own first, so its gradient is its own.
  const auto& nodes = uop()->toposort();
  bool constant = std::none_of(nodes.begin(), nodes.end(), [](const UOp* u) {
    return u->op == Ops::BUFFER || u->op == Ops::DEFINE_VAR;
  });
  if (requires_grad && constant) {
    Tensor own = empty(shape(), dtype());
    own.assign(*this).realize();
    hold_own(own);
  }
  impl_->requires_grad = requires_grad;
  return *this;
}
bool Tensor::requires_grad() const { return impl_->requires_grad.value_or(false); }
std::optional<bool> Tensor::requires_grad_state() const { return impl_->requires_grad; }
Tensor& Tensor::requires_grad_maybe_() {
  impl_->requires_grad = std::nullopt;
  return *this;
}

std::optional<Tensor> Tensor::grad() const {
  if (!impl_->grad) return std::nullopt;
  return Tensor(impl_->grad);
}
void Tensor::set_grad(std::optional<Tensor> grad) {
  if (grad && grad->shape() != shape())
    fail("Tensor.set_grad: a grad of shape %s for a tensor of shape %s", fmt_shape(grad->shape()),
         fmt_shape(shape()));
  impl_->grad = grad ? grad->impl_ : nullptr;
}

Tensor Tensor::detach() const { return view_of(tc::detach(uop()), Ops::DETACH, {}); }

std::vector<UOpRef> Tensor::grad_nodes() const {
  auto strip = [](UOpRef u) {
    while (u->op == Ops::RESHAPE) u = u->src[0];
    return u;
  };
  std::vector<UOpRef> out = {strip(uop())};
  for (const std::weak_ptr<const UOp>& w : impl_->before_realize)
    if (UOpRef u = w.lock()) out.push_back(strip(u));
  return out;
}

std::vector<Tensor> Tensor::gradient_of(const UOpRef& root, const UOpRef& root_grad,
                                        const std::vector<Tensor>& targets) {
  std::vector<std::vector<UOpRef>> nodes;
  std::vector<UOpRef> all;
  for (const Tensor& t : targets) {
    nodes.push_back(t.grad_nodes());
    all.insert(all.end(), nodes.back().begin(), nodes.back().end());
  }
  GradientMap grads = compute_gradient(root, root_grad, all);
  std::vector<Tensor> out;
  for (size_t i = 0; i < targets.size(); i++) {
    std::optional<Tensor> sum;
    for (const UOpRef& n : nodes[i]) {
      auto it = grads.find(n.get());
      if (it == grads.end()) continue;
      Tensor g = Tensor(it->second).reshape(targets[i].shape());
      sum = sum ? sum->add(g) : g;
    }
    out.push_back(sum ? *sum : zeros(targets[i].shape(), targets[i].dtype()));
  }
  return out;
}

namespace {
// The gradient flowing into `t` for gradient()/backward(): 1 for a scalar, else `given`.
UOpRef root_gradient(const char* name, const Tensor& t, const std::optional<Tensor>& given) {
  if (!dtypes::is_float(t.dtype()))
    fail("Tensor.%s: only float Tensors have gradient, this tensor is %s", name, t.dtype().name());
  if (!given) {
    if (t.ndim() != 0)
      fail(
          "Tensor.%s: when no gradient is provided, %s must be called on a scalar tensor, got "
          "shape "
          "%s",
          name, name, fmt_shape(t.shape()));
    return UOp::const_(t.dtype(), 1.0);
  }
  if (given->shape() != t.shape())
    fail("Tensor.%s: gradient of shape %s does not match the tensor's shape %s", name,
         fmt_shape(given->shape()), fmt_shape(t.shape()));
  return given->cast(t.dtype()).uop();
}
}  // namespace

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets,
                                     std::optional<Tensor> gradient) const {
  UOpRef g = root_gradient("gradient", *this, gradient);
  for (size_t i = 0; i < targets.size(); i++)
    if (!dtypes::is_float(targets[i].dtype()))
      fail("Tensor.gradient: only float Tensors have gradient, target %d is %s", i,
           targets[i].dtype().name());
  return gradient_of(uop(), g, targets);
}

Tensor& Tensor::backward(std::optional<Tensor> gradient) {
  UOpRef g = root_gradient("backward", *this, gradient);
  if (no_grad()) return *this;

  // the parameters this graph depends on (backward fills a grad for each, zeros when the
  // dependence is only through something without a gradient, as tinygrad)
  absl::flat_hash_set<const UOp*> in_graph;
  for (const UOp* u : uop()->toposort()) in_graph.insert(u);
  std::vector<std::shared_ptr<Impl>> params;
  std::vector<Tensor> targets;
  for (std::shared_ptr<Impl>& p :
       live_tensors([](const Impl& p) { return p.requires_grad == false; })) {
    Tensor t(p);
    if (!dtypes::is_float(t.dtype())) continue;
    std::vector<UOpRef> nodes = t.grad_nodes();
    // a bare CONST is shared by every equal constant in the graph: no grad (as tinygrad)
    if (nodes[0]->op == Ops::CONST) continue;
    bool used = false;
    for (const UOpRef& n : nodes) used = used || in_graph.contains(n.get());
    if (!used) continue;
    targets.push_back(t);
    params.push_back(std::move(p));
  }
  if (params.empty()) return *this;
  std::vector<Tensor> grads = gradient_of(uop(), g, targets);
  for (size_t i = 0; i < params.size(); i++) {
    Impl& p = *params[i];
    if (!p.grad) {
      p.grad = grads[i].impl_;
    } else {  // accumulate in place, so every handle to the grad sees the sum
      p.grad->uop = Tensor(p.grad).add(grads[i]).uop();
    }
  }
  return *this;
}

void Tensor::Impl::set_uop(UOpRef u) {
  if (u == uop) return;
  std::erase_if(before_realize, [](const std::weak_ptr<const UOp>& w) { return w.expired(); });
  // the reshape-free node: a graph built from a reshape of this tensor holds that, not `uop`
  UOpRef base = uop;
  while (base->op == Ops::RESHAPE) base = base->src[0];
  before_realize.push_back(base);
  uop = std::move(u);
}

// ---------------------------------------------------------------- realize

Tensor& Tensor::realize() {
  realize_all({*this});
  return *this;
}

void Tensor::realize_each(const std::vector<Tensor>& tensors) {
  std::vector<UOpRef> roots, targets;
  for (const Tensor& t : tensors) {
    roots.push_back(t.uop());
    targets.push_back(t.impl_->assign_target);
  }
  std::vector<UOpRef> views = engine::realize(roots, targets);
  for (size_t i = 0; i < tensors.size(); i++) {
    Impl& t = *tensors[i].impl_;
    bool assigned = t.assign_target != nullptr;
    t.set_uop(views[i]);
    t.assign_target = nullptr;
    // its views read the graph it had: that read its buffer's old contents
    if (assigned) Tensor(tensors[i]).update_views();
  }
}

void realize_all(const std::vector<Tensor>& tensors) {
  // A view of a tensor whose write is pending realizes that tensor: the write lands in its
  // buffer, and the view then reads that buffer (a copy of it only where it is no plain reshape).
  std::vector<Tensor> to_realize;
  absl::flat_hash_set<const Tensor::Impl*> seen;
  std::vector<Tensor> views;
  for (const Tensor& t : tensors) {
    std::shared_ptr<Tensor::Impl> base = t.impl_->view_base.lock();
    Tensor r = base && base->assign_target ? Tensor(base) : t;
    if (r.impl_ != t.impl_) views.push_back(t);
    if (seen.insert(r.impl_.get()).second) to_realize.push_back(r);
  }
  Tensor::realize_each(to_realize);
  std::vector<Tensor> copies;
  for (const Tensor& v : views)
    if (!schedule::is_contiguous_buffer(v.uop()) && seen.insert(v.impl_.get()).second)
      copies.push_back(v);
  if (!copies.empty()) Tensor::realize_each(copies);
}

// The buffer holding the realized contents (realized now if needed), for a host read.
std::shared_ptr<runtime::Buffer> Tensor::realized_buffer(const char* reader) const {
  if (engine::LaunchCapture::active())
    jit_fail(
        "Tensor.%s inside a TinyJit function: the value read now would not change on replay; "
        "return the tensor from the function instead",
        reader);
  UOpRef view = engine::realize({uop()})[0];
  const UOpRef& buf = view->op == Ops::BUFFER ? view : view->src[0];
  return buf->buffer;
}

std::vector<uint8_t> Tensor::bytes() const {
  std::shared_ptr<runtime::Buffer> b = realized_buffer("data/item/tolist");
  std::vector<uint8_t> out(b->nbytes());
  b->copyout(out.data(), out.size());
  return out;
}

std::shared_ptr<const void> Tensor::host_data() const {
  std::shared_ptr<runtime::Buffer> b = realized_buffer("host_data");
  if (b->device().name() != "CPU") return nullptr;
  return std::shared_ptr<const void>(b, b->ensure_allocated());
}

}  // namespace tc
