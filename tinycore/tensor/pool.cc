// Pools: tinygrad's window view (pad + repeat + shrink + reshape + permute: a view, never a copy),
// which the convolutions share, and the average and max pools and max unpooling built on it;
// the strided views that gradients of strided windows scatter through (every, spread, unspread).
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tinycore/gradient.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::every;
using detail::fmt_ints;
using detail::full_pads;
using detail::lowest;
using detail::make_tuple;
using detail::next_index;
using detail::Pairs;
using detail::pool_view;
using detail::resolve_pads;
using detail::spread;
using detail::unspread;

namespace {

int64_t ceildiv(int64_t a, int64_t b) {  // Python's -(a // -b)
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
}

Pairs keep_lead(const Shape& s, size_t lead) {
  Pairs r;
  for (size_t i = 0; i < lead; i++) r.push_back({0, s[i]});
  return r;
}

}  // namespace

namespace detail {

// tinygrad's make_tuple: one value for every dimension, or exactly one per dimension.
std::vector<int64_t> make_tuple(const char* op, const char* what, const IntTuple& t, size_t n) {
  if (t.v.size() == 1) return std::vector<int64_t>(n, t.v[0]);
  if (t.v.size() != n)
    fail("Tensor.%s: %s %s must be an int or have %d entries (one per spatial dimension)", op, what,
         fmt_ints(t.v), n);
  return t.v;
}

// tinygrad's _resolve_pool_pads + flat_to_grouped: (before, after) per spatial dimension, first
// spatial dimension first. A flat padding of 2*n entries is in PyTorch's order, last dimension
// first: (left, right, top, bottom, ...).
Pairs resolve_pads(const char* op, const IntTuple& padding, size_t n) {
  const std::vector<int64_t>& p = padding.v;
  Pairs out;
  if (p.size() == 1) return Pairs(n, {p[0], p[0]});
  if (p.size() == n) {
    for (int64_t x : p) out.push_back({x, x});
    return out;
  }
  if (p.size() == 2 * n) {
    for (size_t d = 0; d < n; d++) out.push_back({p[2 * (n - 1 - d)], p[2 * (n - 1 - d) + 1]});
    return out;
  }
  fail("Tensor.%s: padding %s must be an int or have %d or %d entries for %d spatial dimensions",
       op, fmt_ints(p), n, 2 * n, n);
}

// tinygrad's _pool: windows of the last k.size() dimensions as a view. `op` names the caller in
// errors.
Tensor pool_view(const char* op, const Tensor& x, const std::vector<int64_t>& k_,
                 const std::vector<int64_t>& s_, const std::vector<int64_t>& d_) {
  size_t n = k_.size();
  if (static_cast<size_t>(x.ndim()) < n)
    fail("Tensor.%s: cannot pool shape %s with a %d-D kernel %s", op, fmt_shape(x.shape()), n,
         fmt_ints(k_));
  size_t lead = x.ndim() - n;
  Shape i_(x.shape().begin() + lead, x.shape().end());
  for (size_t j = 0; j < n; j++) {
    if (k_[j] <= 0 || s_[j] <= 0 || d_[j] <= 0)
      fail("Tensor.%s: kernel %s, stride %s and dilation %s must be positive", op, fmt_ints(k_),
           fmt_ints(s_), fmt_ints(d_));
    if (d_[j] * (k_[j] - 1) + 1 > i_[j])
      fail(
          "Tensor.%s: kernel %s with dilation %s is larger than the (padded) input %s of shape "
          "%s",
          op, fmt_ints(k_), fmt_ints(d_), fmt_ints(i_), fmt_shape(x.shape()));
  }
  std::vector<int64_t> o_(n);
  for (size_t j = 0; j < n; j++) o_[j] = ceildiv(i_[j] - d_[j] * (k_[j] - 1), s_[j]);
  Shape lead_shape(x.shape().begin(), x.shape().begin() + lead);
  auto with_lead = [&](const Shape& tail) {
    Shape s = lead_shape;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  auto ranges = [&](const Pairs& tail) {
    Pairs r = keep_lead(x.shape(), lead);
    r.insert(r.end(), tail.begin(), tail.end());
    return r;
  };
  // the window axes to the end: lead, o_ axes (odd positions), k_ axes (even positions) or the
  // other way around
  auto permute_windows = [&](const Tensor& t, int o_at, int k_at) {
    std::vector<int> order(lead);
    std::iota(order.begin(), order.end(), 0);
    for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j) + o_at);
    for (size_t j = 0; j < n; j++) order.push_back(static_cast<int>(lead + 2 * j) + k_at);
    return t.permute(order);
  };
  bool general = false;
  for (size_t j = 0; j < n; j++) general = general || k_[j] > s_[j] || d_[j] != 1;
  if (general) {
    // repeat so that no padding is needed, then read windows with a row stride of i*f + d
    std::vector<int64_t> f_(n), reps(lead, 1);
    for (size_t j = 0; j < n; j++) {
      f_[j] = 1 + (o_[j] * s_[j] > i_[j] - d_[j] * (k_[j] - 1) ? 1 : 0);
      reps.push_back(ceildiv(k_[j] * (i_[j] * f_[j] + d_[j]), i_[j]));
    }
    Tensor t = x.repeat(reps);
    Pairs r1, r2, r3;
    Shape s1, s2, s3;
    for (size_t j = 0; j < n; j++) {
      int64_t row = i_[j] * f_[j] + d_[j];
      r1.push_back({0, k_[j] * row});
      s1.insert(s1.end(), {k_[j], row});
      r2.insert(r2.end(), {{0, k_[j]}, {0, o_[j] * s_[j]}});
      s2.insert(s2.end(), {k_[j], o_[j], s_[j]});
      r3.insert(r3.end(), {{0, k_[j]}, {0, o_[j]}, {0, 1}});
      s3.insert(s3.end(), {k_[j], o_[j]});
    }
    t = t.shrink(ranges(r1)).reshape(with_lead(s1));
    t = t.shrink(ranges(r2)).reshape(with_lead(s2));
    t = t.shrink(ranges(r3)).reshape(with_lead(s3));
    return permute_windows(t, 1, 0);
  }
  // k <= s and no dilation: pad to o*s, view as (o, s) and keep the first k of each stride
  Pairs pad(lead, {0, 0}), r1, r2;
  Shape s1;
  for (size_t j = 0; j < n; j++) {
    pad.push_back({0, std::max<int64_t>(0, o_[j] * s_[j] - i_[j])});
    r1.push_back({0, o_[j] * s_[j]});
    s1.insert(s1.end(), {o_[j], s_[j]});
    r2.insert(r2.end(), {{0, o_[j]}, {0, k_[j]}});
  }
  Tensor t = x.pad(pad).shrink(ranges(r1)).reshape(with_lead(s1));
  t = t.shrink(ranges(r2));
  return permute_windows(t, 0, 1);
}

