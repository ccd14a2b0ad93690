// The ONNX operators on images and boxes: Resize and Upsample, GridSample, RoiAlign, LRN,
// MaxUnpool, NonMaxSuppression. Where positions depend only on shapes and host-read inputs
// (Resize's scales, RoiAlign's boxes) the taps and their weights are computed on the host and
// applied as gathers and weighted sums; GridSample's come from its grid, as Tensor ops.
// NonMaxSuppression's output shape depends on the data: it realizes its inputs and selects on the
// host.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// The error prefix naming the node.
std::string where(const NodeArgs& a) {
  return "ONNX node '" + a.node.name() + "' (" + a.node.op_type() + ")";
}

std::string attr_or(const NodeArgs& a, const std::string& name, const std::string& fallback) {
  return a.attr(name) ? a.attr(name)->s() : fallback;
}

// A 1-d input read on the host as doubles (Resize's scales and roi).
std::vector<double> host_floats(const NodeArgs& a, size_t i) {
  const Tensor& t = a.in(i);
  if (t.ndim() > 1)
    fail("%s: input %d must be a 1-d tensor, got %s", where(a), i, fmt_shape(t.shape()));
  return a.host_read<double>(i);
}

Tensor doubles(const std::vector<double>& v, const Shape& shape, DType dt) {
  return Tensor::from_blob(v.data(), shape, dtypes::float64).cast(dt);
}
Tensor int64s(const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_blob(v.data(), shape, dtypes::int64);
}

// The float dtype a weighted sum of `x` is computed in.
DType float_of(const Tensor& x) {
  return dtypes::is_float(x.dtype()) ? x.dtype() : dtypes::float32;
}

// ---- Resize ----

// The taps of one axis: for each output position, k (input index, weight) pairs, and whether it
// lies outside the input (tf_crop_and_resize: the extrapolation value).
struct Taps {
  int k = 1;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<uint8_t> outside;
};

// Keys' cubic convolution weights of the 4 taps floor(x)-1 .. floor(x)+2 at ratio x - floor(x).
std::vector<double> cubic_weights(double r, double A) {
  auto near = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };       // |t| <= 1
  auto far = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };  // 1 < |t| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

