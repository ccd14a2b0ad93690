// Recurrent cells with PyTorch's parameter names and initialisation: LSTMCell.
#pragma once

#include <optional>
#include <utility>

#include "nn/module.h"

namespace tc::nn {

// One LSTM step: gates = x W_ih^T + b_ih + h W_hh^T + b_hh, split in PyTorch's order
// (input, forget, cell, output); c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c').
// Every weight and bias is uniform in +-1/sqrt(hidden_size); weight_ih (4 hidden, input),
// weight_hh (4 hidden, hidden).
class LSTMCell : public Module {
 public:
  using State = std::pair<Tensor, Tensor>;  // (h, c)
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  // x (batch, input) or unbatched (input); the state (h, c) shaped (batch, hidden) or (hidden),
  // zeros when absent. Returns the new (h, c).
  State forward(const Tensor& x, const std::optional<State>& state);
  // A step from the zero state, returning h (Module's one-argument form).
  Tensor forward(const Tensor& x) override { return forward(x, std::nullopt).first; }
  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;

 private:
  int64_t input_, hidden_;
};

}  // namespace tc::nn
