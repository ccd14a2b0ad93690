#include "nn/recurrent.h"

#include <cmath>

#include "tinycore/error.h"

namespace tc::nn {
namespace {
Tensor uniform_init(Shape shape, double bound) {
  return Tensor::uniform(std::move(shape), {.low = -bound, .high = bound, .dtype = std::nullopt})
      .contiguous()
      .realize();
}
}  // namespace

LSTMCell::LSTMCell(int64_t input, int64_t hidden, bool with_bias)
    : weight_ih(uniform_init({4 * hidden, input}, 1 / std::sqrt(static_cast<double>(hidden)))),
      weight_hh(uniform_init({4 * hidden, hidden}, 1 / std::sqrt(static_cast<double>(hidden)))),
      input_(input),
      hidden_(hidden) {
  double bound = 1 / std::sqrt(static_cast<double>(hidden));
  register_parameter("weight_ih", &weight_ih);
  register_parameter("weight_hh", &weight_hh);
  if (with_bias) {
    bias_ih = uniform_init({4 * hidden}, bound);
    bias_hh = uniform_init({4 * hidden}, bound);
    register_parameter("bias_ih", &*bias_ih);
    register_parameter("bias_hh", &*bias_hh);
  }
}

LSTMCell::State LSTMCell::forward(const Tensor& x, const std::optional<State>& state) {
  if (x.ndim() < 1 || x.ndim() > 2 || x.shape().back() != input_)
    fail("LSTMCell: input of shape %s is not (batch, %d) or (%d)", fmt_shape(x.shape()), input_,
         input_);
  bool unbatched = x.ndim() == 1;
  Tensor xb = unbatched ? x.unsqueeze(0) : x;
  Shape hs = {xb.shape()[0], hidden_};
  Tensor h = Tensor::zeros(hs, x.dtype()), c = h;
  if (state) {
    Shape want = unbatched ? Shape{hidden_} : hs;
    if (state->first.shape() != want || state->second.shape() != want)
      fail("LSTMCell: state (h %s, c %s) for input %s must both be %s",
           fmt_shape(state->first.shape()), fmt_shape(state->second.shape()), fmt_shape(x.shape()),
           fmt_shape(want));
    h = state->first.reshape(hs);
    c = state->second.reshape(hs);
  }
  Tensor gates = xb.linear(weight_ih.T(), bias_ih) + h.linear(weight_hh.T(), bias_hh);
  std::vector<Tensor> g = gates.chunk(4, 1);  // i, f, g, o
  Tensor c_next = g[1].sigmoid() * c + g[0].sigmoid() * g[2].tanh();
  Tensor h_next = g[3].sigmoid() * c_next.tanh();
  if (unbatched) return {h_next.squeeze(0), c_next.squeeze(0)};
  return {h_next, c_next};
}

}  // namespace tc::nn
