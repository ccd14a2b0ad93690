// Creation: tensors from host data and new buffers, constants (full, zeros, arange, eye,
// linspace, *_like) as a CONST expanded to the shape, with no buffer of their own.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

namespace {

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

Tensor::Tensor(const std::vector<float>& data, std::optional<Shape> shape)
    : Tensor(from_vector(data, std::move(shape))) {}

Tensor Tensor::from_blob(const void* data, Shape shape, DType dtype, const std::string& device,
                         std::shared_ptr<const void> owner) {
  Tensor t = empty(shape, dtype, device);
  runtime::Buffer& b = *(t.uop()->op == Ops::BUFFER ? t.uop() : t.uop()->src[0])->buffer;
  if (!owner || !b.adopt(const_cast<void*>(data), std::move(owner))) b.copyin(data, b.nbytes());
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
  Tensor idx(UOp::make(Ops::IOTA, dtypes::int32, {}, std::vector<int64_t>{n}));  // 0 .. n-1
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

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype) {
  if (steps < 0) fail("Tensor.linspace: steps must be non-negative, got %d", steps);
  if (dtypes::is_bool(dtype)) fail("Tensor.linspace: bool dtype is not supported");
  if (steps == 1) return full({1}, start, dtype);
  double step = (stop - start) / static_cast<double>(steps - 1);
  Tensor idx = arange(0, static_cast<double>(steps), 1, dtypes::int32);
  return idx.mul(ConstValue(step)).add(ConstValue(start)).cast(dtype);
}

Tensor Tensor::zeros_like(const Tensor& t, std::optional<DType> dtype) {
  return full(t.shape(), 0, dtype ? *dtype : t.dtype());
}
Tensor Tensor::ones_like(const Tensor& t, std::optional<DType> dtype) {
  return full(t.shape(), 1, dtype ? *dtype : t.dtype());
}
Tensor Tensor::full_like(const Tensor& t, ConstValue value, std::optional<DType> dtype) {
  return full(t.shape(), value, dtype ? *dtype : t.dtype());
}
Tensor Tensor::empty_like(const Tensor& t, std::optional<DType> dtype) {
  return empty(t.shape(), dtype ? *dtype : t.dtype());
}

Tensor Tensor::const_like(ConstValue value) const { return full(shape(), value, dtype()); }

}  // namespace tc
