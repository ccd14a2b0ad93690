#include "frontends/onnx/layers.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// Checks every value of the attribute `what` is at least `least`.
void at_least(const NodeArgs& a, const std::vector<int64_t>& v, int64_t least, const char* what) {
  for (int64_t x : v)
    if (x < least)
      fail("ONNX node '%s' (%s): %s holds %d, want values >= %d", a.node.name(), a.node.op_type(),
           what, x, least);
}

// A conv's weight: (C_out, C_in / groups, k...) or, transposed, (C_in, C_out / groups, k...), of
// the input's rank.
const Tensor& checked_weight(const NodeArgs& a, const Tensor& x, const Tensor& w) {
  if (w.ndim() != x.ndim() || w.ndim() < 3)
    fail("ONNX node '%s' (%s): the weight %s must have the input's rank (%d) and a spatial axis",
         a.node.name(), a.node.op_type(), fmt_shape(w.shape()), x.ndim());
  return w;
}

// A conv's or pool's window attributes over the input's spatial axes, and the input padded as its
// pads (or auto_pad) say: (begin, end) per axis, ONNX's pads being all begins then all ends.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<std::pair<int64_t, int64_t>> pads;  // every axis of the input
};
Window window(const NodeArgs& a, const Tensor& x, std::vector<int64_t> kernel) {
  size_t n = kernel.size();
  if (x.ndim() < 3)
    fail("ONNX node '%s' (%s): the input must be (N, C, ...), got %s", a.node.name(),
         a.node.op_type(), fmt_shape(x.shape()));
  a.sized(kernel, x.ndim() - 2, "kernel_shape");
  Window w{kernel, a.attr_ints("strides"), a.attr_ints("dilations"), {{0, 0}, {0, 0}}};
  if (w.strides.empty()) w.strides.assign(n, 1);
  if (w.dilations.empty()) w.dilations.assign(n, 1);
  a.sized(w.strides, n, "strides"), a.sized(w.dilations, n, "dilations");
  std::vector<int64_t> pads = a.attr_ints("pads");
  if (!pads.empty()) a.sized(pads, 2 * n, "pads");
  at_least(a, kernel, 1, "kernel_shape"), at_least(a, w.strides, 1, "strides");
  at_least(a, w.dilations, 1, "dilations"), at_least(a, pads, 0, "pads");
  std::string autopad = a.attr("auto_pad") ? a.attr("auto_pad")->s() : "NOTSET";
  for (size_t i = 0; i < n; i++) {
    int64_t in = x.shape()[2 + i], begin = 0, end = 0;
    if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1 - in);
      begin = autopad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (!pads.empty() && autopad != "VALID") {
      begin = pads[i], end = pads[n + i];
    }
    w.pads.emplace_back(begin, end);
  }
  return w;
}

}  // namespace

Tensor conv(const NodeArgs& a) {
  std::optional<Tensor> bias;
  if (a.has(2)) bias = a.in(2);
  return conv(a, a.in(0), a.in(1), bias);
}

Tensor conv(const NodeArgs& a, const Tensor& x, const Tensor& weight,
            const std::optional<Tensor>& bias) {
  checked_weight(a, x, weight);
  std::vector<int64_t> kernel(weight.shape().begin() + 2, weight.shape().end());
  Window w = window(a, x, kernel);
  ConvOpts o{.groups = a.attr_int("group", 1), .stride = w.strides, .dilation = w.dilations};
  return x.pad(w.pads).conv2d(weight, bias, o);
}

Tensor conv_transpose(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& weight = checked_weight(a, x, a.in(1));
  size_t n = weight.shape().size() - 2;
  std::vector<int64_t> strides = a.attr_ints("strides"), dilations = a.attr_ints("dilations"),
                       pads = a.attr_ints("pads"), out_pad = a.attr_ints("output_padding"),
                       out_shape = a.attr_ints("output_shape");
  if (strides.empty()) strides.assign(n, 1);
  if (dilations.empty()) dilations.assign(n, 1);
  if (out_pad.empty()) out_pad.assign(n, 0);
  a.sized(strides, n, "strides"), a.sized(dilations, n, "dilations");
  a.sized(out_pad, n, "output_padding");
  if (!pads.empty()) a.sized(pads, 2 * n, "pads");
  at_least(a, strides, 1, "strides"), at_least(a, dilations, 1, "dilations");
  at_least(a, pads, 0, "pads"), at_least(a, out_pad, 0, "output_padding");
  if (!out_shape.empty() && out_shape.size() < n) a.sized(out_shape, n, "output_shape");
  std::string autopad = a.attr("auto_pad") ? a.attr("auto_pad")->s() : "NOTSET";
  ConvTransposeOpts o{.groups = a.attr_int("group", 1), .stride = strides, .dilation = dilations};
  Tensor y = x.conv_transpose2d(weight, std::nullopt, o);
  std::vector<std::pair<int64_t, int64_t>> grow(2, {0, 0}), keep(2);
  keep[0] = {0, y.shape()[0]}, keep[1] = {0, y.shape()[1]};
  for (size_t i = 0; i < n; i++) {
    int64_t full = y.shape()[2 + i] + out_pad[i], begin = 0, end = 0;
    if (!out_shape.empty() || autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
      int64_t want =
          out_shape.empty() ? x.shape()[2 + i] * strides[i] : out_shape[out_shape.size() - n + i];
      int64_t total = full - want;  // below 0: the output grows at the end, as output_padding
      if (total < 0) {
        out_pad[i] -= total, full = want;
      } else {
        begin = autopad == "SAME_UPPER" ? total / 2 : total - total / 2;
        end = total - begin;
      }
    } else if (!pads.empty()) {
      begin = pads[i], end = pads[n + i];
    }
    grow.emplace_back(0, out_pad[i]);
    keep.emplace_back(begin, full - end);
  }
  y = y.pad(grow).shrink(keep);
  if (!a.has(2)) return y;
  Shape c(y.ndim(), 1);
  c[1] = y.shape()[1];
  return y.add(a.in(2).reshape(c));
}