Tensor every(const Tensor& t, int axis, int64_t start, int64_t step) {
  int64_t len = t.shape()[axis] - start, count = (len + step - 1) / step;
  Pairs p(t.ndim(), {0, 0});
  p[axis] = {-start, count * step - len};
  Shape split = t.shape(), whole = t.shape();
  split[axis] = step, whole[axis] = count;
  split.insert(split.begin() + axis, count);
  Pairs keep = keep_lead(split, split.size());
  keep[axis + 1] = {0, 1};
  return t.pad(p).reshape(split).shrink(keep).reshape(whole);
}

Tensor spread(const Tensor& t, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& slot) {
  const size_t n = stride.size(), lead = t.ndim() - n;
  Shape s(t.shape().begin(), t.shape().begin() + lead);
  Pairs place(lead, {0, 0});
  for (size_t j = 0; j < n; j++) {
    s.insert(s.end(), {t.shape()[lead + j], 1});
    place.insert(place.end(), {{0, 0}, {slot[j], stride[j] - 1 - slot[j]}});
  }
  return t.reshape(s).pad(place);
}

bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& extent) {
  for (size_t j = index.size(); j-- > 0;) {
    if (++index[j] < extent[j]) return true;
    index[j] = 0;
  }
  return false;
}

Tensor unspread(const Tensor& t, const Pairs& keep) {
  const size_t n = t.ndim() - keep.size(), lead = keep.size() - n;
  Shape s(t.shape().begin(), t.shape().begin() + lead);
  for (size_t i = lead; i < static_cast<size_t>(t.ndim()); i += 2)
    s.push_back(t.shape()[i] * t.shape()[i + 1]);
  return t.reshape(s).shrink(keep);
}

}  // namespace detail

