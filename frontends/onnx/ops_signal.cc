// The ONNX signal-processing operators: the windows, DFT and STFT (matmuls by cos and sin
// matrices), the mel filter bank. The tables are built in float64 with Tensor ops.
#include <cmath>
#include <numbers>
#include <optional>
#include <utility>

#include "frontends/onnx/op_table.h"
#include "frontends/onnx/proto.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// The dtype an output_datatype attribute names (float by default).
DType output_dtype(const NodeArgs& a) {
  return dtype_of_onnx(static_cast<int>(a.attr_int("output_datatype", 1)));
}

// A count read from input `i`, checked to be positive.
int64_t positive(const NodeArgs& a, size_t i, const char* what) {
  double v = a.host_scalar(i);
  if (!(v >= 1) || v != std::floor(v))
    fail("ONNX node '%s' (%s): %s must be a positive integer, got %g", a.node.name(),
         a.node.op_type(), what, v);
  return static_cast<int64_t>(v);
}

// A generalized cosine window of input 0's size: sum_j coef[j] * cos(2 pi j n / D), D the size
// (periodic) or the size - 1 (symmetric).
Tensor cosine_window(const NodeArgs& a, std::initializer_list<double> coef) {
  int64_t size = positive(a, 0, "the size");
  double d = a.attr_int("periodic", 1) ? size : std::max<int64_t>(size - 1, 1);
  Tensor phase = Tensor::arange(0, static_cast<double>(size), 1, dtypes::float64)
                     .mul(2 * std::numbers::pi / d);
  Tensor w = Tensor::zeros({size}, dtypes::float64);
  double j = 0;
  for (double c : coef) w = w.add(phase.mul(j++).cos().mul(c));
  return w.cast(output_dtype(a));
}

// A signal's real and imaginary parts (the imaginary absent for a real one).
struct Complex {
  Tensor re;
  std::optional<Tensor> im;
};

// The DFT along the last axis of `x` (length n): bins 0..n-1, or 0..n/2 where onesided; the
// inverse one conjugates and divides by n. exp(-+2 pi i k m / n) as cos and sin matrices (k m
// reduced mod n in integers so the angles stay exact), applied as matmuls.
std::pair<Tensor, Tensor> dft(const Complex& x, bool onesided, bool inverse) {
  int64_t n = x.re.shape().back(), bins = onesided ? n / 2 + 1 : n;
  Tensor m = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int64).reshape({n, 1});
  Tensor k = Tensor::arange(0, static_cast<double>(bins), 1, dtypes::int64).reshape({1, bins});
  Tensor angle = m.mul(k)
                     .mod(Tensor::full({}, n, dtypes::int64))
                     .cast(dtypes::float64)
                     .mul(2 * std::numbers::pi / static_cast<double>(n));
  DType dt = x.re.dtype();
  double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
  Tensor c = angle.cos().mul(scale).cast(dt),
         s = angle.sin().mul(inverse ? scale : -scale).cast(dt);
  Tensor re = x.re.matmul(c), im = x.re.matmul(s);
  if (x.im) re = re.sub(x.im->matmul(s)), im = im.add(x.im->matmul(c));
  return {re, im};
}

// A signal (..., 1 or 2) split into its real and imaginary parts.
Complex complex_parts(const NodeArgs& a, const Tensor& x) {
  if (x.ndim() < 2 || (x.shape().back() != 1 && x.shape().back() != 2))
    fail(
        "ONNX node '%s' (%s): the signal's last axis must hold 1 (real) or 2 (complex) values, "
        "got %s",
        a.node.name(), a.node.op_type(), fmt_shape(x.shape()));
  Complex out{x.getitem({Ellipsis, 0}), std::nullopt};
  if (x.shape().back() == 2) out.im = x.getitem({Ellipsis, 1});
  return out;
}

Tensor dft_node(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  Complex parts = complex_parts(a, x);
  // the axis: an attribute (1 by default) until opset 20, then input 2 (-2 by default)
  int64_t given = a.opset >= 20 ? (a.has(2) ? static_cast<int64_t>(a.host_scalar(2)) : -2)
                                : a.attr_int("axis", 1);
  int axis = axis_of(given, x.ndim());
  if (axis < 0 || axis >= x.ndim() - 1)
    fail("ONNX node '%s' (DFT): axis %d is out of range for a signal of shape %s", a.node.name(),
         given, fmt_shape(x.shape()));
  auto to_last = [&](const Tensor& t) { return t.transpose(axis, -1); };
  parts.re = to_last(parts.re);
  if (parts.im) parts.im = to_last(*parts.im);
  if (a.has(1)) {  // dft_length: the signal cut or padded with zeros to it
    int64_t n = positive(a, 1, "dft_length"), have = parts.re.shape().back();
    std::vector<std::pair<int64_t, int64_t>> fit(parts.re.ndim(), {0, 0});
    fit.back() = {0, n - have};
    auto resize = [&](const Tensor& t) {
      if (n >= have) return t.pad(fit);
      std::vector<std::pair<int64_t, int64_t>> keep;
      for (int64_t d : t.shape()) keep.emplace_back(0, d);
      keep.back() = {0, n};
      return t.shrink(keep);
    };
    parts.re = resize(parts.re);
    if (parts.im) parts.im = resize(*parts.im);
  }
  auto [re, im] = dft(parts, a.attr_int("onesided", 0), a.attr_int("inverse", 0));
  return to_last(re).stack({to_last(im)}, -1);
}

