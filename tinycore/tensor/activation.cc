// Activations: relu, sigmoid (its gradient a rule of its own) and the rest of tinygrad's activation
// functions, each composed of elementwise ops.
#include <cmath>
#include <string>
#include <vector>

#include "tinycore/gradient.h"
#include "tinycore/tensor.h"

namespace tc {

Tensor Tensor::relu() const { return gt(ConstValue(0)).where(*this, ConstValue(0)); }
namespace {
// s * (1 - s) from sigmoid's value s: derived through 1 / (1 + exp(-x)) it is inf * 0 = NaN
// where exp overflows (|x| > 88 in float32)
std::vector<UOpRef> sigmoid_gradient(const UOpRef& ret, const UOpRef& grad) {
  Tensor s(ret);
  return {Tensor(grad).mul(s.mul(s.sub(ConstValue(1), true))).uop()};
}
}  // namespace
Tensor Tensor::sigmoid() const {
  static const int64_t rule = register_gradient_rule(sigmoid_gradient);
  Tensor x = as_float();
  Tensor value = x.detach().neg().exp().add(ConstValue(1)).reciprocal();
  return Tensor(with_gradient_rule(value.uop(), {x.uop()}, rule));
}

Tensor Tensor::gelu(const std::string& approximate) const {
  if (approximate == "none")  // x * Phi(x)
    return mul(ConstValue(0.5)).mul(div(ConstValue(M_SQRT2)).erf().add(ConstValue(1.0)));
  if (approximate != "tanh")
    fail("Tensor.gelu: approximate=\"%s\" is not supported (\"tanh\" or \"none\")", approximate);
  Tensor inner =
      add(mul(*this).mul(*this).mul(ConstValue(0.044715))).mul(ConstValue(std::sqrt(2 / M_PI)));
  return mul(ConstValue(0.5)).mul(inner.tanh().add(ConstValue(1.0)));
}
Tensor Tensor::quick_gelu() const { return mul(mul(ConstValue(1.702)).sigmoid()); }
Tensor Tensor::swish() const { return mul(sigmoid()); }
Tensor Tensor::silu() const { return swish(); }
// relu6 and hardsigmoid as clamps: tinygrad's relu(y) - relu(y - c) is the same for finite y
// but NaN at +inf
Tensor Tensor::relu6() const { return relu().minimum(ConstValue(6)); }
Tensor Tensor::hardsigmoid(double alpha, double beta) const {
  return mul(ConstValue(alpha)).add(ConstValue(beta)).relu().minimum(ConstValue(1.0));
}
Tensor Tensor::hardswish() const {
  return mul(add(ConstValue(3)).relu6()).mul(ConstValue(1.0 / 6));
}
Tensor Tensor::hardtanh(double min_val, double max_val) const {
  return clip(ConstValue(min_val), ConstValue(max_val));
}
Tensor Tensor::elu(double alpha) const {
  return relu().sub(exp().sub(ConstValue(1.0), true).relu().mul(ConstValue(alpha)));
}
Tensor Tensor::celu(double alpha) const {
  Tensor neg_part = div(ConstValue(alpha)).exp().sub(ConstValue(1.0)).mul(ConstValue(alpha));
  return maximum(ConstValue(0)).add(neg_part.minimum(ConstValue(0)));
}
Tensor Tensor::selu(double alpha, double gamma) const {
  Tensor neg_part = exp().sub(ConstValue(1.0)).mul(ConstValue(alpha));
  return ge(ConstValue(0)).detach().where(*this, neg_part).mul(ConstValue(gamma));
}
Tensor Tensor::leaky_relu(double neg_slope) const {
  return lt(ConstValue(0)).where(mul(ConstValue(neg_slope)), *this);
}
Tensor Tensor::softplus(double beta) const {
  // log(1 + exp(beta x)) / beta as logaddexp(beta x, 0): finite where exp(beta x) overflows
  return mul(ConstValue(beta)).logaddexp(ConstValue(0.0)).mul(ConstValue(1.0 / beta));
}
Tensor Tensor::softsign() const { return div(abs().add(ConstValue(1))); }
Tensor Tensor::mish() const { return mul(softplus().tanh()); }

Tensor Tensor::logsigmoid() const {
  // min(x, 0) - log(1 + exp(-|x|)): exp never overflows
  Tensor x = as_float();
  return x.minimum(ConstValue(0.0)).sub(x.abs().neg().exp().add(ConstValue(1.0)).log());
}

}  // namespace tc
