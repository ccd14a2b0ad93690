// Products: dot, matmul, linear, sequential. A matmul is a broadcast multiply and a sum over the
// shared axis; the scheduler fuses it into one kernel and nothing is materialized.
#include <algorithm>

#include "tinycore/tensor.h"
#include "tinycore/tensor_layout.h"

namespace tc {
namespace {

// A matrix (K, N) read from a copy blocked by 32 columns, (N/32, K, 32), for a product with many
// rows: the 32 columns a kernel's lanes read are one run of memory per panel, which stays in
// cache (and in the TLB) while every row of the other operand streams past it, instead of K
// rows a page apart. Small products read it as it is.
Tensor blocked_columns(const Tensor& w, int64_t rows) {
  int64_t k = w.shape()[0], n = w.shape()[1];
  if (rows < 64 || k < 64 || n < 64 || n % 32 != 0) return w;
  return blocked_copy(w, 1, 32);
}

}  // namespace

Tensor Tensor::dot(const Tensor& w, std::optional<DType> dtype) const {
  int dx = ndim(), dw = w.ndim();
  if (dx == 0 || dw == 0)
    fail("Tensor.dot: both tensors need to be at least 1-D, got %d-D %s and %d-D %s", dx,
         fmt_shape(shape()), dw, fmt_shape(w.shape()));
  int axis_w = dw - std::min(dw, 2);  // the contracted axis of w
  if (shape().back() != w.shape()[axis_w])
    fail("Tensor.dot: cannot dot %s and %s (%d vs %d along the contracted axis)",
         fmt_shape(shape()), fmt_shape(w.shape()), shape().back(), w.shape()[axis_w]);
  try {  // the leading (batch) dimensions broadcast
    broadcast_shape("dot", {Shape(shape().begin(), shape().end() - std::min(dx, 2)),
                            Shape(w.shape().begin(), w.shape().begin() + axis_w)});
  } catch (const Error&) {
    fail("Tensor.dot: the batch dimensions of %s and %s do not broadcast", fmt_shape(shape()),
         fmt_shape(w.shape()));
  }
  int ones = std::min({dx - 1, dw - 1, 1});
  Shape xs(shape().begin(), shape().end() - 1), ws(w.shape().begin(), w.shape().begin() + axis_w);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(shape().back());
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  if (Tensor a = autocast(), b = w.autocast();
      a.dtype() != this->dtype() || b.dtype() != w.dtype()) {
    // the narrow operands multiply exactly and sum in float32 (as tensor cores do)
    Tensor::Autocast off(std::nullopt);
    Tensor s = a.float_().dot(b.float_(), dtype);
    return dtype ? s : s.cast(least_upper_dtype({a.dtype(), b.dtype()}));
  }
  int64_t rows = shape().back() == 0 ? 0 : numel() / shape().back();
  Tensor x = reshape(xs), y = (dw == 2 ? blocked_columns(w, rows) : w).reshape(ws);
  if (dw >= 2) y = y.transpose(-1, -2);
  Tensor prod = x.mul(y);
  Tensor s = dtype ? prod.cast(*dtype).sum(-1) : prod.sum(-1);
  return s.cast(dtype ? *dtype : least_upper_dtype({this->dtype(), w.dtype()}));
}

Tensor Tensor::matmul(const Tensor& x, bool reverse, std::optional<DType> dtype) const {
  return reverse ? x.dot(*this, dtype) : dot(x, dtype);
}

Tensor Tensor::linear(const Tensor& weight, const std::optional<Tensor>& bias) const {
  Tensor x = weight.ndim() == 1 ? mul(weight) : dot(weight);
  return bias ? x.add(*bias) : x;
}

Tensor Tensor::sequential(const std::vector<std::function<Tensor(const Tensor&)>>& layers) const {
  Tensor x = *this;
  for (const auto& f : layers) x = f(x);
  return x;
}

}  // namespace tc