// STFT: frames of frame_length every frame_step along axis 1 of (batch, length, 1 or 2), each
// multiplied by the window, then their DFT: (batch, frames, bins, 2).
Tensor stft(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  int64_t step = positive(a, 1, "frame_step");
  int64_t length = a.has(3) ? positive(a, 3, "frame_length") : a.has(2) ? a.in(2).numel() : 0;
  if (x.ndim() != 3 || length < 1 || length > x.shape()[1] ||
      (a.has(2) && (a.in(2).ndim() != 1 || a.in(2).numel() != length)))
    fail("ONNX node '%s' (STFT): frames of %d (window %s) do not fit a signal of shape %s",
         a.node.name(), length, a.has(2) ? fmt_shape(a.in(2).shape()) : "none",
         fmt_shape(x.shape()));
  Complex parts = complex_parts(a, x.unfold(1, length, step).transpose(-1, -2));
  if (a.has(2)) {
    Tensor w = a.in(2).cast(x.dtype());
    parts.re = parts.re.mul(w);
    if (parts.im) parts.im = parts.im->mul(w);
  }
  auto [re, im] = dft(parts, a.attr_int("onesided", 1), false);
  return re.stack({im}, -1);
}

// MelWeightMatrix (dft_length / 2 + 1, num_mel_bins): triangles rising from bin f[i] to f[i+1]
// and falling to f[i+2], the f evenly spaced in mels between the edges, as ONNX's reference
// places them (floor((dft_length + 1) * hz / sample_rate)).
Tensor mel_weights(const NodeArgs& a) {
  int64_t mels = positive(a, 0, "num_mel_bins"), n = positive(a, 1, "dft_length");
  double rate = a.host_scalar(2), lo = a.host_scalar(3), hi = a.host_scalar(4);
  if (!(rate > 0) || !(lo >= 0) || !(hi > lo))
    fail(
        "ONNX node '%s' (MelWeightMatrix): want 0 <= lower_edge_hertz < upper_edge_hertz and a "
        "positive sample_rate, got %g, %g and %g",
        a.node.name(), lo, hi, rate);
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double step = (mel(hi) - mel(lo)) / static_cast<double>(mels + 2);
  Tensor hz = Tensor::arange(0, static_cast<double>(mels + 2), 1, dtypes::float64)
                  .mul(step)
                  .add(mel(lo))
                  .div(2595.0)
                  .pow(10.0, true)
                  .sub(1.0)
                  .mul(700.0);
  Tensor f = hz.mul(static_cast<double>(n + 1)).div(rate).floor();
  auto edge = [&](int64_t from) { return f.shrink({{from, from + mels}}).reshape({1, mels}); };
  Tensor l = edge(0), c = edge(1), h = edge(2);
  Tensor j =
      Tensor::arange(0, static_cast<double>(n / 2 + 1), 1, dtypes::float64).reshape({n / 2 + 1, 1});
  Tensor rise =
      c.eq(l).where(j.eq(c).cast(dtypes::float64),
                    j.ge(l).bitwise_and(j.le(c)).where(j.sub(l).div(c.sub(l).maximum(1.0)), 0.0));
  Tensor fall = h.sub(j).div(h.sub(c).maximum(1.0));
  return j.ge(c).bitwise_and(j.lt(h)).where(fall, rise).cast(output_dtype(a));
}

}  // namespace

void add_signal_ops(OpTable& t) {
  t.insert({
      {"HannWindow",
       [](const NodeArgs& a) {
         return std::vector{cosine_window(a, {0.5, -0.5})};
       }},
      {"HammingWindow",
       [](const NodeArgs& a) {
         return std::vector{cosine_window(a, {25.0 / 46, -21.0 / 46})};
       }},
      {"BlackmanWindow",
       [](const NodeArgs& a) {
         return std::vector{cosine_window(a, {0.42, -0.5, 0.08})};
       }},
      {"DFT", [](const NodeArgs& a) { return std::vector{dft_node(a)}; }},
      {"STFT", [](const NodeArgs& a) { return std::vector{stft(a)}; }},
      {"MelWeightMatrix", [](const NodeArgs& a) { return std::vector{mel_weights(a)}; }},
  });
}

}  // namespace tc::onnx