namespace {

// tinygrad's _apply_ceil_mode: extra padding after so that the last window that starts inside
// the input (or the before-padding) is kept.
Pairs apply_ceil_mode(const Shape& shape, Pairs pads, const std::vector<int64_t>& k_,
                      const std::vector<int64_t>& s_, const std::vector<int64_t>& d_) {
  size_t n = k_.size(), lead = shape.size() - n;
  for (size_t j = 0; j < n; j++) {
    int64_t i = shape[lead + j], k = k_[j], s = s_[j], d = d_[j];
    auto [pb, pa] = pads[j];
    int64_t o = ceildiv(i + pb + pa - (d * (k - 1) + 1), s) + 1;
    pads[j].second += s * (o - 1) + (d * (k - 1) + 1) - (i + pb + pa) -
                      std::max<int64_t>(s * (o - 1) - (pb + i - 1), 0);
  }
  return pads;
}

struct PoolArgs {
  std::vector<int64_t> k, s, d;
  Pairs pads;
  std::vector<int> axes;  // the window axes of the pooled view
};

PoolArgs pool_args(const char* op, const Tensor& x, const IntTuple& kernel_size,
                   const IntTuple& stride, const IntTuple& dilation, const IntTuple& padding) {
  PoolArgs a;
  a.k = kernel_size.is_int ? std::vector<int64_t>(2, kernel_size.v[0]) : kernel_size.v;
  size_t n = a.k.size();
  if (n == 0) fail("Tensor.%s: kernel_size must not be empty", op);
  if (static_cast<size_t>(x.ndim()) < n)
    fail("Tensor.%s: a %d-D kernel %s needs at least %d dimensions, got shape %s", op, n,
         fmt_ints(a.k), n, fmt_shape(x.shape()));
  a.s = make_tuple(op, "stride", stride.v.empty() ? kernel_size : stride, n);
  a.d = make_tuple(op, "dilation", dilation, n);
  a.pads = resolve_pads(op, padding, n);
  for (int j = 0; j < static_cast<int>(n); j++) a.axes.push_back(j - static_cast<int>(n));
  return a;
}

// The window view of x padded by `pads` (in the last dimensions) with `fill`.
Tensor padded_pool(const char* op, const Tensor& x, const Pairs& pads, const PoolArgs& a,
                   ConstValue fill = 0.0) {
  return pool_view(op, x.pad(full_pads(x, pads), fill), a.k, a.s, a.d);
}

// max_pool2d's gradient (overlapping windows). Each window's gradient, split evenly between the
// window's maxima (the MAX reduce's rule), goes back to the positions its offsets read: offset o
// of window w read position w*s + o*d, block w + o*d / s of the stride, slot o*d % s in it.
// Derived through the window view, it is a reduce over overlapping windows whose index math (div
// and mod by the window row) no kernel optimization survives: 48 ms of a ResNet-50 b8 step.
std::vector<UOpRef> max_pool_gradients(const PoolArgs& a, const UOpRef& ret, const UOpRef& grad) {
  Tensor x = Tensor(ret->src[1]).detach(), m(ret->src[0]), g(grad);
  const size_t n = a.k.size(), lead = x.ndim() - n;
  Tensor padded = x.pad(full_pads(x, a.pads), lowest(x.dtype()));
  Shape steps;
  Pairs keep = keep_lead(x.shape(), lead);
  for (size_t j = 0; j < n; j++) {
    steps.push_back(ceildiv(padded.shape()[lead + j], a.s[j]));
    keep.push_back({a.pads[j].first, a.pads[j].first + x.shape()[lead + j]});
  }
  std::vector<Tensor> hits;  // per offset: whether it read its window's maximum
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> o(n, 0);  // the offset in the window
  do {
    Tensor v = padded;
    for (size_t j = 0; j < n; j++) {
      int axis = static_cast<int>(lead + j);
      Pairs r = keep_lead(v.shape(), v.ndim());
      r[axis] = {0, m.shape()[axis]};
      v = every(v, axis, o[j] * a.d[j], a.s[j]).shrink(r);
    }
    hits.push_back(v.eq(m).cast(g.dtype()));
    offsets.push_back(o);
  } while (next_index(o, a.k));
  Tensor count = hits[0];
  for (size_t i = 1; i < hits.size(); i++) count = count + hits[i];
  Tensor share = (g / count).contiguous();
  // per slot of the stride (a phase of the output), its offsets' gradients on the windows' grid,
  // each its own kernel; then the phases interleaved. (Summed on the fine grid, every output
  // would test every offset under masks alternating from lane to lane.)
  std::map<std::vector<int64_t>, Tensor> phases;
  for (size_t i = 0; i < hits.size(); i++) {
    std::vector<int64_t> slot;
    Pairs shift(lead, {0, 0});
    for (size_t j = 0; j < n; j++) {
      int64_t at = offsets[i][j] * a.d[j] / a.s[j];
      shift.push_back({at, steps[j] - at - m.shape()[lead + j]});
      slot.push_back(offsets[i][j] * a.d[j] % a.s[j]);
    }
    Tensor back = (hits[i] * share).pad(shift);
    auto [it, fresh] = phases.try_emplace(slot, back);
    if (!fresh) it->second = it->second + back;
  }
  std::optional<Tensor> sum;
  for (const auto& [slot, phase] : phases) {
    Tensor spread_phase = spread(phase.contiguous(), a.s, slot);
    sum = sum ? *sum + spread_phase : spread_phase;
  }
  return {unspread(*sum, keep).contiguous().uop()};
}

// One gradient rule per pool's window.
int64_t max_pool_gradient_rule(const PoolArgs& a) {
  std::string key = absl::StrCat("max_pool|", absl::StrJoin(a.k, ","), "|", absl::StrJoin(a.s, ","),
                                 "|", absl::StrJoin(a.d, ","));
  for (auto [before, after] : a.pads) absl::StrAppend(&key, "|", before, ",", after);
  return gradient_rule_for(key, [&] {
    return [a](const UOpRef& ret, const UOpRef& grad) { return max_pool_gradients(a, ret, grad); };
  });
}

}  // namespace

