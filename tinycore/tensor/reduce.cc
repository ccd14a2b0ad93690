// Reductions: sum and max as REDUCE_AXIS nodes, and min, mean, var/std, any/all, logsumexp,
// argmax/argmin and prod composed from them, no new UOps (formulas of the seeds' tinygrad).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::Dims;
using detail::inverse;
using detail::resolve_dim;

std::vector<int64_t> Tensor::reduce_axes(const char* name, const Axes& axis) const {
  std::vector<int64_t> axes;
  if (!axis.axes) {
    for (int i = 0; i < ndim(); i++) axes.push_back(i);
  } else {
    for (int a : *axis.axes) {
      int n = resolve_dim(name, *this, a);
      if (ndim() == 0) continue;  // a scalar's one "axis", as torch
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

Tensor Tensor::min(Axes axis, bool keepdim) const {
  reduce_axes("min", axis);  // errors name min
  // inverse(max(inverse(x))): the inverse is order-reversing and cannot overflow
  return inverse(inverse(*this).max(axis, keepdim));
}

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

Tensor Tensor::logsumexp(Axes axis, bool keepdim) const {
  reduce_axes("logsumexp", axis);
  Tensor m = max(axis, true);
  Tensor s = sub(m).exp().sum(axis, keepdim);
  return s.log().add(keepdim ? m : m.reshape(s.shape()));
}

Tensor Tensor::argmax(std::optional<int> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0);
  int a = resolve_dim("argmax", *this, *axis, Dims::kExisting);
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
  if (axis) resolve_dim("argmin", *this, *axis, Dims::kExisting);
  return inverse(*this).argmax(axis, keepdim);
}

// A MUL reduction: identity 1, bool multiplies as logical and.
Tensor Tensor::prod(Axes axis, bool keepdim) const {
  return reduce("prod", Ops::MUL, axis, keepdim);
}

}  // namespace tc
