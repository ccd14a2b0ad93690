#include "frontends/onnx/layers.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/error.h"

namespace tc::onnx {
namespace {

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
  std::vector<int64_t> kernel(weight.shape().begin() + 2, weight.shape().end());
  Window w = window(a, x, kernel);
  ConvOpts o{.groups = a.attr_int("group", 1), .stride = w.strides, .dilation = w.dilations};
  return x.pad(w.pads).conv2d(weight, bias, o);
}

Tensor conv_transpose(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& weight = a.in(1);
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