Tensor Tensor::pool(const IntTuple& kernel, const IntTuple& stride,
                    const IntTuple& dilation) const {
  size_t n = kernel.v.size();
  if (n == 0) fail("Tensor.pool: kernel must not be empty");
  return pool_view("pool", *this, kernel.v, make_tuple("pool", "stride", stride, n),
                   make_tuple("pool", "dilation", dilation, n));
}

Tensor Tensor::avg_pool2d(const PoolOpts& o) const {
  const char* op = "avg_pool2d";
  PoolArgs a = pool_args(op, *this, o.kernel_size, o.stride, o.dilation, o.padding);
  Pairs reg = a.pads;
  if (!o.count_include_pad) {
    Pairs pads = o.ceil_mode ? apply_ceil_mode(shape(), reg, a.k, a.s, a.d) : reg;
    Tensor ones = ones_like(*this);
    return padded_pool(op, *this, pads, a)
        .sum(a.axes)
        .div(padded_pool(op, ones, pads, a).sum(a.axes));
  }
  if (!o.ceil_mode) return padded_pool(op, *this, reg, a).mean(a.axes);
  Pairs ceil = apply_ceil_mode(shape(), reg, a.k, a.s, a.d);
  Pairs extra;
  for (size_t j = 0; j < reg.size(); j++)
    extra.push_back({ceil[j].first - reg[j].first, ceil[j].second - reg[j].second});
  Tensor ones = ones_like(pad(full_pads(*this, reg)));
  return padded_pool(op, *this, ceil, a)
      .sum(a.axes)
      .div(padded_pool(op, ones, extra, a).sum(a.axes));
}

Tensor Tensor::max_pool2d(const PoolOpts& o) const {
  const char* op = "max_pool2d";
  PoolArgs a = pool_args(op, *this, o.kernel_size, o.stride, o.dilation, o.padding);
  if (o.ceil_mode) a.pads = apply_ceil_mode(shape(), a.pads, a.k, a.s, a.d);
  // windows that do not overlap get the window view's gradient, a reshape of one elementwise
  // kernel; so do large windows, whose sum over offsets would be longer than its
  bool overlap = false;
  for (size_t j = 0; j < a.k.size(); j++) overlap = overlap || a.s[j] < (a.k[j] - 1) * a.d[j] + 1;
  int64_t offsets = std::accumulate(a.k.begin(), a.k.end(), int64_t{1}, std::multiplies<>());
  if (!overlap || offsets > 25)
    return padded_pool(op, *this, a.pads, a, lowest(dtype())).max(a.axes);
  Tensor value = padded_pool(op, detach(), a.pads, a, lowest(dtype())).max(a.axes);
  return Tensor(with_gradient_rule(value.uop(), {uop()}, max_pool_gradient_rule(a)));
}

