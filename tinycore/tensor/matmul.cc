// Products: dot, matmul, linear, sequential. A matmul is a broadcast multiply and a sum over the
// shared axis; the scheduler fuses it into one kernel and nothing is materialized but the blocked
// copy of an operand that it may choose (schedule/layout.h).
#include <algorithm>
#include <vector>

#include "tinycore/gradient.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

// The gradients of y = x.dot(w), written as products themselves: dx = g.dot(wᵀ) and
// dw = xᵀ.dot(g), with x's batch axes taken as rows when w is a matrix. Autograd through the
// broadcast multiply and sum gives the same values, but as sums whose operands are both read
// along the summed axis (dx of x @ Wᵀ reads W's rows), with no output axis for SIMD lanes: a
// fifth of the speed. As products, the scheduler lays out their operands like any other's
// (schedule/layout.h).
std::vector<UOpRef> dot_gradients(const UOpRef& ret, const UOpRef& grad) {
  Tensor x(ret->src[1]), w(ret->src[2]), g(grad);
  if (w.ndim() == 2) {
    int64_t k = w.shape()[0], n = w.shape()[1];
    Tensor gx = g.dot(w.transpose());
    Tensor gw = x.reshape({x.numel() / k, k}).transpose().dot(g.reshape({g.numel() / n, n}));
    return {gx.uop(), gw.uop()};
  }
  return {g.dot(w.transpose(-1, -2)).uop(), x.transpose(-1, -2).dot(g).uop()};
}

// Whether dot_gradients serves x.dot(w): matrices or stacks of them with the same batch axes,
// of one float dtype, none empty (autograd handles the rest: vectors, broadcast batches).
bool has_dot_gradients(const Tensor& x, const Tensor& w) {
  int dx = x.ndim(), dw = w.ndim();
  if (dx < 2 || dw < 2 || x.dtype() != w.dtype() || !dtypes::is_float(x.dtype())) return false;
  if (x.numel() == 0 || w.numel() == 0) return false;
  return dw == 2 || Shape(x.shape().begin(), x.shape().end() - 2) ==
                        Shape(w.shape().begin(), w.shape().end() - 2);
}

// x.dot(w) for checked shapes: a broadcast multiply and a sum over the shared axis.
Tensor product(const Tensor& x, const Tensor& w, std::optional<DType> dtype) {
  int dx = x.ndim(), dw = w.ndim(), axis_w = dw - std::min(dw, 2);
  int ones = std::min({dx - 1, dw - 1, 1});
  Shape xs(x.shape().begin(), x.shape().end() - 1),
      ws(w.shape().begin(), w.shape().begin() + axis_w);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(x.shape().back());
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  Tensor y = w.reshape(ws);
  if (dw >= 2) y = y.transpose(-1, -2);
  Tensor prod = x.reshape(xs).mul(y);
  Tensor s = dtype ? prod.cast(*dtype).sum(-1) : prod.sum(-1);
  return s.cast(dtype ? *dtype : least_upper_dtype({x.dtype(), w.dtype()}));
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
  if (Tensor a = autocast(), b = w.autocast();
      a.dtype() != this->dtype() || b.dtype() != w.dtype()) {
    // the narrow operands multiply exactly and sum in float32 (as tensor cores do)
    Tensor::Autocast off(std::nullopt);
    Tensor s = a.float_().dot(b.float_(), dtype);
    return dtype ? s : s.cast(least_upper_dtype({a.dtype(), b.dtype()}));
  }
  if (!dtype && has_dot_gradients(*this, w)) {
    static const int64_t rule = register_gradient_rule(dot_gradients);
    Tensor value = product(detach(), w.detach(), std::nullopt);
    return Tensor(with_gradient_rule(value.uop(), {uop(), w.uop()}, rule));
  }
  return product(*this, w, dtype);
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