struct ResizeOpts {
  std::string mode, ctm, nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

// ONNX 1.12's reference interpolation of one axis of length `in` to `out` positions (scale: out
// over in, or the given scale; the "resized length" of align_corners and tf_crop_and_resize is
// scale * in, as the reference computes it).
Taps axis_taps(const NodeArgs& a, const ResizeOpts& o, int64_t in, int64_t out, double scale,
               double roi_start, double roi_end) {
  Taps t;
  t.k = o.mode == "nearest" ? 1 : o.mode == "linear" ? 2 : 4;
  a.check_bytes(16.0 * static_cast<double>(t.k * out), "the taps of a resized axis");
  double len = scale * static_cast<double>(in);
  for (int64_t i = 0; i < out; i++) {
    double x = static_cast<double>(i), src = 0;
    bool outside = false;
    if (o.ctm == "half_pixel") {
      src = (x + 0.5) / scale - 0.5;
    } else if (o.ctm == "pytorch_half_pixel") {
      src = len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (o.ctm == "align_corners") {
      src = len == 1 ? 0 : x * static_cast<double>(in - 1) / (len - 1);
    } else if (o.ctm == "asymmetric") {
      src = x / scale;
    } else if (o.ctm == "tf_half_pixel_for_nn") {
      src = (x + 0.5) / scale;
    } else if (o.ctm == "tf_crop_and_resize") {
      double span = (roi_end - roi_start) * static_cast<double>(in - 1);
      src = (len == 1 ? span / 2 : x * span / (len - 1)) + roi_start * static_cast<double>(in - 1);
      outside = src < 0 || src > static_cast<double>(in - 1);
    } else {
      fail("%s: coordinate_transformation_mode '%s' is not supported", where(a), o.ctm);
    }
    double p = std::floor(src), r = src - p;
    auto clamp = [in](double v) { return std::clamp<int64_t>(static_cast<int64_t>(v), 0, in - 1); };
    t.outside.push_back(outside);
    if (o.mode == "nearest") {
      bool up = r > 0 && (o.nearest_mode == "round_prefer_floor"  ? r > 0.5
                          : o.nearest_mode == "round_prefer_ceil" ? r >= 0.5
                                                                  : o.nearest_mode == "ceil");
      t.idx.push_back(clamp(up ? p + 1 : p));
      t.w.push_back(1);
    } else if (o.mode == "linear") {
      t.idx.push_back(clamp(p)), t.idx.push_back(clamp(p + 1));
      t.w.push_back(1 - r), t.w.push_back(r);
    } else {
      std::vector<double> w = cubic_weights(r, o.cubic_a);
      if (o.exclude_outside) {
        double sum = 0;
        for (int j = 0; j < 4; j++) {
          if (p - 1 + j < 0 || p - 1 + j > static_cast<double>(in - 1)) w[j] = 0;
          sum += w[j];
        }
        for (double& v : w) v /= sum;
      }
      for (int j = 0; j < 4; j++) t.idx.push_back(clamp(p - 1 + j)), t.w.push_back(w[j]);
    }
  }
  return t;
}

// Whether the taps copy an axis of length `in` unchanged (most axes of most Resize nodes).
bool is_identity(const Taps& t, int64_t in) {
  if (static_cast<int64_t>(t.outside.size()) != in) return false;
  for (int64_t o = 0; o < in; o++) {
    if (t.outside[o]) return false;
    for (int j = 0; j < t.k; j++) {
      int64_t i = o * t.k + j;
      if (t.w[i] != 0 && (t.idx[i] != o || t.w[i] != 1)) return false;
    }
  }
  return true;
}

// `x` with `axis` resized by its taps: one gather of every tap, then their weighted sum.
Tensor apply_taps(const Tensor& x, int axis, const Taps& t, double extrapolation) {
  int64_t out = static_cast<int64_t>(t.outside.size());
  Shape idx_shape(x.ndim(), 1), expand = x.shape();
  idx_shape[axis] = expand[axis] = out * t.k;
  Tensor y = x.gather(axis, int64s(t.idx, {out * t.k}).reshape(idx_shape).expand(expand));
  if (t.k > 1) {
    Shape split = x.shape(), w_shape(x.ndim() + 1, 1);
    split[axis] = w_shape[axis] = out;
    split.insert(split.begin() + axis + 1, t.k);
    w_shape[axis + 1] = t.k;
    DType ft = float_of(x);
    y = y.reshape(split).cast(ft).mul(doubles(t.w, w_shape, ft)).sum(axis + 1);
    if (!dtypes::is_float(x.dtype())) y = y.round().cast(x.dtype());
  }
  if (std::find(t.outside.begin(), t.outside.end(), 1) != t.outside.end()) {
    Shape m_shape(x.ndim(), 1);
    m_shape[axis] = out;
    Tensor mask = Tensor::from_blob(t.outside.data(), {out}, dtypes::bool_).reshape(m_shape);
    y = mask.where(Tensor::full({}, extrapolation, y.dtype()), y);
  }
  return y;
}

// Resize (opsets 10, 11, 13; antialias, axes and keep_aspect_ratio_policy came in opset 18) and
// the deprecated Upsample (its scales an input from opset 9, an attribute before): nearest,
// linear and cubic along every axis whose size or coordinates change.
Tensor resize(const NodeArgs& a, bool upsample) {
  const Tensor& x = a.in(0);
  size_t rank = static_cast<size_t>(x.ndim());
  bool v11 = !upsample && a.opset >= 11;
  for (const char* later : {"antialias", "axes", "keep_aspect_ratio_policy"})
    if (a.attr(later)) fail("%s: attribute '%s' (opset 18) is not supported", where(a), later);
  ResizeOpts o;
  o.mode = attr_or(a, "mode", "nearest");
  if (o.mode == "bilinear" || o.mode == "trilinear") o.mode = "linear";
  if (o.mode == "bicubic") o.mode = "cubic";
  if (o.mode != "nearest" && o.mode != "linear" && (o.mode != "cubic" || !v11))
    fail("%s: mode '%s' is not one of nearest, linear%s", where(a), o.mode, v11 ? ", cubic" : "");
  o.ctm = v11 ? attr_or(a, "coordinate_transformation_mode", "half_pixel") : "asymmetric";
  o.nearest_mode = v11 ? attr_or(a, "nearest_mode", "round_prefer_floor") : "floor";
  if (o.nearest_mode != "round_prefer_floor" && o.nearest_mode != "round_prefer_ceil" &&
      o.nearest_mode != "floor" && o.nearest_mode != "ceil")
    fail("%s: nearest_mode '%s' is not supported", where(a), o.nearest_mode);
  o.cubic_a = a.attr_float("cubic_coeff_a", -0.75f);
  o.exclude_outside = a.attr_int("exclude_outside", 0) != 0;

  // the scales or sizes: Resize-11 on takes (X, roi, scales, sizes), one of them empty
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (upsample && a.opset < 9) {
    if (const auto* s = a.attr("scales")) scales.assign(s->floats().begin(), s->floats().end());
  } else {
    size_t si = v11 ? 2 : 1;
    if (a.has(si)) scales = host_floats(a, si);
    if (v11 && a.has(3)) sizes = a.host_ints(3);
  }
  if (!scales.empty() && !sizes.empty())
    fail("%s: both scales and sizes are given (one of them must be empty)", where(a));
  if (scales.empty() && sizes.empty()) fail("%s: neither scales nor sizes is given", where(a));
  if (!sizes.empty()) a.sized(sizes, rank, "sizes");
  if (!scales.empty() && scales.size() != rank)
    fail("%s: scales holds %d values, want %d", where(a), scales.size(), rank);
  std::vector<double> roi;
  if (o.ctm == "tf_crop_and_resize") {
    if (!a.has(1)) fail("%s: tf_crop_and_resize needs the roi input", where(a));
    roi = host_floats(a, 1);
    if (roi.size() != 2 * rank)
      fail("%s: roi holds %d values, want %d", where(a), roi.size(), 2 * rank);
  }

  Tensor y = x;
  for (size_t i = 0; i < rank; i++) {
    int64_t in = x.shape()[i], out;
    double scale;
    if (!sizes.empty()) {
      out = sizes[i];
      if (out < 0) fail("%s: sizes %s has a negative size", where(a), fmt_shape(sizes));
      scale = static_cast<double>(out) / static_cast<double>(in);
    } else {
      scale = scales[i];
      if (!(scale > 0)) fail("%s: scale %g of axis %d is not positive", where(a), scale, i);
      out = static_cast<int64_t>(std::floor(std::min(scale * static_cast<double>(in), 0x1p40)));
    }
    if (out > (int64_t{1} << 31))
      fail("%s: axis %d would grow from %d to %d elements", where(a), i, in, out);
    if (in == 0 || out == 0) {
      Shape s = y.shape();
      s[i] = out;
      y = Tensor::zeros(s, y.dtype());
      continue;
    }
    Taps t =
        axis_taps(a, o, in, out, scale, roi.empty() ? 0 : roi[i], roi.empty() ? 1 : roi[rank + i]);
    if (!is_identity(t, in))
      y = apply_taps(y, static_cast<int>(i), t, a.attr_float("extrapolation_value", 0.0f));
  }
  return y;
}

// ---- GridSample ----

// PyTorch's grid_sample helpers, as Tensor ops on coordinates.
Tensor unnormalize(const Tensor& c, int64_t size, bool align) {
  double s = static_cast<double>(size);
  return align ? c.add(1.0).mul((s - 1) / 2) : c.add(1.0).mul(s).sub(1.0).mul(0.5);
}
Tensor clip_coords(const Tensor& c, int64_t size) {
  return c.maximum(0.0).minimum(static_cast<double>(size - 1));
}
Tensor reflect_coords(const Tensor& c, double twice_low, double twice_high) {
  if (twice_low == twice_high) return c.mul(0.0);
  double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  Tensor in = c.sub(lo).abs();
  Tensor extra = in.fmod(span), flips = in.div(span).floor();
  Tensor even = flips.sub(flips.div(2.0).floor().mul(2.0)).eq(0.0);
  return even.where(extra.add(lo), extra.neg().add(span + lo));
}
// The padding mode applied to a coordinate (border: clipped; reflection: reflected, then clipped).
Tensor pad_coords(const Tensor& c, int64_t size, const std::string& padding, bool align) {
  if (padding == "border") return clip_coords(c, size);
  if (padding == "reflection") {
    double s = static_cast<double>(size);
    return clip_coords(align ? reflect_coords(c, 0, 2 * (s - 1)) : reflect_coords(c, -1, 2 * s - 1),
                       size);
  }
  return c;
}

// GridSample (opset 16: 4-d input, PyTorch's grid_sample): every output point reads the taps of
// its mode (1 nearest, 4 bilinear, 16 bicubic) at the grid's (x, y), those outside the input 0.
Tensor grid_sample(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& grid = a.in(1);
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0])
    fail("%s: needs X (N, C, H, W) and grid (N, H_out, W_out, 2), got %s and %s", where(a),
         fmt_shape(x.shape()), fmt_shape(grid.shape()));
  std::string mode = attr_or(a, "mode", "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  std::string padding = attr_or(a, "padding_mode", "zeros");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    fail("%s: mode '%s' is not one of bilinear, nearest, bicubic", where(a), mode);
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    fail("%s: padding_mode '%s' is not one of zeros, border, reflection", where(a), padding);
  bool align = a.attr_int("align_corners", 0) != 0;
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  int64_t ho = grid.shape()[1], wo = grid.shape()[2];
  DType ft = float_of(x);
  Tensor g = grid.cast(ft);
  Tensor ix =
      unnormalize(g.shrink({{0, n}, {0, ho}, {0, wo}, {0, 1}}).reshape({n, ho, wo}), w, align);
  Tensor iy =
      unnormalize(g.shrink({{0, n}, {0, ho}, {0, wo}, {1, 2}}).reshape({n, ho, wo}), h, align);
  // the taps: (y, x) coordinates (integral floats) and weights
  std::vector<Tensor> ty, tx, tw;
  if (mode == "bicubic") {
    Tensor x0 = ix.floor(), y0 = iy.floor();
    auto weights = [](const Tensor& t) {
      const double A = -0.75;
      auto near = [A](const Tensor& v) { return v.mul(A + 2).sub(A + 3).mul(v).mul(v).add(1.0); };
      auto far = [A](const Tensor& v) {
        return v.mul(A).sub(5 * A).mul(v).add(8 * A).mul(v).sub(4 * A);
      };
      Tensor one_minus = t.neg().add(1.0);
      return std::vector{far(t.add(1.0)), near(t), near(one_minus), far(one_minus.add(1.0))};
    };
    std::vector<Tensor> wx = weights(ix.sub(x0)), wy = weights(iy.sub(y0));
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 4; i++) {
        ty.push_back(pad_coords(y0.add(static_cast<double>(j - 1)), h, padding, align));
        tx.push_back(pad_coords(x0.add(static_cast<double>(i - 1)), w, padding, align));
        tw.push_back(wy[j].mul(wx[i]));
      }
  } else {
    ix = pad_coords(ix, w, padding, align), iy = pad_coords(iy, h, padding, align);
    if (mode == "nearest") {
      ty.push_back(iy.round()), tx.push_back(ix.round()), tw.push_back(Tensor::ones_like(ix));
    } else {
      Tensor x0 = ix.floor(), y0 = iy.floor();
      Tensor rx = ix.sub(x0), ry = iy.sub(y0);
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
          ty.push_back(y0.add(static_cast<double>(j)));
          tx.push_back(x0.add(static_cast<double>(i)));
          tw.push_back((j ? ry : ry.neg().add(1.0)).mul(i ? rx : rx.neg().add(1.0)));
        }
    }
  }
  int64_t taps = static_cast<int64_t>(tw.size());
  Tensor yy = Tensor::stack(ty, -1), xx = Tensor::stack(tx, -1), ww = Tensor::stack(tw, -1);
  Tensor inside = yy.ge(0.0)
                      .bitwise_and(yy.le(static_cast<double>(h - 1)))
                      .bitwise_and(xx.ge(0.0))
                      .bitwise_and(xx.le(static_cast<double>(w - 1)));
  Tensor flat = clip_coords(yy, h)
                    .mul(static_cast<double>(w))
                    .add(clip_coords(xx, w))
                    .cast(dtypes::int64)
                    .reshape({n, 1, ho * wo * taps})
                    .expand({n, c, ho * wo * taps});
  Tensor v = x.reshape({n, c, h * w}).gather(2, flat).reshape({n, c, ho, wo, taps}).cast(ft);
  Tensor picked = inside.unsqueeze(1).where(v.mul(ww.unsqueeze(1)), Tensor::zeros({}, ft));
  return picked.sum(-1).cast(x.dtype());
}

