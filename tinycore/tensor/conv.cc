// Convolutions: conv2d (any number of spatial dimensions) is the window view of pool.cc times the
// weight, summed over the window and the input channels in one reduce kernel, with gradients that
// are products of their own; conv_transpose2d is a conv of the flipped weight (strided: one per
// phase of the stride), Winograd (WINO=1) the same ops rearranged.
#include <algorithm>
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
using detail::make_tuple;
using detail::next_index;
using detail::Pairs;
using detail::pool_view;
using detail::resolve_pads;
using detail::spread;
using detail::unspread;

namespace {

int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

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

// The convolution as tinygrad writes it: the window view of x, broadcast against the weight and
// summed over (cin, *HW). Without bias. (The scheduler may read the weight from a copy in blocks of
// output channels: schedule/layout.h.)
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
  Tensor prodt = xw.mul(weight.reshape(ws));
  if (a.dtype) prodt = prodt.cast(*a.dtype);
  std::vector<int> axes;
  for (size_t j = 0; j <= n; j++) axes.push_back(-1 - static_cast<int>(j));
  Shape out = {bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  return prodt.sum(axes, true).reshape(out);
}

// The weight gradient of an ungrouped conv, sum over (batch, *positions) of the gradient times
// the input windows. The kernel's output is laid out (*HW, cout, cin), its innermost axis reading
// consecutive input channels (SIMD lanes) and a register tile over cout sharing each load; with
// fewer than 8 input channels (a first conv on images) the other way around, (*HW, cin, cout).
// Then viewed as (cout, cin, *HW). (The scheduler reads the operand of the lane channels from a
// channels-last copy: schedule/layout.h.)
Tensor conv_weight_gradient(const ConvArgs& a, const Tensor& x, const Shape& HW, const Tensor& g) {
  int n = static_cast<int>(HW.size());
  int64_t bs = x.shape()[0], cin = x.shape()[1], cout = g.shape()[1];
  Shape oyx(g.shape().begin() + 2, g.shape().end());
  bool cin_lanes = cin >= 8 || cout < 8;
  // the windows (bs, cin, *oyx, *HW) as (*HW, cin, 1, bs, *oyx), g as (1.., 1, cout, bs, *oyx)
  Tensor p = pool_view("conv2d", x.pad(full_pads(x, a.pads)), HW, a.stride, a.dilation);
  std::vector<int> order, cout_first = {1, 0};
  for (int j = 0; j < n; j++) order.push_back(2 + n + j);
  order.insert(order.end(), {1, 0});
  for (int j = 0; j < n; j++) order.push_back(2 + j), cout_first.push_back(2 + j);
  Shape windows = HW, grads(n, 1);
  windows.insert(windows.end(), {cin, 1, bs});
  grads.insert(grads.end(), {1, cout, bs});
  for (Shape* s : {&windows, &grads}) s->insert(s->end(), oyx.begin(), oyx.end());
  Tensor prod = p.permute(order).reshape(windows) * g.permute(cout_first).reshape(grads);
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

// (before, after) per spatial axis as a flat padding, in PyTorch's order (the last axis first).
IntTuple flat_pads(const Pairs& pads) {
  std::vector<int64_t> flat;
  for (auto it = pads.rbegin(); it != pads.rend(); ++it)
    flat.insert(flat.end(), {it->first, it->second});
  return IntTuple{flat};
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
  // an input with no positions (a side of 0, padded into an output) has an empty gradient: no
  // transposed conv gives it
  if (shape_numel(x.shape()) == 0) return {Tensor::zeros_like(x).uop(), gw};
  // The transposed conv covers the padded input up to the last window (the rest of it had no
  // effect): input position i is its position i + before. Its padding crops `before` and the
  // positions past the input, its output padding adds the input's positions past the last window
  // (zeros), so that it computes the input's positions alone: computed whole and cropped after,
  // a 3x3 conv's gradient over a 4x4 map took 6x6 outputs, and a strided one a kernel more.
  Pairs crop, unpad(2, {0, 0});  // unpad: what is left to pad or crop after (a `before` < 0 cut)
  std::vector<int64_t> out_pad(n);
  bool fits = true;
  for (size_t j = 0; j < n; j++) {
    int64_t before = a.pads[j].first, k = w.shape()[2 + j], s = a.stride[j], d = a.dilation[j];
    int64_t past = (g.shape()[2 + j] - 1) * s + (k - 1) * d + 1 - before - x.shape()[2 + j];
    crop.push_back({before, std::max<int64_t>(past, 0)});
    out_pad[j] = std::max<int64_t>(-past, 0);
    fits = fits && before >= 0 && out_pad[j] < std::max(s, d);
    unpad.push_back({-before, -past});
  }
  ConvTransposeOpts t{.groups = a.groups,
                      .stride = IntTuple{a.stride},
                      .dilation = IntTuple{a.dilation},
                      .padding = fits ? flat_pads(crop) : IntTuple{0},
                      .output_padding = fits ? IntTuple{out_pad} : IntTuple{0}};
  Tensor dx = g.cast(x.dtype()).conv_transpose2d(w, std::nullopt, t);
  return {(fits ? dx : dx.pad(unpad)).uop(), gw};
}

// One gradient rule per set of conv arguments.
int64_t conv_gradient_rule(const ConvArgs& a) {
  std::string key =
      absl::StrCat("conv|", a.groups, "|", absl::StrJoin(a.stride, ","), "|",
                   absl::StrJoin(a.dilation, ","), "|", a.dtype ? a.dtype->name() : "");
  for (auto [before, after] : a.pads) absl::StrAppend(&key, "|", before, ",", after);
  return gradient_rule_for(key, [&] {
    return [a](const UOpRef& ret, const UOpRef& grad) { return conv_gradients(a, ret, grad); };
  });
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

// A strided transposed conv (dilation 1) as one stride-1 transposed conv per phase (polyphase):
// output position q*s + r takes only the taps k = r + pad_before (mod s), so phase r is the input
// convolved with those taps, shifted by whole steps; each phase is padded into its slot of (q, s)
// and the phases added. Zeros inserted between the input elements instead would multiply s^n
// times the work by zeros (a strided conv's input gradient).
Tensor polyphase_transpose(const Tensor& x, const Tensor& weight, int64_t groups,
                           const std::vector<int64_t>& stride, const Pairs& padding,
                           const std::vector<int64_t>& out_pad) {
  const size_t n = stride.size();
  Shape steps(n);
  Pairs keep = {{0, x.shape()[0]}, {0, weight.shape()[1] * groups}};
  for (size_t j = 0; j < n; j++) {
    int64_t len = (x.shape()[2 + j] - 1) * stride[j] + weight.shape()[2 + j] - padding[j].first -
                  padding[j].second + out_pad[j];
    steps[j] = (len + stride[j] - 1) / stride[j];
    keep.push_back({0, len});
  }
  std::optional<Tensor> sum;
  std::vector<int64_t> r(n, 0);  // the phase
  do {
    Tensor w = weight;
    Pairs shift(2, {0, 0}), crop;
    bool taps = true;  // else a phase of zeros
    for (size_t j = 0; j < n && taps; j++) {
      int64_t k0 = py_mod(r[j] + padding[j].first, stride[j]);
      if ((taps = k0 < weight.shape()[2 + j])) {
        w = every(w, static_cast<int>(2 + j), k0, stride[j]);
        int64_t c = (k0 - padding[j].first - r[j]) / stride[j];  // exact: k0 = r + pad (mod s)
        int64_t full = x.shape()[2 + j] + w.shape()[2 + j] - 1, after = steps[j] - c - full;
        // the phase's own conv crops what is not kept and a pad adds zeros (when nothing of it is
        // kept, the pad cuts it all: no conv has an empty output)
        const bool cut = std::max<int64_t>(-c, 0) + std::max<int64_t>(-after, 0) < full;
        auto part = [&](int64_t v) { return cut ? std::max<int64_t>(v, 0) : 0; };
        crop.push_back({part(-c), part(-after)});
        shift.push_back({cut ? part(c) : c, cut ? part(after) : after});
      }
    }
    if (taps) {
      // a kernel of its own: fused into the interleaving, every output would run every phase's
      // loops under masks that alternate from lane to lane
      ConvTransposeOpts o{.groups = groups, .padding = flat_pads(crop)};
      Tensor phase = x.conv_transpose2d(w, o).contiguous();
      Tensor spread_phase = spread(phase.pad(shift), stride, r);
      sum = sum ? *sum + spread_phase : spread_phase;
    }
  } while (next_index(r, stride));
  // interleaved once: fused into each consumer, every read would gather across the phases
  return unspread(*sum, keep).contiguous();
}

}  // namespace

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
    if ((shape()[2 + j] - 1) * stride[j] + (HW[j] - 1) * dilation[j] + 1 - padding[j].first -
            padding[j].second + out_pad[j] <
        1)
      fail("Tensor.%s: padding %s leaves no output for input %s and weights %s", op,
           fmt_ints(o.padding.v), fmt_shape(shape()), fmt_shape(weight.shape()));
  }
  bool strided = std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s > 1; });
  bool dilated = std::any_of(dilation.begin(), dilation.end(), [](int64_t d) { return d > 1; });
  if (strided && !dilated)
    return add_bias(polyphase_transpose(*this, weight, o.groups, stride, padding, out_pad), bias,
                    n);
  // the weight as a conv weight: (groups, cin, rcout, *HW) -> (groups*rcout, cin, *HW), flipped
  std::vector<int> flip_axes;
  for (int j = 3; j < weight.ndim() + 1; j++) flip_axes.push_back(j);
  Tensor w = weight.unflatten(0, {o.groups, -1}).transpose(1, 2).flip(flip_axes).flatten(0, 1);
  Tensor x = *this;
  if (strided) {
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
  }
  ConvArgs a{o.groups, std::vector<int64_t>(n, 1), dilation, pads, std::nullopt};
  check_conv(op, x, w, bias, o.groups);
  return conv_impl(op, x, w, bias, a);
}

Tensor Tensor::conv_transpose2d(const Tensor& weight, const ConvTransposeOpts& o) const {
  return conv_transpose2d(weight, std::nullopt, o);
}

}  // namespace tc