Tensor pool(const NodeArgs& a, bool max) {
  const Tensor& x = a.in(0);
  Window w = window(a, x, a.attr_ints("kernel_shape"));
  PoolOpts o{.kernel_size = w.kernel,
             .stride = w.strides,
             .dilation = w.dilations,
             .ceil_mode = a.attr_int("ceil_mode", 0) != 0};
  if (max) {
    ConstValue lowest = dtypes::is_float(x.dtype())
                            ? ConstValue(-std::numeric_limits<double>::infinity())
                            : ConstValue(static_cast<long>(dtypes::min(x.dtype())));
    return x.pad(w.pads, lowest).max_pool2d(o);
  }
  Tensor mean = x.pad(w.pads).avg_pool2d(o);
  if (a.attr_int("count_include_pad", 0)) return mean;
  return mean.div(Tensor::full_like(x, 1.0f).pad(w.pads).avg_pool2d(o));
}

std::pair<Tensor, Tensor> max_pool_with_indices(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  Window w = window(a, x, a.attr_ints("kernel_shape"));
  size_t n = w.kernel.size();
  std::vector<int64_t> pads;  // tinycore's order: the last axis's (begin, end) first
  for (size_t i = n; i-- > 0;)
    pads.push_back(w.pads[2 + i].first), pads.push_back(w.pads[2 + i].second);
  PoolOpts o{.kernel_size = w.kernel,
             .stride = w.strides,
             .dilation = w.dilations,
             .padding = pads,
             .ceil_mode = a.attr_int("ceil_mode", 0) != 0};
  auto [y, at] = x.max_pool2d_with_indices(o);
  Tensor idx = at.cast(dtypes::int64);  // row-major within the input's plane
  Shape spatial(x.shape().begin() + 2, x.shape().end());
  if (a.attr_int("storage_order", 0)) {  // column-major: the first spatial axis varies fastest
    Tensor rest = idx, col = Tensor::zeros_like(idx);
    int64_t below = shape_numel(spatial);
    for (size_t i = 0, stride = 1; i < n; i++) {  // coordinate i of the row-major index
      below /= spatial[i];
      Tensor c = rest.idiv(Tensor::full({}, static_cast<long>(below), dtypes::int64));
      rest = rest.sub(c.mul(static_cast<long>(below)));
      col = col.add(c.mul(static_cast<long>(stride)));
      stride *= static_cast<size_t>(spatial[i]);
    }
    idx = col;
  }
  // ONNX's indices run over the whole flattened (N, C, spatial...) input
  Shape lead(x.ndim(), 1);
  lead[0] = x.shape()[0], lead[1] = x.shape()[1];
  Tensor planes = Tensor::arange(0, static_cast<double>(lead[0] * lead[1]), 1, dtypes::int64)
                      .mul(static_cast<long>(shape_numel(spatial)))
                      .reshape(lead);
  return {y, idx.add(planes)};
}

Tensor nll_loss(const NodeArgs& a, const Tensor& logp, const Tensor& target,
                const std::optional<Tensor>& weight) {
  Shape classes_shape(logp.ndim(), 1);
  classes_shape[1] = logp.shape()[1];
  Tensor t = target.cast(dtypes::int64).unsqueeze(1);
  Tensor picked = Tensor::arange(0, static_cast<double>(logp.shape()[1]), 1, dtypes::int64)
                      .reshape(classes_shape)
                      .eq(t);
  if (const auto* ignore = a.attr("ignore_index"))
    picked = picked.bitwise_and(t.ne(static_cast<long>(ignore->i())));
  Tensor w = weight ? weight->cast(logp.dtype()).reshape(classes_shape)
                    : Tensor::full(classes_shape, 1.0f, logp.dtype());
  Tensor wp = picked.where(w, Tensor::full({}, 0.0f, logp.dtype()));
  Tensor loss = logp.mul(wp).sum(1).neg();
  std::string reduction = a.attr("reduction") ? a.attr("reduction")->s() : "mean";
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  return loss.sum().div(wp.sum());
}

}  // namespace tc::onnx