std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(const PoolOpts& o) const {
  const char* op = "max_pool2d";
  PoolArgs a = pool_args(op, *this, o.kernel_size, o.stride, o.dilation, o.padding);
  if (o.ceil_mode) a.pads = apply_ceil_mode(shape(), a.pads, a.k, a.s, a.d);
  Tensor pooled = padded_pool(op, *this, a.pads, a, lowest(dtype()));
  Tensor values = pooled.max(a.axes);
  // the first maximum of each window: the largest count-down value among the maxima
  Shape spatial(shape().end() - a.k.size(), shape().end());
  int64_t sz = shape_numel(spatial);
  Tensor idx = arange(static_cast<double>(sz), 0, -1, dtypes::int32).reshape(spatial);
  Tensor is_max = pooled.eq(pooled.max(a.axes, true));
  Tensor counts = padded_pool(op, idx, a.pads, a, lowest(dtypes::int32));
  Tensor best = is_max.mul(counts).max(a.axes);
  return {values, best.sub(ConstValue(static_cast<long long>(sz)), true).cast(dtypes::int32)};
}

Tensor Tensor::max_unpool2d(const Tensor& indices, const UnpoolOpts& o) const {
  const char* op = "max_unpool2d";
  if (ndim() < 3)
    fail("Tensor.%s: needs (batch, channels, spatial...), got shape %s", op, fmt_shape(shape()));
  if (indices.shape() != shape())
    fail("Tensor.%s: indices of shape %s do not match the input of shape %s", op,
         fmt_shape(indices.shape()), fmt_shape(shape()));
  if (!dtypes::is_int(indices.dtype()))
    fail("Tensor.%s: indices must be integers, got %s", op, indices.dtype().name());
  int64_t bs = shape()[0], c = shape()[1];
  Shape spatial(shape().begin() + 2, shape().end());
  size_t n = spatial.size();
  Shape out_size;
  if (!o.output_size) {
    std::vector<int64_t> k = make_tuple(op, "kernel_size", o.kernel_size, n);
    std::vector<int64_t> d = make_tuple(op, "dilation", o.dilation, n);
    std::vector<int64_t> s =
        make_tuple(op, "stride", o.stride.v.empty() ? o.kernel_size : o.stride, n);
    Pairs p = resolve_pads(op, o.padding, n);
    for (size_t j = 0; j < n; j++)
      out_size.push_back((spatial[j] - 1) * s[j] - (p[j].first + p[j].second) +
                         (d[j] * (k[j] - 1) + 1));
  } else {
    if (o.output_size->size() < n)
      fail("Tensor.%s: output_size %s has fewer than %d spatial entries", op,
           fmt_shape(*o.output_size), n);
    out_size.assign(o.output_size->end() - n, o.output_size->end());
  }
  for (int64_t s : out_size)
    if (s <= 0) fail("Tensor.%s: output size %s must be positive", op, fmt_ints(out_size));
  int64_t total = shape_numel(out_size);
  // (bs, c, total, L): whether input element l goes to output position p. Overlapping windows
  // can send one element to p twice: max (not sum) keeps its value, as PyTorch's write does.
  Tensor onehot =
      indices.reshape({bs, c, 1, -1})
          .eq(arange(0, static_cast<double>(total), 1, indices.dtype()).reshape({total, 1}));
  Tensor picked = onehot.where(reshape({bs, c, 1, -1}), full({}, lowest(dtype()), dtype()));
  Tensor ret = onehot.any(3).where(picked.max(3), Tensor::zeros({}, dtype()));
  Shape final_shape = {bs, c};
  final_shape.insert(final_shape.end(), out_size.begin(), out_size.end());
  return ret.reshape(final_shape);
}

}  // namespace tc
