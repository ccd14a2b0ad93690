// Scans: cumsum, cummax and cummin (with where each extreme was taken), cumprod and logcumsumexp,
// each a reduce over a (..., n, n) view of the prefixes: O(n^2) per line, fused, no new kernels.
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::inverse;
using detail::lowest;
using detail::resolve_dim;
using detail::split_last;

namespace {

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

// For x of shape (..., n): (..., n, n) whose [..., i, j] is x[..., j] for j <= i, else `fill`.
Tensor prefix_windows(const Tensor& x, ConstValue fill) {
  int64_t n = x.shape().back();
  Tensor i = detail::binary_iota(n, dtypes::int32);
  Tensor mask = i.reshape({n, 1}).ge(i.reshape({1, n}));  // j <= i
  Shape s = split_last(x.shape(), {n, n});
  return mask.where(x.unsqueeze(-2).expand(s), Tensor::full({}, fill, x.dtype()));
}

}  // namespace

Tensor Tensor::cumsum(int axis) const {
  if (ndim() == 0) return on_scalar("cumsum", axis, [](const Tensor& v) { return v.cumsum(0); });
  int a = resolve_dim("cumsum", *this, axis);
  if (numel() == 0) return cast(sum_acc_dtype(dtype()));
  Tensor x = transpose(a, -1);
  return scan_windows(x, 0).sum(-2).transpose(a, -1);
}

Tensor Tensor::cummax(int axis) const {
  if (ndim() == 0) return on_scalar("cummax", axis, [](const Tensor& v) { return v.cummax(0); });
  int a = resolve_dim("cummax", *this, axis);
  if (numel() == 0) return *this;
  Tensor x = transpose(a, -1);
  return scan_windows(x, lowest(dtype())).max(-2).transpose(a, -1);
}

std::pair<Tensor, Tensor> Tensor::cummin(int axis) const {
  int a = resolve_dim("cummin", *this, axis);
  if (ndim() == 0) {
    auto [values, indices] = reshape({1}).cummin(0);
    return {values.reshape({}), indices.reshape({})};
  }
  if (numel() == 0) return {*this, zeros(shape(), dtypes::int32)};
  // the running max of the order-reversing inverse, inverted back
  Tensor x = transpose(a, -1), inv = inverse(x);
  Tensor values = inverse(scan_windows(inv, lowest(inv.dtype())).max(-2));
  return {values.transpose(a, -1), scan_indices(x, values).transpose(a, -1)};
}

std::pair<Tensor, Tensor> Tensor::cummax_with_indices(int axis) const {
  Tensor values = cummax(axis);
  if (ndim() == 0) return {values, zeros({}, dtypes::int32)};
  int a = resolve_dim("cummax", *this, axis);
  if (numel() == 0) return {values, zeros(shape(), dtypes::int32)};
  Tensor indices = scan_indices(transpose(a, -1), values.transpose(a, -1).detach());
  return {values, indices.transpose(a, -1)};
}

Tensor Tensor::cumprod(int axis) const {
  int a = resolve_dim("cumprod", *this, axis);
  if (ndim() == 0 || numel() == 0) return *this;
  return prefix_windows(transpose(a, -1), 1).prod(-1).transpose(a, -1);
}

Tensor Tensor::logcumsumexp(int axis) const {
  int a = resolve_dim("logcumsumexp", *this, axis);
  if (ndim() == 0) return cast(least_upper_float(dtype()));
  Tensor x = transpose(a, -1).cast(least_upper_float(dtype()));
  if (numel() == 0) return x.transpose(a, -1);
  // log(sum_{j<=i} exp(x_j - m_i)) + m_i with m the running max (a constant for the gradient,
  // which does not depend on it); an infinite m is replaced by 0 so that -inf stays -inf
  Tensor m = x.cummax(-1).detach();
  m = m.isfinite().where(m, ConstValue(0.0));
  Tensor shifted = prefix_windows(x, -std::numeric_limits<double>::infinity()).sub(m.unsqueeze(-1));
  return shifted.exp().sum(-1).log().add(m).transpose(a, -1);
}

}  // namespace tc
