// Pools, convolutions and interpolation, composed from movement ops, elementwise ops and
// reductions as in the seeds' tinygrad: a pool is pad + repeat + shrink + reshape + permute (a
// view, never a copy), a convolution is that view times the weight summed over the window and
// the input channels (one reduce kernel), and Winograd (WINO=1) is the same ops rearranged.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tinycore/gradient.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor_layout.h"

namespace tc {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

int64_t ceildiv(int64_t a, int64_t b) {  // Python's -(a // -b)
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
}
int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
int64_t shape_prod(const Shape& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::string fmt_ints(const std::vector<int64_t>& v) { return "(" + absl::StrJoin(v, ", ") + ")"; }

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

// The padding of all dimensions of `t`: none on the leading ones, `pads` on the last ones.
Pairs full_pads(const Tensor& t, const Pairs& pads) {
  Pairs out(t.ndim() - pads.size(), {0, 0});
  out.insert(out.end(), pads.begin(), pads.end());
  return out;
}

Pairs keep_lead(const Shape& s, size_t lead) {
  Pairs r;
  for (size_t i = 0; i < lead; i++) r.push_back({0, s[i]});
  return r;
}

// The smallest value of `d`: what max pooling pads with (-inf for floats, as tinygrad).
ConstValue lowest(DType d) {
  if (dtypes::is_bool(d)) return ConstValue(false);
  if (dtypes::is_float(d)) return ConstValue(-std::numeric_limits<double>::infinity());
  if (dtypes::is_unsigned(d)) return ConstValue(0);
  return ConstValue(static_cast<long long>(dtypes::min(d)));
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

// x where the index (along the last axis) equals `index`: gathers x (..., n) at `index` (m,)
// into (..., m), as a masked sum (so inf and NaN elsewhere do not leak in), in x's dtype.
Tensor gather_last(const Tensor& x, const Tensor& index) {
  int64_t n = x.shape().back(), m = index.shape()[0];
  Tensor onehot = index.reshape({m, 1}).eq(
      Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32).reshape({1, n}));
  Tensor picked = onehot.where(x.unsqueeze(-2), Tensor::zeros({}, x.dtype()));
  return picked.sum(-1).cast(x.dtype());
}

// ---------------------------------------------------------------- convolution

struct ConvArgs {
  int64_t groups;
  std::vector<int64_t> stride, dilation;
  Pairs pads;
  std::optional<DType> dtype;
};

void check_conv(const char* op, const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                int64_t groups) {
  if (x.ndim() < 3 || w.ndim() != x.ndim())
    fail(
        "Tensor.%s: input %s and weight %s must have the same rank, at least 3 (batch, channels, "
        "spatial...)",
        op, fmt_shape(x.shape()), fmt_shape(w.shape()));
  if (groups <= 0) fail("Tensor.%s: groups must be positive, got %d", op, groups);
  int64_t cin_ = x.shape()[1], cout = w.shape()[0], cin = w.shape()[1];
  if (groups * cin != cin_)
    fail(
        "Tensor.%s: input shape %s does not match the weights %s: groups (%d) * weight channels "
        "(%d) = %d, the input has %d channels",
        op, fmt_shape(x.shape()), fmt_shape(w.shape()), groups, cin, groups * cin, cin_);
  if (cout % groups != 0)
    fail("Tensor.%s: %d output channels of the weights %s are not divisible by groups %d", op, cout,
         fmt_shape(w.shape()), groups);
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    fail("Tensor.%s: bias of shape %s does not match %d output channels of the weights %s", op,
         fmt_shape(bias->shape()), cout, fmt_shape(w.shape()));
}

Tensor add_bias(const Tensor& ret, const std::optional<Tensor>& bias, size_t n) {
  if (!bias) return ret;
  Shape s = {1, -1};
  s.insert(s.end(), n, 1);
  return ret.add(bias->reshape(s));
}

// winograd F(4x4, 3x3): multiplies t along each of its first `dims` axes by `mat`, with the
// matrix entries as foldable constants (tinygrad's _apply_winograd_matrix).
Tensor apply_winograd_matrix(const std::vector<std::vector<double>>& mat, const Tensor& t,
                             size_t dims) {
  int64_t rows = static_cast<int64_t>(mat.size()), cols = static_cast<int64_t>(mat[0].size());
  const Shape& ts = t.shape();
  Shape head(ts.begin(), ts.begin() + dims), tail(ts.begin() + dims, ts.end());
  Shape r = head, e = head;
  r.insert(r.end(), dims, 1);
  e.insert(e.end(), dims, rows);
  r.insert(r.end(), tail.begin(), tail.end());
  e.insert(e.end(), tail.begin(), tail.end());
  Tensor t_ = t.reshape(r).expand(e);
  Shape shp(e.begin() + dims, e.end());
  // matcols[dim][k]: column k of mat along axis `dim` of shp (size-1 elsewhere, broadcast)
  std::vector<std::vector<Tensor>> matcols(dims);
  for (size_t dim = 0; dim < dims; dim++) {
    for (int64_t k = 0; k < cols; k++) {
      std::vector<Tensor> parts;
      Shape one(shp.size(), 1);
      for (int64_t row = 0; row < rows; row++)
        parts.push_back(Tensor::full(one, ConstValue(mat[row][k]), t.dtype()));
      matcols[dim].push_back(Tensor::cat(parts, static_cast<int>(dim)));
    }
  }
  std::optional<Tensor> ret;
  std::vector<int64_t> idx(dims, 0);
  while (true) {
    Pairs sel;
    for (size_t dim = 0; dim < dims; dim++) sel.push_back({idx[dim], idx[dim] + 1});
    for (int64_t s : shp) sel.push_back({0, s});
    Tensor term = t_.shrink(sel).reshape(shp);
    std::optional<Tensor> coef;
    for (size_t dim = 0; dim < dims; dim++) {
      const Tensor& c = matcols[dim][idx[dim]];
      coef = coef ? coef->mul(c) : c;
    }
    term = coef->mul(term);
    ret = ret ? ret->add(term) : term;
    size_t dim = dims;
    while (dim > 0 && ++idx[dim - 1] == cols) idx[--dim] = 0;
    if (dim == 0) break;
  }
  return *ret;
}

Tensor conv_winograd(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                     const ConvArgs& a) {
  const char* op = "conv2d";
  int64_t bs = x.shape()[0], cout = weight.shape()[0], cin = weight.shape()[1];
  int64_t groups = a.groups, rcout = cout / groups;
  size_t n = weight.ndim() - 2;
  static const std::vector<std::vector<double>> G = {{1.0 / 4, 0, 0},
                                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                                     {0, 0, 1}};
  static const std::vector<std::vector<double>> Bt = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                                      {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                                      {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static const std::vector<std::vector<double>> At = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  // the output size of the direct conv (also checks that the kernel fits)
  std::vector<int64_t> ones(n, 1), three(n, 3);
  Tensor direct = pool_view(op, x.pad(full_pads(x, a.pads)), three, ones, ones);
  Shape oyx(direct.shape().begin() + 2, direct.shape().begin() + 2 + n);
  // pad to whole 4x4 output tiles: (bs, cin_, *tyx, *HWI)
  Pairs pads = a.pads;
  for (size_t j = 0; j < n; j++) {
    int64_t s = x.shape()[2 + j];
    pads[j].second += py_mod(-(s + pads[j].first + pads[j].second - 2), 4);
  }
  Tensor d = pool_view(op, x.pad(full_pads(x, pads)), std::vector<int64_t>(n, 6),
                       std::vector<int64_t>(n, 4), ones);
  int nd = d.ndim();
  std::vector<int> to_front;
  for (int j = nd - static_cast<int>(n); j < nd; j++) to_front.push_back(j);
  for (int j = 0; j < nd - static_cast<int>(n); j++) to_front.push_back(j);
  d = d.permute(to_front);  // (HWI, bs, cin_, tyx)
  Shape tyx(d.shape().end() - n, d.shape().end());
  int nw = weight.ndim();
  std::vector<int> w_front;
  for (int j = nw - static_cast<int>(n); j < nw; j++) w_front.push_back(j);
  for (int j = 0; j < nw - static_cast<int>(n); j++) w_front.push_back(j);
  Tensor g = weight.permute(w_front);  // (HW, cout, cin)

  Shape gs(n, 6), ds(n, 6);
  gs.insert(gs.end(), {1, groups, rcout, cin});
  gs.insert(gs.end(), n, 1);
  ds.insert(ds.end(), {bs, groups, 1, cin});
  ds.insert(ds.end(), tyx.begin(), tyx.end());
  Tensor gfactors = apply_winograd_matrix(G, g, n).reshape(gs);
  Tensor dfactors = apply_winograd_matrix(Bt, d, n).reshape(ds);
  Tensor prodt = gfactors.mul(dfactors);
  if (a.dtype) prodt = prodt.cast(*a.dtype);
  int cin_axis = -1 - static_cast<int>(n);
  Tensor ret = apply_winograd_matrix(At, prodt.sum(cin_axis), n);  // (HWO, bs, groups, rcout, tyx)
  int rn = ret.ndim();
  std::vector<int> order;
  for (int j = static_cast<int>(n); j < rn - static_cast<int>(n); j++) order.push_back(j);
  for (int j = 0; j < static_cast<int>(n); j++) {
    order.push_back(rn - static_cast<int>(n) + j);
    order.push_back(j);
  }
  ret = ret.permute(order);  // (bs, groups, rcout, ty, HO, tx, WO, ...)
  Shape merged = {bs, cout};
  for (int64_t t : tyx) merged.push_back(t * 4);
  Pairs keep = {{0, bs}, {0, cout}};
  for (int64_t o : oyx) keep.push_back({0, o});
  ret = ret.reshape(merged).shrink(keep);
  return add_bias(ret, bias, n).contiguous();
}

// The weight (cout, cin, *HW) read from a copy laid out in blocks of 32 output channels,
// (cout/32, cin, *HW, 32) (or (cin, *HW, cout) when the channels per group are not a multiple of
// 32), when there are enough output channels per group to fill SIMD lanes: consecutive output
// channels are adjacent, so the conv kernel may put its lanes on cout whatever the spatial size
// or stride, and the block a kernel's lanes read is one stream of memory (not a row every
// cout floats, which would touch a page per step of the reduce).
Tensor cout_blocked(const Tensor& weight, int64_t rcout) {
  if (rcout < 8) return weight;
  return blocked_copy(weight, 0, rcout % 32 == 0 ? 32 : weight.shape()[0]);
}

// The convolution as tinygrad writes it: the window view of x, broadcast against the weight and
// summed over (cin, *HW). Without bias.
Tensor conv_forward(const char* op, const Tensor& x, const Tensor& weight, const ConvArgs& a) {
  int64_t bs = x.shape()[0], cout = weight.shape()[0], cin = weight.shape()[1];
  size_t n = weight.ndim() - 2;
  Shape HW(weight.shape().begin() + 2, weight.shape().end());
  int64_t groups = a.groups, rcout = cout / groups;
  // (bs, groups*cin, *oyx, *HW)
  Tensor p = pool_view(op, x.pad(full_pads(x, a.pads)), HW, a.stride, a.dilation);
  Shape oyx(p.shape().begin() + 2, p.shape().begin() + 2 + n);
  Shape r = {bs, groups, cin, 1}, e = {bs, groups, cin, rcout};
  r.insert(r.end(), oyx.begin(), oyx.end());
  e.insert(e.end(), oyx.begin(), oyx.end());
  r.insert(r.end(), HW.begin(), HW.end());
  e.insert(e.end(), HW.begin(), HW.end());
  std::vector<int> order = {0, 1, 3};
  for (size_t j = 0; j < n; j++) order.push_back(4 + static_cast<int>(j));
  order.push_back(2);
  for (size_t j = 0; j < n; j++) order.push_back(4 + static_cast<int>(n + j));
  // broadcast to (bs, groups, rcout, *oyx, cin, *HW)
  Tensor xw = p.reshape(r).expand(e).permute(order);
  Shape ws = {1, groups, rcout};
  ws.insert(ws.end(), n, 1);
  ws.push_back(cin);
  ws.insert(ws.end(), HW.begin(), HW.end());
  Tensor prodt = xw.mul(cout_blocked(weight, rcout).reshape(ws));
  if (a.dtype) prodt = prodt.cast(*a.dtype);
  std::vector<int> axes;
  for (size_t j = 0; j <= n; j++) axes.push_back(-1 - static_cast<int>(j));
  Shape out = {bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  return prodt.sum(axes, true).reshape(out);
}

// `t` (bs, c, *spatial) read from a contiguous (bs, *spatial, c) copy: consecutive channels are
// adjacent.
Tensor channels_last(const Tensor& t) { return blocked_copy(t, 1, t.shape()[1]); }

// The weight gradient of an ungrouped conv, sum over (batch, *positions) of the gradient times
// the input windows. The kernel's output is laid out (*HW, cout, cin), its innermost axis reading
// consecutive input channels of a channels-last copy of the input (SIMD lanes) and a register tile
// over cout sharing each load; with fewer than 8 input channels (a first conv on images) the
// other way around, (*HW, cin, cout) from a channels-last copy of the gradient. Then viewed as
// (cout, cin, *HW).
Tensor conv_weight_gradient(const ConvArgs& a, const Tensor& x, const Shape& HW, const Tensor& g) {
  int n = static_cast<int>(HW.size());
  int64_t bs = x.shape()[0], cin = x.shape()[1], cout = g.shape()[1];
  Shape oyx(g.shape().begin() + 2, g.shape().end());
  bool cin_lanes = cin >= 8 || cout < 8;
  Tensor xs = cin_lanes ? channels_last(x) : x, gs = cin_lanes ? g : channels_last(g);
  // the windows (bs, cin, *oyx, *HW) as (*HW, cin, 1, bs, *oyx), g as (1.., 1, cout, bs, *oyx)
  Tensor p = pool_view("conv2d", xs.pad(full_pads(xs, a.pads)), HW, a.stride, a.dilation);
  std::vector<int> order, cout_first = {1, 0};
  for (int j = 0; j < n; j++) order.push_back(2 + n + j);
  order.insert(order.end(), {1, 0});
  for (int j = 0; j < n; j++) order.push_back(2 + j), cout_first.push_back(2 + j);
  Shape windows = HW, grads(n, 1);
  windows.insert(windows.end(), {cin, 1, bs});
  grads.insert(grads.end(), {1, cout, bs});
  for (Shape* s : {&windows, &grads}) s->insert(s->end(), oyx.begin(), oyx.end());
  Tensor prod = p.permute(order).reshape(windows) * gs.permute(cout_first).reshape(grads);
  // (*HW, cin, cout, bs, *oyx) -> (*HW, other channels, bs, *oyx, lane channels), summed
  int lane = cin_lanes ? n : n + 1, other = cin_lanes ? n + 1 : n;
  std::vector<int> to_sum(n), axes, back = {cin_lanes ? n : n + 1, cin_lanes ? n + 1 : n};
  std::iota(to_sum.begin(), to_sum.end(), 0);
  to_sum.push_back(other);
  for (int j = 0; j <= n; j++) to_sum.push_back(n + 2 + j), axes.push_back(n + 1 + j);
  to_sum.push_back(lane);
  for (int j = 0; j < n; j++) back.push_back(j);
  return prod.permute(to_sum).sum(axes).permute(back);
}

// conv's gradients: the input's is the transposed convolution of the gradient (derived through
// the window view it would be a sum over overlapping windows whose index math, div and mod by
// the window row, no kernel optimization survives); the weight's is conv_weight_gradient, or for
// grouped convs and accumulation dtypes what autograd derives through the window view.
std::vector<UOpRef> conv_gradients(const ConvArgs& a, const UOpRef& ret, const UOpRef& grad) {
  Tensor x(ret->src[1]), w(ret->src[2]), g(grad);
  size_t n = w.ndim() - 2;
  UOpRef gw;
  if (a.groups == 1 && !a.dtype) {
    gw = conv_weight_gradient(a, x.detach(), Shape(w.shape().begin() + 2, w.shape().end()), g)
             .cast(w.dtype())
             .uop();
  } else {                   // as autograd derives it through the window view
    Tensor wd = w.detach();  // a node of its own: the forward's reshapes may fold away w's
    gw = compute_gradient(conv_forward("conv2d", x.detach(), wd, a).uop(), grad,
                          {wd.uop()})[wd.uop().get()];
  }
  ConvTransposeOpts t{.groups = a.groups,
                      .stride = IntTuple{a.stride},
                      .dilation = IntTuple{a.dilation},
                      .padding = 0,
                      .output_padding = 0};
  Tensor full = g.cast(x.dtype()).conv_transpose2d(w, std::nullopt, t);
  // full covers the padded input up to the last window (the rest of it had no effect): input
  // position i is padded position i + before, which a negative `before` cut off when it is < 0
  Pairs unpad(2, {0, 0});
  for (size_t j = 0; j < n; j++) {
    int64_t before = a.pads[j].first;
    unpad.push_back({-before, x.shape()[2 + j] + before - full.shape()[2 + j]});
  }
  return {full.pad(unpad).uop(), gw};
}

// One registered gradient rule per set of conv arguments (rules live for the program).
int64_t conv_gradient_rule(const ConvArgs& a) {
  static std::mutex mu;
  static std::map<std::string, int64_t> rules;
  std::string key =
      absl::StrCat(a.groups, "|", absl::StrJoin(a.stride, ","), "|", absl::StrJoin(a.dilation, ","),
                   "|", a.dtype ? a.dtype->name() : "");
  for (auto [before, after] : a.pads) absl::StrAppend(&key, "|", before, ",", after);
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = rules.try_emplace(key, 0);
  if (fresh)
    it->second = register_gradient_rule(
        [a](const UOpRef& ret, const UOpRef& grad) { return conv_gradients(a, ret, grad); });
  return it->second;
}

Tensor conv_impl(const char* op, const Tensor& input, const Tensor& kernel,
                 const std::optional<Tensor>& bias, const ConvArgs& a) {
  Tensor x = input.autocast(), weight = kernel.autocast();
  size_t n = weight.ndim() - 2;
  if (x.dtype() != input.dtype() || weight.dtype() != kernel.dtype()) {
    // the narrow operands multiply exactly and sum in float32 (as tensor cores do)
    Tensor::Autocast off(std::nullopt);
    Tensor y = conv_impl(op, x.float_(), weight.float_(), std::nullopt, a);
    return add_bias(y.cast(least_upper_dtype({x.dtype(), weight.dtype()})), bias, n);
  }
  Shape HW(weight.shape().begin() + 2, weight.shape().end());
  bool unit = true;
  for (size_t j = 0; j < n; j++) unit = unit && a.stride[j] == 1 && a.dilation[j] == 1;
  bool all3 = std::all_of(HW.begin(), HW.end(), [](int64_t k) { return k == 3; });
  if (getenv_int("WINO") && all3 && unit) return conv_winograd(x, weight, bias, a);
  Tensor value = conv_forward(op, x.detach(), weight.detach(), a);
  Tensor ret(with_gradient_rule(value.uop(), {x.uop(), weight.uop()}, conv_gradient_rule(a)));
  return add_bias(ret, bias, n);
}

}  // namespace

// ---------------------------------------------------------------- pools

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
  return padded_pool(op, *this, a.pads, a, lowest(dtype())).max(a.axes);
}

std::pair<Tensor, Tensor> Tensor::max_pool2d_with_indices(const PoolOpts& o) const {
  const char* op = "max_pool2d";
  PoolArgs a = pool_args(op, *this, o.kernel_size, o.stride, o.dilation, o.padding);
  if (o.ceil_mode) a.pads = apply_ceil_mode(shape(), a.pads, a.k, a.s, a.d);
  Tensor pooled = padded_pool(op, *this, a.pads, a, lowest(dtype()));
  Tensor values = pooled.max(a.axes);
  // the first maximum of each window: the largest count-down value among the maxima
  Shape spatial(shape().end() - a.k.size(), shape().end());
  int64_t sz = shape_prod(spatial);
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
  int64_t total = shape_prod(out_size);
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

// ---------------------------------------------------------------- convolutions

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias,
                      const ConvOpts& o) const {
  const char* op = "conv2d";
  check_conv(op, *this, weight, bias, o.groups);
  size_t n = weight.ndim() - 2;
  ConvArgs a{o.groups, make_tuple(op, "stride", o.stride, n),
             make_tuple(op, "dilation", o.dilation, n), resolve_pads(op, o.padding, n), o.dtype};
  return conv_impl(op, *this, weight, bias, a);
}

Tensor Tensor::conv2d(const Tensor& weight, const ConvOpts& o) const {
  return conv2d(weight, std::nullopt, o);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias,
                                const ConvTransposeOpts& o) const {
  const char* op = "conv_transpose2d";
  if (ndim() < 3 || weight.ndim() != ndim())
    fail(
        "Tensor.%s: input %s and weight %s must have the same rank, at least 3 (batch, channels, "
        "spatial...)",
        op, fmt_shape(shape()), fmt_shape(weight.shape()));
  if (o.groups <= 0) fail("Tensor.%s: groups must be positive, got %d", op, o.groups);
  if (weight.shape()[0] != shape()[1] || weight.shape()[0] % o.groups != 0)
    fail(
        "Tensor.%s: the weights %s need %d input channels (as the input %s), divisible by groups "
        "%d",
        op, fmt_shape(weight.shape()), shape()[1], fmt_shape(shape()), o.groups);
  int64_t cout = weight.shape()[1] * o.groups;
  if (bias && (bias->ndim() != 1 || bias->shape()[0] != cout))
    fail("Tensor.%s: bias of shape %s does not match %d output channels", op,
         fmt_shape(bias->shape()), cout);
  size_t n = weight.ndim() - 2;
  Shape HW(weight.shape().begin() + 2, weight.shape().end());
  Pairs padding = resolve_pads(op, o.padding, n);
  std::vector<int64_t> stride = make_tuple(op, "stride", o.stride, n);
  std::vector<int64_t> dilation = make_tuple(op, "dilation", o.dilation, n);
  std::vector<int64_t> out_pad = make_tuple(op, "output_padding", o.output_padding, n);
  for (size_t j = 0; j < n; j++) {
    if (stride[j] <= 0 || dilation[j] <= 0)
      fail("Tensor.%s: stride %s and dilation %s must be positive", op, fmt_ints(stride),
           fmt_ints(dilation));
    if (out_pad[j] < 0 || out_pad[j] >= std::max(stride[j], dilation[j]))
      fail("Tensor.%s: output_padding %s must be smaller than stride %s or dilation %s", op,
           fmt_ints(out_pad), fmt_ints(stride), fmt_ints(dilation));
  }
  // the weight as a conv weight: (groups, cin, rcout, *HW) -> (groups*rcout, cin, *HW), flipped
  std::vector<int> flip_axes;
  for (int j = 3; j < weight.ndim() + 1; j++) flip_axes.push_back(j);
  Tensor w = weight.unflatten(0, {o.groups, -1}).transpose(1, 2).flip(flip_axes).flatten(0, 1);
  Tensor x = *this;
  if (std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s > 1; })) {
    // zeros between the input elements: (k) -> (k, 1) -> pad (k, s) -> (k*s) -> shrink k*s-(s-1)
    Shape s1 = {shape()[0], shape()[1]}, s2 = s1;
    Pairs p = {{0, 0}, {0, 0}}, r = {{0, shape()[0]}, {0, shape()[1]}};
    for (size_t j = 0; j < n; j++) {
      int64_t k = shape()[2 + j];
      s1.insert(s1.end(), {k, 1});
      p.insert(p.end(), {{0, 0}, {0, stride[j] - 1}});
      s2.push_back(k * stride[j]);
      r.push_back({0, k * stride[j] - (stride[j] - 1)});
    }
    x = x.reshape(s1).pad(p).reshape(s2).shrink(r);
  }
  // padding of the equivalent conv (negative: pad() crops), which must leave room for the kernel
  Pairs pads;
  for (size_t j = 0; j < n; j++) {
    int64_t full = (HW[j] - 1) * dilation[j];
    pads.push_back({full - padding[j].first, full - padding[j].second + out_pad[j]});
    if (x.shape()[2 + j] + pads[j].first + pads[j].second < full + 1)
      fail("Tensor.%s: padding %s leaves no output for input %s and weights %s", op,
           fmt_ints(o.padding.v), fmt_shape(shape()), fmt_shape(weight.shape()));
  }
  ConvArgs a{o.groups, std::vector<int64_t>(n, 1), dilation, pads, std::nullopt};
  check_conv(op, x, w, bias, o.groups);
  return conv_impl(op, x, w, bias, a);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const ConvTransposeOpts& o) const {
  return conv_transpose2d(weight, std::nullopt, o);
}

// ---------------------------------------------------------------- interpolate

Tensor Tensor::interpolate(Shape size, const std::string& mode, bool align_corners) const {
  const char* op = "interpolate";
  if (size.empty() || static_cast<int>(size.size()) > ndim())
    fail("Tensor.%s: size %s must have between 1 and %d entries for shape %s", op, fmt_shape(size),
         ndim(), fmt_shape(shape()));
  for (int64_t s : size)
    if (s <= 0) fail("Tensor.%s: size %s must be positive", op, fmt_shape(size));
  bool linear = mode == "linear" || (mode == "bilinear" && size.size() == 2) ||
                (mode == "trilinear" && size.size() == 3);
  if (!linear && mode != "nearest" && mode != "nearest-exact")
    fail(
        "Tensor.%s: mode '%s' is not supported for size %s (use linear, nearest or "
        "nearest-exact; bilinear needs 2 sizes, trilinear 3)",
        op, mode, fmt_shape(size));
  if (align_corners && !linear)
    fail("Tensor.%s: align_corners can only be set with a linear mode, got '%s'", op, mode);
  Tensor x = *this;
  int nd = ndim();
  for (int i = nd - 1; i >= nd - static_cast<int>(size.size()); i--) {
    int64_t in = shape()[i], out = size[i - (nd - static_cast<int>(size.size()))];
    double ac = align_corners ? 1.0 : 0.0;
    double scale =
        out - ac == 0 ? 0.0 : (static_cast<double>(in) - ac) / (static_cast<double>(out) - ac);
    Tensor arr = arange(0, static_cast<double>(out), 1, dtypes::float32);
    Tensor xt = x.transpose(i, -1);
    Tensor res = xt;
    if (linear) {
      // integers are interpolated in float (a lerp in uint8 would wrap), then cast back
      xt = xt.cast(least_upper_float(xt.dtype()));
      Tensor index = align_corners
                         ? arr.mul(ConstValue(scale))
                         : arr.add(ConstValue(0.5)).mul(ConstValue(scale)).sub(ConstValue(0.5));
      index = index.clip(ConstValue(0), ConstValue(static_cast<double>(in - 1)));
      Tensor low = index.floor(), high = index.ceil();
      Tensor perc = index.sub(low);
      res = gather_last(xt, low.cast(dtypes::int32))
                .lerp(gather_last(xt, high.cast(dtypes::int32)), perc);
    } else {
      Tensor index = mode == "nearest-exact" ? arr.add(ConstValue(0.5)).mul(ConstValue(scale))
                                             : arr.mul(ConstValue(scale));
      index = index.cast(dtypes::int32).minimum(ConstValue(static_cast<long long>(in - 1)));
      res = gather_last(xt, index);
    }
    x = res.transpose(i, -1);
  }
  return x.cast(dtype());
}

}  // namespace tc
