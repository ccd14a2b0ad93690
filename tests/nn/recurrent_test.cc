// LSTMCell against PyTorch's (tests/fixtures/gen_layers.py): h and c of one step, with a given
// state and from the zero state, and the gradients of the input and every weight; plus the
// unbatched form, the initialisation's range and shape errors.
#include "nn/recurrent.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/nn/module_check.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// The fixture's output is cat(h, c) along the last axis.
Tensor step(tc::nn::LSTMCell& cell, const Tensor& x, std::optional<tc::nn::LSTMCell::State> s) {
  auto [h, c] = cell.forward(x, s);
  return h.cat({c}, -1);
}

TEST(Recurrent, LSTMCellMatchesPyTorch) {
  tc::nn::LSTMCell a(4, 5);
  tcfix::check_module(
      "layers", "lstmcell", a,
      {.train = true,
       .grad_x = true,
       .tol = 1e-5,
       .run = [&](const tcfix::Case& c, const Tensor& x) {
         return step(a, x, tc::nn::LSTMCell::State{c["h0"].tensor(), c["c0"].tensor()});
       }});
  tc::nn::LSTMCell b(3, 2, /*bias=*/false);
  EXPECT_EQ(b.parameters().size(), 2u);
  tcfix::check_module(
      "layers", "lstmcell_nobias_zero_state", b,
      {.train = true, .grad_x = true, .tol = 1e-5, .run = [&](const tcfix::Case&, const Tensor& x) {
         return step(b, x, std::nullopt);
       }});
}

TEST(Recurrent, LSTMCellUnbatchedAndInit) {
  Tensor::manual_seed(1);
  tc::nn::LSTMCell cell(3, 4);
  std::vector<std::string> names;
  for (const auto& [k, v] : cell.state_dict()) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"bias_hh", "bias_ih", "weight_hh", "weight_ih"}));
  EXPECT_EQ(cell.weight_ih.shape(), (tc::Shape{16, 3}));
  EXPECT_EQ(cell.weight_hh.shape(), (tc::Shape{16, 4}));
  for (const Tensor& p : cell.parameters())
    for (float v : p.data<float>()) ASSERT_LE(std::abs(v), 0.5f);  // 1 / sqrt(hidden)
  Tensor x = Tensor::randn({3}), h = Tensor::randn({4}), c = Tensor::randn({4});
  auto [h1, c1] = cell.forward(x, tc::nn::LSTMCell::State{h, c});
  auto [hb, cb] =
      cell.forward(x.unsqueeze(0), tc::nn::LSTMCell::State{h.unsqueeze(0), c.unsqueeze(0)});
  EXPECT_EQ(h1.shape(), (tc::Shape{4}));
  EXPECT_EQ(h1.data<float>(), hb.reshape({4}).data<float>());
  EXPECT_EQ(c1.data<float>(), cb.reshape({4}).data<float>());
  EXPECT_EQ(cell(x.unsqueeze(0)).shape(), (tc::Shape{1, 4}));  // Module form: h from zeros
}

TEST(Recurrent, LSTMCellErrors) {
  tc::nn::LSTMCell cell(3, 4);
  EXPECT_THAT(
      [&] {
        cell(Tensor::ones({2, 5}));
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("LSTMCell: input of shape (2, 5) is not (batch, 3) or (3)")));
  EXPECT_THAT(
      [&] {
        cell.forward(Tensor::ones({2, 3}),
                     tc::nn::LSTMCell::State{Tensor::zeros({2, 4}), Tensor::zeros({1, 4})});
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("LSTMCell: state (h (2, 4), c (1, 4)) for input (2, 3) must both be (2, 4)")));
}

}  // namespace