// ---- RoiAlign ----

// RoiAlign (opsets 10 and 16, as onnxruntime): each box's bins average (or max) their
// sampling_ratio^2 (or adaptive) bilinear samples. The boxes are read on the host; a sample's
// weights split into a row and a column part, so the input is gathered by rows, then columns.
Tensor roi_align(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  if (x.ndim() != 4) fail("%s: X must be (N, C, H, W), got %s", where(a), fmt_shape(x.shape()));
  const Tensor& rois_t = a.in(1);
  int64_t r_count = rois_t.ndim() == 2 ? rois_t.shape()[0] : -1;
  if (rois_t.ndim() != 2 || rois_t.shape()[1] != 4)
    fail("%s: rois must be (num_rois, 4), got %s", where(a), fmt_shape(rois_t.shape()));
  std::vector<int64_t> batch = a.host_ints(2);
  a.sized(batch, r_count, "batch_indices");
  std::string mode = attr_or(a, "mode", "avg");
  if (mode != "avg" && mode != "max") fail("%s: mode '%s' is not one of avg, max", where(a), mode);
  std::string ctm = attr_or(a, "coordinate_transformation_mode",
                            a.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    fail("%s: coordinate_transformation_mode '%s' is not supported", where(a), ctm);
  int64_t oh = a.attr_int("output_height", 1), ow = a.attr_int("output_width", 1);
  int64_t ratio = a.attr_int("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || ratio < 0)
    fail("%s: output_height %d, output_width %d and sampling_ratio %d must be positive", where(a),
         oh, ow, ratio);
  double scale = a.attr_float("spatial_scale", 1.0f), offset = ctm == "half_pixel" ? 0.5 : 0.0;
  int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  std::vector<double> rois = rois_t.cast(dtypes::float64).data<double>();

  // per box and axis: its start, bin size and samples per bin
  struct Axis {
    double start, bin;
    int64_t grid;
  };
  std::vector<Axis> ys, xs;
  int64_t gh = 1, gw = 1;
  for (int64_t r = 0; r < r_count; r++) {
    if (batch[r] < 0 || batch[r] >= n)
      fail("%s: batch index %d of box %d is outside [0, %d)", where(a), batch[r], r, n);
    const double* b = &rois[4 * r];
    auto axis = [&](double lo, double hi, int64_t out) {
      double start = lo * scale - offset, len = hi * scale - offset - start;
      if (ctm != "half_pixel") len = std::max(len, 1.0);
      double bin = len / static_cast<double>(out);
      double grid = ratio > 0 ? static_cast<double>(ratio) : std::ceil(bin);
      if (!(grid < 0x1p31))  // also NaN: a box of NaN or huge coordinates
        fail("%s: box %d samples %g points a bin", where(a), r, grid);
      return Axis{start, bin, static_cast<int64_t>(grid)};
    };
    ys.push_back(axis(b[1], b[3], oh)), xs.push_back(axis(b[0], b[2], ow));
    gh = std::max(gh, ys.back().grid), gw = std::max(gw, xs.back().grid);
  }
  a.check_bytes(32.0 * static_cast<double>(r_count) *
                    (static_cast<double>(oh) * static_cast<double>(gh) +
                     static_cast<double>(ow) * static_cast<double>(gw)),
                "the sampling taps of the boxes");
  // the two taps of every sample of one axis: (r, bin, sample, tap), `base` added to the index
  auto taps = [&](const std::vector<Axis>& ax, int64_t out, int64_t g, int64_t size, bool rows) {
    std::vector<int64_t> idx;
    std::vector<double> wt;
    for (int64_t r = 0; r < r_count; r++) {
      int64_t base = rows ? batch[r] * h : 0;
      for (int64_t p = 0; p < out; p++)
        for (int64_t s = 0; s < g; s++) {
          // a box with fewer samples repeats its first one (max) or adds nothing (avg)
          int64_t si = s < ax[r].grid ? s : 0;
          double v = ax[r].grid == 0 ? 0
                                     : ax[r].start + static_cast<double>(p) * ax[r].bin +
                                           (static_cast<double>(si) + 0.5) * ax[r].bin /
                                               static_cast<double>(ax[r].grid);
          bool none = (s >= ax[r].grid && mode == "avg") || ax[r].grid == 0 || !(v >= -1.0) ||
                      v > static_cast<double>(size);
          v = none ? 0 : std::max(v, 0.0);
          int64_t lo = static_cast<int64_t>(v), hi = lo + 1;
          if (lo >= size - 1) hi = lo = size - 1, v = static_cast<double>(lo);
          double l = v - static_cast<double>(lo);
          idx.push_back(base + lo), idx.push_back(base + hi);
          wt.push_back(none ? 0 : 1 - l), wt.push_back(none ? 0 : l);
        }
    }
    return std::pair{idx, wt};
  };
  auto [yi, yw] = taps(ys, oh, gh, h, true);
  auto [xi, xw] = taps(xs, ow, gw, w, false);
  int64_t ry = oh * gh * 2, rx = ow * gw * 2;
  DType ft = float_of(x);
  Tensor rows = x.permute({1, 0, 2, 3})
                    .reshape({c, n * h, w})
                    .gather(1, int64s(yi, {1, r_count * ry, 1}).expand({c, r_count * ry, w}));
  Tensor cols =
      int64s(xi, {1, r_count, 1, rx}).expand({c, r_count, ry, rx}).reshape({c, r_count * ry, rx});
  Tensor v = rows.gather(2, cols)
                 .reshape({c, r_count, oh, gh, 2, ow, gw, 2})
                 .cast(ft)
                 .mul(doubles(yw, {1, r_count, oh, gh, 2, 1, 1, 1}, ft))
                 .mul(doubles(xw, {1, r_count, 1, 1, 1, ow, gw, 2}, ft));
  std::vector<double> inv;
  for (int64_t r = 0; r < r_count; r++)
    inv.push_back(1.0 / static_cast<double>(std::max<int64_t>(ys[r].grid * xs[r].grid, 1)));
  Tensor y = mode == "max" ? v.max({3, 4, 6, 7})
                           : v.sum({3, 4, 6, 7}).mul(doubles(inv, {1, r_count, 1, 1}, ft));
  return y.permute({1, 0, 2, 3}).cast(x.dtype());
}

// ---- NonMaxSuppression ----

// onnxruntime's test of two boxes (corners or center_point_box's centers and sizes): whether
// their intersection over union passes the threshold.
bool suppresses(const float* a, const float* b, bool center, float threshold) {
  auto bounds = [center](const float* v, float& y0, float& x0, float& y1, float& x1) {
    if (center) {
      x0 = v[0] - v[2] / 2, x1 = v[0] + v[2] / 2, y0 = v[1] - v[3] / 2, y1 = v[1] + v[3] / 2;
    } else {
      y0 = std::min(v[0], v[2]), y1 = std::max(v[0], v[2]);
      x0 = std::min(v[1], v[3]), x1 = std::max(v[1], v[3]);
    }
  };
  float ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  bounds(a, ay0, ax0, ay1, ax1), bounds(b, by0, bx0, by1, bx1);
  float ix0 = std::max(ax0, bx0), ix1 = std::min(ax1, bx1);
  float iy0 = std::max(ay0, by0), iy1 = std::min(ay1, by1);
  if (ix1 <= ix0 || iy1 <= iy0) return false;
  float inter = (ix1 - ix0) * (iy1 - iy0);
  float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
  float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

// NonMaxSuppression: per batch and class, the boxes above score_threshold by falling score
// (ties: the lower index), each kept unless it overlaps a kept one by more than iou_threshold, at
// most max_output_boxes_per_class. Realizes its inputs: the output's length depends on them.
Tensor non_max_suppression(const NodeArgs& a) {
  const Tensor& boxes_t = a.in(0);
  const Tensor& scores_t = a.in(1);
  if (boxes_t.ndim() != 3 || boxes_t.shape()[2] != 4 || scores_t.ndim() != 3 ||
      scores_t.shape()[0] != boxes_t.shape()[0] || scores_t.shape()[2] != boxes_t.shape()[1])
    fail("%s: needs boxes (batches, boxes, 4) and scores (batches, classes, boxes), got %s and %s",
         where(a), fmt_shape(boxes_t.shape()), fmt_shape(scores_t.shape()));
  int64_t nb = boxes_t.shape()[0], ns = boxes_t.shape()[1], nc = scores_t.shape()[1];
  int64_t max_out = a.has(2) ? static_cast<int64_t>(a.host_scalar(2)) : 0;
  float iou = a.has(3) ? static_cast<float>(a.host_scalar(3)) : 0.0f;
  bool thresholded = a.has(4);
  float score_min = thresholded ? static_cast<float>(a.host_scalar(4)) : 0.0f;
  int64_t cpb = a.attr_int("center_point_box", 0);
  if (cpb != 0 && cpb != 1) fail("%s: center_point_box %d is not 0 or 1", where(a), cpb);
  std::vector<float> boxes = boxes_t.cast(dtypes::float32).data<float>();
  std::vector<float> scores = scores_t.cast(dtypes::float32).data<float>();
  std::vector<int64_t> out;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t c = 0; c < nc; c++) {
      const float* s = &scores[(b * nc + c) * ns];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < ns; i++)
        if (!thresholded || s[i] > score_min) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [s](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = std::none_of(kept.begin(), kept.end(), [&](int64_t k) {
          return suppresses(&boxes[(b * ns + k) * 4], &boxes[(b * ns + i) * 4], cpb, iou);
        });
        if (keep) kept.push_back(i);
      }
      for (int64_t k : kept) out.insert(out.end(), {b, c, k});
    }
  return int64s(out, {static_cast<int64_t>(out.size() / 3), 3});
}

// ---- LRN, MaxUnpool ----

// LRN: x / (bias + alpha / size * the sum of squares over the channels c - (size-1)/2 ..
// c + ceil((size-1)/2)) ^ beta.
Tensor lrn(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  if (!a.attr("size")) fail("%s: attribute 'size' is missing", where(a));
  int64_t size = a.attr_int("size", 1);
  if (size < 1) fail("%s: size %d must be positive", where(a), size);
  if (x.ndim() < 2)
    fail("%s: the input must be (N, C, ...), got %s", where(a), fmt_shape(x.shape()));
  int64_t rest = x.numel() / std::max<int64_t>(1, x.shape()[0] * x.shape()[1]);
  Tensor sq = x.mul(x)
                  .reshape({x.shape()[0], 1, x.shape()[1], rest})
                  .pad({{0, 0}, {0, 0}, {(size - 1) / 2, size / 2}, {0, 0}})
                  .avg_pool2d(PoolOpts{.kernel_size = {size, 1}, .stride = {1, 1}})
                  .reshape(x.shape());
  double alpha = a.attr_float("alpha", 1e-4f), beta = a.attr_float("beta", 0.75f),
         bias = a.attr_float("bias", 1.0f);
  return x.div(sq.mul(alpha).add(bias).pow(beta));
}

// MaxUnpool: the values written at their indices (into the flattened (N, C, spatial...) tensor
// of the size MaxPool's attributes imply), then zeros at the end of each axis up to output_shape.
Tensor max_unpool(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& indices = a.in(1);
  if (x.ndim() < 3 || indices.shape() != x.shape())
    fail("%s: needs X (N, C, ...) and indices of its shape, got %s and %s", where(a),
         fmt_shape(x.shape()), fmt_shape(indices.shape()));
  size_t n = static_cast<size_t>(x.ndim()) - 2;
  std::vector<int64_t> kernel = a.attr_ints("kernel_shape"), strides = a.attr_ints("strides"),
                       pads = a.attr_ints("pads");
  a.sized(kernel, n, "kernel_shape");
  if (strides.empty()) strides.assign(n, 1);
  if (pads.empty()) pads.assign(2 * n, 0);
  a.sized(strides, n, "strides"), a.sized(pads, 2 * n, "pads");
  Shape inferred = {x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < n; i++)
    inferred.push_back((x.shape()[2 + i] - 1) * strides[i] - (pads[i] + pads[n + i]) + kernel[i]);
  for (size_t i = 2; i < inferred.size(); i++)
    if (inferred[i] <= 0)
      fail("%s: the unpooled shape %s is empty (pads larger than the windows)", where(a),
           fmt_shape(inferred));
  int64_t plane = shape_numel(inferred, 2);
  Shape lead(x.ndim(), 1);
  lead[0] = x.shape()[0], lead[1] = x.shape()[1];
  Tensor planes = Tensor::arange(0, static_cast<double>(lead[0] * lead[1]), 1, dtypes::int64)
                      .mul(static_cast<long>(plane))
                      .reshape(lead);
  Tensor y =
      x.max_unpool2d(indices.cast(dtypes::int64).sub(planes), UnpoolOpts{.output_size = inferred});
  if (!a.has(2)) return y;
  std::vector<int64_t> want = a.sized(a.host_ints(2), x.ndim(), "output_shape");
  std::vector<std::pair<int64_t, int64_t>> grow;
  for (size_t i = 0; i < want.size(); i++) {
    if (want[i] < inferred[i] || (i < 2 && want[i] != inferred[i]))
      fail("%s: output_shape %s is smaller than the unpooled %s", where(a), fmt_shape(want),
           fmt_shape(inferred));
    grow.emplace_back(0, want[i] - inferred[i]);
  }
  return y.pad(grow);
}

}  // namespace

void add_image_ops(OpTable& t) {
  t.insert({
      {"Resize", [](const NodeArgs& a) { return std::vector{resize(a, false)}; }},
      {"Upsample", [](const NodeArgs& a) { return std::vector{resize(a, true)}; }},
      {"GridSample", [](const NodeArgs& a) { return std::vector{grid_sample(a)}; }},
      {"RoiAlign", [](const NodeArgs& a) { return std::vector{roi_align(a)}; }},
      {"NonMaxSuppression", [](const NodeArgs& a) { return std::vector{non_max_suppression(a)}; }},
      {"LRN", [](const NodeArgs& a) { return std::vector{lrn(a)}; }},
      {"MaxUnpool", [](const NodeArgs& a) { return std::vector{max_unpool(a)}; }},
  });
}

}  // namespace tc::onnx
